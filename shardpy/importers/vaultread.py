"""What planning reads of the vault: a target file's bytes and whether its parents can hold it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from shardpy.fsutil import read_regular


def read_vault_file(vault: Path, rel: str) -> tuple[str, bytes | None, str]:
    """("absent"|"file"|"bad", bytes, reason) for a vault path, never following links."""
    path = f"{vault}/{rel}"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent", None, ""
    except NotADirectoryError:
        return "bad", None, "a parent of this path is a file"
    except OSError as exc:
        return "bad", None, f"cannot inspect: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "bad", None, "the vault path is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "bad", None, "the vault path is not a regular file"
    try:
        # Read without following a link and never blocking: a FIFO or a link put there after the
        # lstat above is refused, not waited on (fsutil.read_regular).
        return "file", read_regular(path), ""
    except OSError as exc:
        return "bad", None, f"unreadable: {exc.strerror or exc}"


def parents_ok(vault: Path, rel: str, cache: dict[str, str]) -> str:
    """Reason a write to ``rel`` would be refused because of its parents, or ''.

    ``cache`` (folder → reason) spares the lstat calls for the many notes of one
    folder while planning; apply checks every parent again when it writes.
    """
    folder = rel.rpartition("/")[0]
    found = cache.get(folder)
    if found is None:
        found = cache[folder] = _parents_problem(vault, rel)
    return found


def _parents_problem(vault: Path, rel: str) -> str:
    current = vault
    parts = rel.split("/")
    for part in parts[:-1]:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return ""
        if stat.S_ISLNK(st.st_mode):
            return f"{current.relative_to(vault).as_posix()} is a symbolic link"
        if not stat.S_ISDIR(st.st_mode):
            return f"{current.relative_to(vault).as_posix()} is not a folder"
    return ""
