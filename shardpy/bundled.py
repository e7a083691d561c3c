"""The flagship shard that ships inside the package (installs offline)."""

from __future__ import annotations

from pathlib import Path

from shardpy.errors import ShardpyError

BUNDLED_SUBDIR = "shard-template"


def bundled_source_root() -> Path:
    """The source root holding `shard-template/`, `migrations/` and the
    top-level `.shardmindignore`: inside the wheel, or the repository when
    running from a checkout."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_bundled", here.parent):
        if (candidate / BUNDLED_SUBDIR / ".shardmind" / "shard.yaml").is_file():
            return candidate
    raise ShardpyError(
        "BUNDLED_SHARD_MISSING",
        "The flagship shard is missing from this shardpy installation",
        "Reinstall shardpy (pip install --force-reinstall shardpy), or give a SOURCE.",
    )
