"""The user cache folder shardpy keeps downloads, update checks and search indexes in.

``SHARDPY_CACHE_DIR`` when set (tests and sandboxes point it at a temp
folder), else the platform's user cache dir for "shardpy". Kept in its own
module so a caller on a fast path (a hook's one-note index refresh) does not
import the download machinery to learn one path.
"""

from __future__ import annotations

import os
import posixpath
import sys
from pathlib import Path


def cache_dir() -> Path:
    override = os.environ.get("SHARDPY_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    found = _linux_cache_dir()
    if found is not None:
        return Path(found)
    import platformdirs

    return Path(platformdirs.user_cache_dir("shardpy"))


def _linux_cache_dir() -> str | None:
    """platformdirs' answer on Linux in the usual cases, without importing it: it imports tempfile,
    shutil and random, ~6 ms of a one-shot ``shardpy search`` of ~57 (issue 29). An absolute
    ``$XDG_CACHE_HOME``, else an absolute ``$HOME``'s ``.cache``; anything else (a relative one, no
    HOME, another platform) is platformdirs' to answer. tests/hardening/test_cache_dir.py holds this
    to platformdirs' own answer for each case."""
    if not sys.platform.startswith("linux"):
        return None
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    if posixpath.isabs(xdg):
        return posixpath.join(xdg, "shardpy")
    home = os.environ.get("HOME", "")
    if xdg.strip() or not posixpath.isabs(home):
        return None  # a relative XDG_CACHE_HOME (ignored or used, by version), or no usable HOME
    return posixpath.join(home.rstrip("/") + "/.cache", "shardpy")
