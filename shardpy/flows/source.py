"""Resolve, fetch and load a shard from whatever the user typed."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from shardpy.shard.loader import Shard, load_shard
from shardpy.sources import Fetched, ProgressFn, SourceSpec, bundled_source, fetch, parse_source, resolve


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

    return bundled_source(bundled_source_root(), subdir=BUNDLED_SUBDIR)


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
        yield Prepared(spec, fetched, load_shard(fetched.root, fetched.shard_root()))
    finally:
        fetched.cleanup()
