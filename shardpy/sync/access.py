"""Files this account may not read: left out of a round's commit, and named when git refuses a
merge over one (tests/sync/test_unreadable.py).

A note another account or ``sudo`` wrote, or a ``chmod 000``, is a real vault's state. git
cannot hash such a file: ``git add -A`` stopped every round for the whole vault ("unable to
index file"), and a merge over it stops with "not uptodate", which the usual hint ("the next
round commits it") does not cure.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.fsutil import printable

__all__ = ["unreadable", "unreadable_refusal"]


def unreadable(root: Path, paths: list[str]) -> list[str]:
    """The regular files among ``paths`` (relative to ``root``) this process may not read. A
    deleted path, a link or a folder is not one (git reads none of them)."""
    out = []
    for rel in paths:
        full = os.path.join(root, rel)
        try:
            regular = stat.S_ISREG(os.lstat(full).st_mode)
        except OSError:
            continue  # gone: its removal is committed
        if regular and not os.access(full, os.R_OK):
            out.append(rel)
    return out


# The files git names when it refuses to merge over local state (C locale: shardpy.gitrun):
# read-tree's "Entry 'P' not uptodate. Cannot merge." and merge's indented list.
_ENTRY = re.compile(r"Entry '(.+)' not uptodate")
_LISTED = re.compile(r"^\t(.+)$", re.MULTILINE)


def unreadable_refusal(said: str, top: Path, remote: str, suspects: list[str]) -> ShardpyError | None:
    """git refused to merge because of a file this account may not read: that, said plainly.
    ``suspects``: the repository paths the round left out as unreadable; ``git merge`` names
    none of them when it cannot stash them ("stash failed")."""
    named = _ENTRY.findall(said) + _LISTED.findall(said)
    if "stash failed" in said:
        named += suspects
    closed = unreadable(top, named)
    if not closed:
        return None
    shown = ", ".join(printable(p) for p in sorted(set(closed)))
    return ShardpyError(
        "SYNC_NOTE_UNREADABLE",
        f"{remote} has changes to merge, and this account may not read {shown} here, so nothing of "
        f"{remote} was merged",
        f"Make it readable (`chmod u+r` it, or `chown` it to this account), then sync again: the "
        f"edits made here and on {remote} then merge. {shown} stays as it is meanwhile.",
    )
