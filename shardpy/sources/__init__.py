"""Shard sources: parse what the user typed, resolve it, fetch a source tree.

    spec = parse_source("github:owner/repo@1.2.0", cwd=Path.cwd())
    resolved = resolve(spec)                 # version, tag, commit
    with fetch(resolved) as fetched:         # a directory; temp dirs removed on exit
        shard_root = fetched.shard_root()

Importing this package is cheap: httpx is imported only when a download runs.
"""

from shardpy.sources.fetch import fetch, list_releases, resolve
from shardpy.sources.layout import find_shard_root, ignore_chain, migrations_dir
from shardpy.sources.model import Fetched, ProgressFn, Release, Resolved
from shardpy.sources.spec import SourceSpec, bundled_source, parse_source

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
