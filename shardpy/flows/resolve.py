"""Resolve, fetch and load a source of whatever kind the user typed (the spine's first stage).

Here, not in ``flows/source.py``: the protocol every kind answers (``Prepared``) lives there, and
each kind's adapter (``flows/copierprep.py``) imports it, so the one place that chooses the kind
imports the adapters without a cycle (issue 27; tests/test_no_cycles.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from shardpy.flows.source import Prepared
from shardpy.shard.loader import load_shard
from shardpy.sources import Fetched, ProgressFn, SourceSpec, bundled_source, fetch, parse_source, resolve


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
