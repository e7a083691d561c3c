"""PLACEHOLDER (local directories only) until the sources branch lands."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from shardpy.errors import ShardpyError

ProgressFn = Callable[[str, int, int | None], None]


@dataclass(frozen=True)
class SourceSpec:
    kind: Literal["local", "git", "tarball", "github", "registry", "bundled"]
    location: str
    version: str | None
    ref: str | None
    subdir: str | None
    raw: str

    def display(self) -> str:
        return self.location + (f"//{self.subdir}" if self.subdir else "")

    def with_version(self, version: str | None, ref: str | None = None) -> SourceSpec:
        return replace(self, version=version, ref=ref)


@dataclass(frozen=True)
class Release:
    version: str | None
    tag: str
    prerelease: bool
    commit: str | None


@dataclass
class Resolved:
    spec: SourceSpec
    version: str | None
    tag: str | None
    ref: str | None
    commit: str | None


@dataclass
class Fetched:
    resolved: Resolved
    root: Path
    subdir: str | None
    archive_sha256: str | None
    remote: bool

    def cleanup(self) -> None:
        return None


def parse_source(text: str, *, cwd: Path) -> SourceSpec:
    location, _, subdir = text.partition("//")
    path = (cwd / location).resolve()
    if not path.is_dir():
        raise ShardpyError("SOURCE_NOT_FOUND", f"No such source: {text}", "Give a shard directory.")
    return SourceSpec("local", str(path), None, None, subdir or None, text)


def list_releases(spec: SourceSpec, *, progress: ProgressFn | None = None) -> list[Release]:
    return []


def resolve(spec: SourceSpec, *, include_prerelease: bool = False) -> Resolved:
    return Resolved(spec, None, None, None, None)


def fetch(resolved: Resolved, *, progress: ProgressFn | None = None) -> Fetched:
    return Fetched(resolved, Path(resolved.spec.location), resolved.spec.subdir, None, remote=False)
