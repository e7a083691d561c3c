"""Choosing a release among tags: pure functions shared by git, GitHub and the registry."""

from __future__ import annotations

from collections.abc import Iterable

import semver

from shardpy.errors import ShardpyError
from shardpy.sources.model import Release
from shardpy.versions import version_from_tag


def make_release(tag: str, *, prerelease: bool = False, commit: str | None = None) -> Release:
    """A release for ``tag``; a semver prerelease tag is a prerelease whatever the flag says."""
    parsed = version_from_tag(tag)
    if parsed is None:
        return Release(version=None, tag=tag, prerelease=prerelease, commit=commit)
    return Release(
        version=str(parsed), tag=tag, prerelease=prerelease or parsed.prerelease is not None, commit=commit
    )


def _semver(release: Release) -> semver.Version | None:
    return None if release.version is None else semver.Version.parse(release.version)


def sort_releases(releases: Iterable[Release]) -> list[Release]:
    """Newest semver first (a ``v`` tag before a bare one of the same version), then other tags by name."""
    items = list(releases)
    with_version = [(v, r) for r in items if (v := _semver(r)) is not None]
    with_version.sort(key=lambda pair: (pair[0], pair[1].tag.startswith("v")), reverse=True)
    others = sorted((r for r in items if r.version is None), key=lambda r: r.tag)
    return [r for _, r in with_version] + others


def pick_latest(releases: Iterable[Release], *, include_prerelease: bool = False) -> Release | None:
    for release in sort_releases(releases):
        if release.version is not None and (include_prerelease or not release.prerelease):
            return release
    return None


def candidate_tags(version: str) -> list[str]:
    """Tags ``@version`` may name, in order: ``v<version>``, then the tag as written."""
    return [version] if version.startswith("v") and version_from_tag(version) else [f"v{version}", version]


def find_pinned(releases: Iterable[Release], version: str) -> Release | None:
    """The release ``@version`` names: a tag spelled as given (with or without
    ``v``), else the release of the same version however its tag is spelled
    (``5.1`` finds ``v5.1``; ``5.1.0`` finds ``v5.1``), a ``v`` tag first."""
    items = sort_releases(releases)
    by_tag = {r.tag: r for r in items}
    for tag in candidate_tags(version):
        if tag in by_tag:
            return by_tag[tag]
    wanted = version_from_tag(version)
    if wanted is None:
        return None
    return next((r for r in items if r.version == str(wanted)), None)


def release_version(release: Release) -> str:
    return release.version if release.version is not None else release.tag


def available_versions(releases: Iterable[Release], *, limit: int = 12) -> list[str]:
    return [release_version(r) for r in sort_releases(releases)][:limit]


def version_not_found(source: str, version: str, releases: Iterable[Release]) -> ShardpyError:
    available = available_versions(releases, limit=50)
    shown = ", ".join(available[:12]) + (" …" if len(available) > 12 else "")
    return ShardpyError(
        "SOURCE_VERSION_NOT_FOUND",
        f"{source} has no version {version!r}"
        + (f"; available: {shown}" if available else " and no releases at all"),
        "Pick one of the available versions, or install a branch or commit with #ref."
        if available
        else "Install a branch or commit with #ref.",
        details={"version": version, "available": available},
    )


def no_releases(source: str, releases: Iterable[Release]) -> ShardpyError:
    prereleases = [release_version(r) for r in sort_releases(releases) if r.prerelease]
    hint = "Install a branch or commit with #ref (for example #main)."
    if prereleases:
        hint = (
            f"Only prereleases exist ({', '.join(prereleases[:5])}): add --include-prerelease, or use #ref."
        )
    return ShardpyError(
        "SOURCE_NO_RELEASES",
        f"{source} has no stable release (no semver tag such as v1.0.0)",
        hint,
        details={"prereleases": prereleases},
    )
