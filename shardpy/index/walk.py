"""Find the notes the index covers: the one walker and the one rule (shardpy/notes/visibility.py).

Entries are examined with ``lstat`` semantics: a link is reported and never entered or read, so a
note replaced by a link to ``/etc/passwd`` drops out of the index and its target is never opened.
"""

from __future__ import annotations

import stat
from pathlib import Path

from shardpy.index.config import IndexConfig
from shardpy.notes.visibility import LINK_REASON, lookup
from shardpy.notes.visibility import walk as walk_vault

__all__ = ["LINK_REASON", "Stat", "check_one", "walk"]

Stat = tuple[int, int]  # (mtime_ns, size)


def walk(
    root: Path, cfg: IndexConfig, folders: list[str] | None = None
) -> tuple[dict[str, Stat], list[tuple[str, str]]]:
    """Every note the index covers: vault path -> (mtime_ns, size); plus (path, reason) skips.
    ``folders`` receives every folder walked ("" for the root), for the staleness check."""
    found: dict[str, Stat] = {}
    skipped: list[tuple[str, str]] = []
    for note in walk_vault(root, cfg.rule, cfg.rule.is_note, folders=folders, problems=skipped):
        rel, _path, st = note
        if stat.S_ISREG(st.st_mode):
            found[rel] = (st.st_mtime_ns, st.st_size)
        elif stat.S_ISLNK(st.st_mode):
            skipped.append((rel, LINK_REASON))
    return found, skipped


def check_one(root: Path, rel: str, cfg: IndexConfig) -> tuple[Stat | None, str | None]:
    """(stat, None) when ``rel`` is a note the index covers; (None, reason-or-None) otherwise: the
    walk's rules applied to one path (visibility.lookup)."""
    st, reason = lookup(root, rel, cfg.rule)
    return (None, reason) if st is None else ((st.st_mtime_ns, st.st_size), None)
