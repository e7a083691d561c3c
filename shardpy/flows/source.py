"""Resolve, fetch and load a shard from whatever the user typed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shardpy.shard.loader import Shard, load_shard
from shardpy.sources import Fetched, ProgressFn, SourceSpec, fetch, parse_source, resolve
from shardpy.sources.layout import find_shard_root


@dataclass
class Prepared:
    spec: SourceSpec
    fetched: Fetched
    shard: Shard

    @property
    def remote(self) -> bool:
        return self.fetched.remote

    @property
    def version(self) -> str:
        return self.shard.manifest.version


def bundled_spec() -> SourceSpec:
    from shardpy.bundled import BUNDLED_SUBDIR, bundled_source_root

    root = bundled_source_root()
    return SourceSpec("bundled", str(root), None, None, BUNDLED_SUBDIR, "(bundled)")


def spec_for(text: str | None, *, cwd: Path) -> SourceSpec:
    return bundled_spec() if text is None else parse_source(text, cwd=cwd)


@contextlib.contextmanager
def prepared(
    spec: SourceSpec, *, include_prerelease: bool = False, progress: ProgressFn | None = None
) -> Iterator[Prepared]:
    """Fetch and load a shard; temporary downloads are removed afterwards."""
    resolved = resolve(spec, include_prerelease=include_prerelease)
    fetched = fetch(resolved, progress=progress)
    try:
        shard_root = find_shard_root(fetched.root, fetched.subdir)
        yield Prepared(spec, fetched, load_shard(fetched.root, shard_root))
    finally:
        fetched.cleanup()
