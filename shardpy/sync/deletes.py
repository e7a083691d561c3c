"""Soft delete and purge: ``shardpy rm NOTE``, ``shardpy restore NOTE``, ``shardpy purge``.

A note is never removed by ``rm``: it gets ``disabled: true`` and
``disabled_at: <UTC time>`` in its frontmatter — ordinary scalar keys, so the
next sync stamps them and a delete on one machine and an edit on another
merge by the revision stamps on a note that is still there (docs/GIT.md,
"Deletes"). ``restore`` removes both keys. ``purge --older-than DAYS`` really
deletes the notes disabled longer than that, in a commit of its own whose
message lists each one (``shardpy-purge: PATH``): the record a sync reads
when another machine still edited a purged note — the edit is kept (nothing
is lost) and the round says so, never silently.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.notes.keylines import set_key
from shardpy.plan.purge import PurgePlan, disabled_since
from shardpy.plan.purge import plan_purge as _plan
from shardpy.vault.disabled import DISABLED, DISABLED_AT

__all__ = ["PURGE_TRAILER", "plan_purge", "purge", "set_disabled"]

PURGE_TRAILER = "shardpy-purge:"


def _note_path(vault: Path, note: str) -> str:
    """The vault-relative path of ``note`` (a path from here, or from the vault's top)."""
    from shardpy.vault.layout import SIDECAR

    candidates = [Path(note), vault / note]
    for c in candidates:
        path = c if c.is_absolute() else Path.cwd() / c
        try:
            rel = path.absolute().relative_to(vault.absolute()).as_posix()
        except ValueError:
            continue
        if rel.endswith(".md") and path.is_file() and not path.is_symlink() and SIDECAR not in rel.split("/"):
            return rel
    raise ShardpyError(
        "NOTE_NOT_FOUND",
        f"No note {note!r} in the vault",
        "Give the note's path (with .md), from here or from the vault's top.",
    )


def _edit(text: str, changes: dict[str, str | None]) -> str:
    """``text`` with each key set to its YAML line value (None: removed); a block added if needed,
    and removed again when a restore leaves it empty. The note keeps its BOM and line ends
    (notes/written.py): read as text, a CRLF note was rewritten LF in every line."""
    from shardpy.merge.frontmatter import split_frontmatter
    from shardpy.notes.written import Written

    read = Written.read(text)
    if read is None:
        raise ShardpyError(
            "NOTE_NOT_EDITABLE",
            "This note mixes line endings (CRLF and LF); rm and restore would rewrite its lines",
            "Set the key `disabled: true` (or remove it) by hand.",
        )
    plain, written = read
    fm, rest = split_frontmatter(plain)
    if fm is not None and not fm.block.startswith("---\n" + fm.inner):
        raise ShardpyError(
            "NOTE_NOT_EDITABLE",
            "The note's frontmatter does not start the usual way (blank lines after the opener)",
            "Set the key `disabled: true` (or remove it) by hand.",
        )
    inner = fm.inner if fm is not None else ""
    closing = fm.block[4 + len(fm.inner) :] if fm is not None else "---\n"
    for key, value in changes.items():
        edited = set_key(inner, key, value)
        if edited is None:
            raise ShardpyError(
                "NOTE_NOT_EDITABLE",
                "The note's frontmatter cannot be edited key by key (an unusual layout)",
                f"Set the key `{key}` by hand.",
            )
        inner = edited
    if not inner.strip() and closing == "---\n":
        return written.write(rest)  # nothing left of the block: the note as it was before `rm`
    return written.write("---\n" + inner + closing + rest)


def _text(vault: Path, rel: str) -> str:
    """The note as written (bytes decoded: reading it as text turned CRLF into LF), read as the
    vault's notes are read: never through a linked folder (whose write would be refused anyway),
    never a FIFO (fsutil.safe_target, read_regular)."""
    from shardpy.fsutil import read_regular, safe_target

    try:
        return read_regular(safe_target(vault, rel)).decode("utf-8")
    except UnicodeDecodeError as exc:  # a traceback before (tests/sync/test_deletes.py)
        raise ShardpyError(
            "NOTE_NOT_EDITABLE",
            f"This note is not UTF-8 text (byte {exc.start})",
            "Save it as UTF-8 in your editor, or set the key `disabled: true` by hand.",
        ) from exc


def set_disabled(vault: Path, note: str, disabled: bool) -> dict[str, Any]:
    """``rm`` (disabled) or ``restore``: one note's two keys, through one transaction."""
    from shardpy.apply.session import session
    from shardpy.apply.transaction import Op

    with session(vault, "rm" if disabled else "restore") as writer:  # issue 27: the one write session
        rel = _note_path(vault, note)
        text = _text(vault, rel)
        if (disabled_since(text) is not None) == disabled:
            return {"note": rel, "disabled": disabled, "changed": False}
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        changes: dict[str, str | None] = (
            {DISABLED: "true", DISABLED_AT: now} if disabled else {DISABLED: None, DISABLED_AT: None}
        )
        writer.run([Op.write(rel, _edit(text, changes).encode())], label="rm" if disabled else "restore")
    return {"note": rel, "disabled": disabled, "changed": True}


def plan_purge(vault: Path, days: float) -> PurgePlan:
    """The tracked notes disabled more than ``days`` ago (reads only; plan/purge.py decides)."""
    from shardpy.gitsync.repo import git

    listed = git(["ls-files", "-z", "--", "*.md"], vault).stdout.split("\0")
    return _plan(str(vault), days, _texts(vault, sorted(p for p in listed if p)), datetime.now(UTC))


def _texts(vault: Path, listed: list[str]) -> Iterator[tuple[str, str]]:
    """Each listed note's text (a link, a folder or an unreadable file left out)."""
    for rel in listed:
        path = vault / rel
        if path.is_symlink() or not path.is_file():
            continue
        try:
            yield rel, path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue


def purge(plan: PurgePlan, machine: str) -> str | None:
    """Delete the plan's notes and commit that alone, the purge recorded in the message."""
    from shardpy.apply.session import session
    from shardpy.apply.transaction import Op
    from shardpy.gitsync.repo import git

    if not plan.notes:
        return None
    vault = Path(plan.vault)
    with session(vault, "purge") as writer:  # issue 27: the one write session
        writer.run([Op.delete(rel) for rel in plan.notes], label="purge")
        git(["add", "-A", "--", *plan.notes], vault)
        lines = "\n".join(f"{PURGE_TRAILER} {rel}" for rel in plan.notes)
        message = (
            f"purge ({machine}): {len(plan.notes)} note(s) disabled over {plan.days:g} days\n\n{lines}\n"
        )
        git(["commit", "--quiet", "-m", message, "--", *plan.notes], vault)
        return git(["rev-parse", "HEAD"], vault).stdout.strip()
