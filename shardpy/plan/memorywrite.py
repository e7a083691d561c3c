"""The MCP server's write plan: one new note (a memory, or a work note) and the memories it
supersedes, rewritten (issue 27: serve's plan beside every other plan).

Pure over a :class:`WriteView`: :func:`write_ops` is asked with the vault lock held (the write
session), so a note is created only if its path is still free then, and a superseded memory is
rewritten only if it still holds the bytes the plan read (tests/serve/test_writes.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from shardpy.apply.transaction import Op
from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_bytes
from shardpy.notes.frontmatter import render_block, split_fences, split_frontmatter

# A served write's word in the one vocabulary (plan/actions.py): the new note, each rewrite.
MemoryAction = Literal["create", "update"]


class WriteView(Protocol):
    """Every fact about the vault the check before writing may use."""

    def taken(self, path: str) -> bool:
        """Something (a file, a folder, a link) is at ``path``."""
        ...

    def current(self, path: str) -> bytes:
        """The bytes at ``path`` (b"" when it cannot be read)."""
        ...


@dataclass(frozen=True, slots=True)
class Rewrite:
    path: str
    expected_sha: str
    data: bytes

    @property
    def action(self) -> MemoryAction:
        return "update"

    @property
    def target(self) -> str:
        return self.path


@dataclass(frozen=True, slots=True)
class WritePlan:
    label: str
    create: str  # the new note's vault path
    data: bytes
    rewrites: tuple[Rewrite, ...] = ()

    @property
    def action(self) -> MemoryAction:
        return "create"

    @property
    def target(self) -> str:
        return self.create


def sha(data: bytes) -> str:
    return sha256_bytes(data)


def mark_superseded(path: str, current: bytes, by: str) -> Rewrite:
    """The old memory with ``superseded_by: "[[by]]"`` added to its frontmatter; its body, its BOM
    and every other byte are kept (tests/serve/test_supersede_bytes.py)."""
    try:
        text = current.decode("utf-8")
    except UnicodeDecodeError as exc:  # SERVE_INTERNAL before
        raise ShardpyError(
            "SERVE_SUPERSEDES_INVALID",
            f"{path} is not UTF-8 text (byte {exc.start}), so it cannot be marked superseded",
            "Save it as UTF-8, or remember without supersedes.",
            path=path,
        ) from exc
    bom = "\ufeff" if text.startswith("\ufeff") else ""
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
    return Rewrite(path, sha(current), (bom + block + body).encode("utf-8"))


def write_ops(plan: WritePlan, view: WriteView) -> list[Op]:
    """The plan's operations, or a refusal (nothing written) when the vault moved under it."""
    if view.taken(plan.create):
        raise ShardpyError(
            "SERVE_NOTE_EXISTS",
            f"{plan.create} already exists",
            "Choose another title (or supersede the existing memory).",
            path=plan.create,
        )
    for rw in plan.rewrites:
        if sha(view.current(rw.path)) != rw.expected_sha:
            raise ShardpyError(
                "SERVE_WRITE_RACE",
                f"{rw.path} changed while this call was being planned",
                "Call again: nothing was written.",
                path=rw.path,
            )
    return [Op.write(plan.create, plan.data)] + [Op.write(rw.path, rw.data) for rw in plan.rewrites]
