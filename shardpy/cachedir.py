"""The user's shardpy cache folder (downloads, update checks); no heavy imports,
so status can read from it quickly."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    override = os.environ.get("SHARDPY_CACHE_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("shardpy"))
