"""Resolve, fetch and load a shard from whatever the user typed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from shardpy.shard.loader import Shard, load_shard
from shardpy.shard.produce import Production
from shardpy.shard.walk import SourceFile
from shardpy.sources import Fetched, ProgressFn, SourceSpec, bundled_source, fetch, parse_source, resolve

if TYPE_CHECKING:
    from shardpy.flows.copierprep import CopierPrepared


@dataclass
class Prepared:
    spec: SourceSpec
    fetched: Fetched
    shard: Shard

    # A copier template writes its own answers file instead (flows/copierprep.py).
    writes_values_file: ClassVar[bool] = True

    def as_copier(self) -> CopierPrepared | None:
        """This source as a copier template (flows/copierprep.py), or None for a shard:
        asked instead of isinstance so a shard's commands never import copier's flow."""
        return None

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
        included = [k for k, v in modules.items() if v == "included"]
        return self.shard.produce(values, included, install_date, files=files, read=read)

    def values_to_record(self, values: dict[str, Any]) -> dict[str, Any]:
        """The values state and the values file keep."""
        return values

    def after_apply(self, dest: Path, *, trust: bool, no_hooks: bool, warnings: list[str]) -> None:
        """Source-specific work after the transaction (a copier template's tasks)."""

    def cleanup(self) -> None:
        """Remove scratch trees this source made while rendering."""

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
    from shardpy.sources import prefetch

    if prefetch.pending():
        _preload()
    resolved = prefetch.take(spec, include_prerelease=include_prerelease, progress=progress) or resolve(
        spec, include_prerelease=include_prerelease
    )
    fetched = fetch(resolved, progress=progress)
    prep: Prepared | None = None
    try:
        prep = _load(spec, fetched)
        yield prep
    finally:
        if prep is not None:
            prep.cleanup()
        fetched.cleanup()


def _preload() -> None:
    """Import what loading and rendering a shard will need (YAML, ignore patterns,
    the sandboxed Jinja) while the early-fetch child finishes: otherwise idle time."""
    import jinja2.sandbox  # noqa: F401
    import pathspec  # noqa: F401
    import ruamel.yaml  # noqa: F401


def _load(spec: SourceSpec, fetched: Fetched) -> Prepared:
    """A shard, or a copier template (copier.yml and no .shardmind/) at the source root."""
    from shardpy.sources.layout import is_copier_template

    root = fetched.root / spec.subdir if spec.subdir else fetched.root
    if is_copier_template(root):
        from shardpy.flows.copierprep import prepare_copier

        return prepare_copier(spec, fetched, root)
    return Prepared(spec, fetched, load_shard(fetched.root, fetched.shard_root()))
