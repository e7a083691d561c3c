"""Shard sources: parse what the user typed, resolve it, fetch a source tree.

    spec = parse_source("github:owner/repo@1.2.0", cwd=Path.cwd())
    resolved = resolve(spec)                 # version, tag, commit
    with fetch(resolved) as fetched:         # a directory; temp dirs removed on exit
        shard_root = fetched.shard_root()

Importing this package is cheap: httpx is imported only when a download runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardpy.sources.fetch import fetch, list_releases, resolve
from shardpy.sources.layout import find_shard_root, ignore_chain, migrations_dir
from shardpy.sources.model import Fetched, ProgressFn, Release, Resolved
from shardpy.sources.spec import SourceSpec, bundled_source, parse_text

if TYPE_CHECKING:
    from pathlib import Path


def parse_source(text: str, *, cwd: Path) -> SourceSpec:
    """The source the user typed. A git checkout named without a version or ref is the
    release tagged at its HEAD, else its branch, else its commit (``git.checkout_spec``)."""
    spec = parse_text(text, cwd=cwd)
    if not spec.at_checkout:
        return spec
    from shardpy.sources.git import checkout_spec  # git runs only for a checkout

    return checkout_spec(spec.location, spec.subdir, spec.raw)


__all__ = [
    "Fetched",
    "ProgressFn",
    "Release",
    "Resolved",
    "SourceSpec",
    "bundled_source",
    "fetch",
    "find_shard_root",
    "ignore_chain",
    "list_releases",
    "migrations_dir",
    "parse_source",
    "resolve",
]
