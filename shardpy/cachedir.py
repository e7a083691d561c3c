"""The user cache folder shardpy keeps downloads, update checks and search indexes in.

``SHARDPY_CACHE_DIR`` when set (tests and sandboxes point it at a temp
folder), else the platform's user cache dir for "shardpy". Kept in its own
module so a caller on a fast path (a hook's one-note index refresh) does not
import the download machinery to learn one path.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    override = os.environ.get("SHARDPY_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("shardpy"))
