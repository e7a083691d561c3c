"""Writing from the server: one memory (with the memories it supersedes) or one work note.

Every write is one :class:`~shardpy.apply.transaction.Transaction` under the
vault lock: a new note is created only if its path is still free once the
lock is held (so two servers writing the same title never both succeed and
never tear a file), and a superseded memory is rewritten only if it still
holds the bytes the plan read.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from shardpy.apply.transaction import Op, Transaction, interrupted, recover
from shardpy.errors import ShardpyError
from shardpy.frontmatter import render_block, split_fences, split_frontmatter
from shardpy.vault.lock import vault_lock

LOCK_WAIT = 10.0  # seconds a write queues behind another before VAULT_LOCKED


@dataclass(frozen=True, slots=True)
class Rewrite:
    path: str
    expected_sha: str
    data: bytes


@dataclass(frozen=True, slots=True)
class WritePlan:
    label: str
    create: str  # the new note's vault path
    data: bytes
    rewrites: tuple[Rewrite, ...] = ()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mark_superseded(path: str, current: bytes, by: str) -> Rewrite:
    """The old memory with ``superseded_by: "[[by]]"`` added to its frontmatter; its body is kept."""
    text = current.decode("utf-8")
    fences = split_fences(text)
    if fences is None:
        raise ShardpyError(
            "SERVE_SUPERSEDES_INVALID",
            f"{path} has no frontmatter to mark superseded",
            "Fix the memory's frontmatter, or remember without supersedes.",
            path=path,
        )
    fm_text, body, newline = fences
    data = split_frontmatter(text).data
    block = render_block(fm_text, data, [("superseded_by", f"[[{by}]]")], newline)
    return Rewrite(path, sha(current), (block + body).encode("utf-8"))


def apply_plan(vault: Path, plan: WritePlan) -> None:
    """Apply ``plan`` atomically; refuse (writing nothing) when the vault moved under it."""
    with vault_lock(vault, command=f"serve {plan.label}", wait=LOCK_WAIT):
        if interrupted(vault):
            recover(vault)
        if (vault / plan.create).exists() or (vault / plan.create).is_symlink():
            raise ShardpyError(
                "SERVE_NOTE_EXISTS",
                f"{plan.create} already exists",
                "Choose another title (or supersede the existing memory).",
                path=plan.create,
            )
        for rw in plan.rewrites:
            try:
                now = (vault / rw.path).read_bytes()
            except OSError:
                now = b""
            if sha(now) != rw.expected_sha:
                raise ShardpyError(
                    "SERVE_WRITE_RACE",
                    f"{rw.path} changed while this call was being planned",
                    "Call again: nothing was written.",
                    path=rw.path,
                )
        ops = [Op.write(plan.create, plan.data)] + [Op.write(rw.path, rw.data) for rw in plan.rewrites]
        Transaction(vault, f"serve-{plan.label}").run(ops)
