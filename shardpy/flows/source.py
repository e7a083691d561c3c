"""Resolve, fetch and load a shard from whatever the user typed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from shardpy.shard.loader import Shard, load_shard
from shardpy.shard.produce import Production, produce
from shardpy.shard.render import RenderContext
from shardpy.shard.walk import SourceFile
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

    @cached_property
    def archive_sha256(self) -> str | None:
        """What identifies this release's content: the downloaded archive's
        hash, or for a local folder the hash of what its shard uses."""
        if self.spec.kind in ("local", "bundled"):
            return self.shard.content_hash()
        return self.fetched.archive_sha256

    def render(
        self,
        values: dict[str, Any],
        modules: dict[str, str],
        install_date: str,
        *,
        files: list[SourceFile] | None = None,
        read: Callable[[str], bytes] | None = None,
    ) -> Production:
        """Every output of this shard for these answers (the one render path);
        ``files`` / ``read``: some of its sources, read from elsewhere (a clone's copy)."""
        m = self.shard.manifest
        included = [k for k, v in modules.items() if v == "included"]
        ctx = RenderContext(values, included, m.name, m.namespace, m.version, install_date)
        return produce(self.shard.files if files is None else files, read or self.shard.read, ctx, included)

    def module_counts(self) -> dict[str, int]:
        """Files per module, for the module review."""
        counts: dict[str, int] = {}
        for f in self.shard.files:
            if f.module is not None:
                counts[f.module] = counts.get(f.module, 0) + 1
        return counts


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
