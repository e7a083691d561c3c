"""What resolving and fetching a source produce."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from shardpy.sources.spec import SourceSpec

ProgressFn = Callable[[str, int, int | None], None]
"""``(label, done_bytes, total_bytes_or_None)``; the CLI draws the bar."""


@dataclass(frozen=True)
class Release:
    version: str | None  # semver (no "v") when the tag is a semver tag
    tag: str
    prerelease: bool
    commit: str | None


@dataclass
class Resolved:
    spec: SourceSpec
    version: str | None  # release version (semver without "v", or the tag as written); None for dirs/refs
    tag: str | None
    ref: str | None  # branch/tag/commit as the user gave it with "#"
    commit: str | None  # full commit sha (git, github, registry)
    # For a registry source: the github spec it resolved through (version/ref filled in).
    upstream: SourceSpec | None = None
    # For git: the full remote ref name (refs/tags/v1.0.0, refs/heads/main) to fetch shallowly.
    remote_ref: str | None = None

    @property
    def fetch_spec(self) -> SourceSpec:
        """The spec that is actually fetched (the github repo behind a registry name)."""
        return self.upstream or self.spec


@dataclass
class Fetched:
    resolved: Resolved
    root: Path  # the source root (temp extraction or checkout; for local sources the directory itself)
    subdir: str | None
    archive_sha256: str | None  # hash of the downloaded archive, or a tree hash (local dirs, git checkouts)
    remote: bool  # fetched over the network: hooks then need consent
    _owned: list[Path] = field(default_factory=list, repr=False)

    def shard_root(self) -> Path:
        """The directory holding ``.shardmind/shard.yaml`` (see layout.find_shard_root)."""
        from shardpy.sources.layout import find_shard_root

        return find_shard_root(self.root, self.subdir)

    def cleanup(self) -> None:
        """Remove the temporary directories this fetch created (never a user's directory)."""
        while self._owned:
            remove_tree(self._owned.pop())

    def __enter__(self) -> Fetched:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cleanup()


def remove_tree(path: Path) -> None:
    """rmtree that also clears read-only bits (extracted or checked-out trees may have them)."""

    def _retry(func: Callable[..., Any], target: str, _exc: Any) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(target), stat.S_IRWXU)
            if not os.path.islink(target):
                os.chmod(target, stat.S_IRWXU)
            func(target)

    if not os.path.lexists(path):
        return
    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=_retry)
    else:
        shutil.rmtree(path, onerror=_retry)
