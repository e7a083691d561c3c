"""Find the notes of a vault without following a single symbolic link.

Entries are examined with ``lstat`` semantics (``DirEntry.is_dir`` /
``is_file`` with ``follow_symlinks=False``): a link is reported and never
entered or read, so a note replaced by a link to ``/etc/passwd`` drops out of
the index and its target is never opened.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from shardpy.index.config import NOTE_SUFFIXES, IndexConfig

Stat = tuple[int, int]  # (mtime_ns, size)
LINK_REASON = "symbolic link (not followed)"


def walk(
    root: Path, cfg: IndexConfig, folders: list[str] | None = None
) -> tuple[dict[str, Stat], list[tuple[str, str]]]:
    """Every note the index covers: vault path -> (mtime_ns, size); plus (path, reason) skips.
    ``folders`` receives every folder walked ("" for the root), for the staleness check."""
    found: dict[str, Stat] = {}
    skipped: list[tuple[str, str]] = []
    stack: list[tuple[str, str]] = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        if folders is not None:
            folders.append(prefix.rstrip("/"))
        try:
            entries = list(os.scandir(folder))
        except OSError as exc:
            skipped.append((prefix.rstrip("/") or ".", f"folder not readable: {exc.strerror or exc}"))
            continue
        for entry in entries:
            _visit(entry, prefix, cfg, found, skipped, stack)
    return found, skipped


def _visit(
    entry: os.DirEntry[str],
    prefix: str,
    cfg: IndexConfig,
    found: dict[str, Stat],
    skipped: list[tuple[str, str]],
    stack: list[tuple[str, str]],
) -> None:
    name = entry.name
    if name.startswith("."):
        return  # dot-folders and dotfiles: skipped before any other test
    rel = prefix + name
    try:
        if entry.is_dir(follow_symlinks=False):
            if not cfg.skip_dir(rel, name):
                stack.append((entry.path, rel + "/"))
            return
        if not name.lower().endswith(NOTE_SUFFIXES) or cfg.skip_file(rel, name):
            return
        if entry.is_symlink():
            skipped.append((rel, LINK_REASON))
            return
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        skipped.append((rel, f"not readable: {exc.strerror or exc}"))
        return
    if stat.S_ISREG(st.st_mode):
        found[rel] = (st.st_mtime_ns, st.st_size)


def check_one(root: Path, rel: str, cfg: IndexConfig) -> tuple[Stat | None, str | None]:
    """(stat, None) when ``rel`` is a note the index covers; (None, reason-or-None) otherwise.

    Applies the walk's rules to one path: every folder on the way must be a
    real folder the walk would enter (no link), the file itself a regular file.
    """
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return None, "not a vault path"
    current = root
    for k, part in enumerate(parts[:-1]):
        current = current / part
        if cfg.skip_dir("/".join(parts[: k + 1]), part):
            return None, None
        try:
            st = os.lstat(current)
        except OSError:
            return None, None
        if not stat.S_ISDIR(st.st_mode):
            return None, LINK_REASON if stat.S_ISLNK(st.st_mode) else None
    if cfg.skip_file(rel, parts[-1]):
        return None, None
    try:
        st = os.lstat(current / parts[-1])
    except OSError:
        return None, None
    if stat.S_ISLNK(st.st_mode):
        return None, LINK_REASON
    if not stat.S_ISREG(st.st_mode):
        return None, None
    return (st.st_mtime_ns, st.st_size), None
