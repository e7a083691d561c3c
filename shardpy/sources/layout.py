"""PLACEHOLDER until the sources branch lands."""

from __future__ import annotations

from pathlib import Path

from shardpy.errors import ShardpyError


def find_shard_root(source_root: Path, subdir: str | None) -> Path:
    if subdir:
        return source_root / subdir
    if (source_root / ".shardmind" / "shard.yaml").is_file():
        return source_root
    hits = [p for p in sorted(source_root.iterdir()) if (p / ".shardmind" / "shard.yaml").is_file()]
    if len(hits) == 1:
        return hits[0]
    raise ShardpyError("SHARD_MANIFEST_MISSING", "no shard", "")
