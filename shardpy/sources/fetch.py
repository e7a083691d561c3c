"""Resolve a :class:`SourceSpec` to a release or commit, then fetch its tree.

``resolve`` decides *what* (version, tag, commit) and may use the network;
``fetch`` materialises it as a directory. Nothing outside a temp dir and
the download cache is ever written, and every failure removes what it made.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_stream
from shardpy.sources import git, github, registry
from shardpy.sources.archive import extract_to_temp, tree_hash
from shardpy.sources.cache import ArchiveCache, TreeCache
from shardpy.sources.http import download, http_client
from shardpy.sources.layout import refuse_vault
from shardpy.sources.model import Fetched, ProgressFn, Release, Resolved, remove_tree
from shardpy.sources.spec import SourceSpec


def list_releases(spec: SourceSpec, *, progress: ProgressFn | None = None) -> list[Release]:
    """Releases newest first: git tags, GitHub releases (or tags), registry versions; [] otherwise."""
    if progress:
        progress(f"releases of {spec.display()}", 0, None)
    if spec.kind == "git":
        return git.list_releases(spec.location)
    if spec.kind == "github":
        with github.github_client() as client:
            return github.list_releases(client, spec.location)
    if spec.kind == "registry":
        return registry.list_releases(spec)
    return []


def resolve(spec: SourceSpec, *, include_prerelease: bool = False) -> Resolved:
    if spec.kind in ("local", "bundled", "tarball"):
        if spec.version or spec.ref:
            raise ShardpyError(
                "SOURCE_INVALID",
                f"{spec.display()} is a {spec.kind} source: it has no versions or refs",
                "Drop the @version / #ref, or point at a git repository.",
            )
        return Resolved(spec, None, None, None, None)
    if spec.kind == "git":
        if os.path.isdir(spec.location):
            # A checkout on this machine may be an installed vault (its bootstrap ran
            # `git init`): that is said first, not "no releases" (tests/hardening/test_reinstall.py).
            refuse_vault(Path(spec.location))
        return git.resolve(spec, include_prerelease=include_prerelease)
    if spec.kind == "github":
        return github.resolve(
            spec, spec.location, version=spec.version, ref=spec.ref, include_prerelease=include_prerelease
        )
    return registry.resolve(spec, include_prerelease=include_prerelease)


def fetch(resolved: Resolved, *, progress: ProgressFn | None = None) -> Fetched:
    spec = resolved.fetch_spec
    if spec.kind in ("local", "bundled"):
        return _fetch_local(resolved, spec)
    if spec.kind == "tarball":
        return _fetch_tarball(resolved, spec, progress)
    if spec.kind == "git":
        return _fetch_git(resolved, spec, progress)
    if spec.kind == "github":
        return _fetch_github(resolved, spec, progress)
    raise ShardpyError(
        "SOURCE_INVALID",
        f"Cannot fetch a {spec.kind} source that was not resolved",
        "Call resolve() first and fetch its result.",
    )


def _fetch_local(resolved: Resolved, spec: SourceSpec) -> Fetched:
    root = Path(spec.location)
    if not root.is_dir():
        raise ShardpyError(
            "SOURCE_NOT_FOUND",
            f"Source directory {root} does not exist",
            "Check the path.",
            path=str(root),
        )
    if spec.kind == "local":
        refuse_vault(root)
    # No tree hash here: a source folder may hold far more than its shard (a
    # whole repository, a virtualenv); the loader hashes what the shard uses.
    return Fetched(resolved, root, spec.subdir, None, remote=False)


def _from_archive(
    resolved: Resolved, spec: SourceSpec, archive: Path, sha256: str, *, remote: bool
) -> Fetched:
    """The archive's tree. A downloaded one is reused from the tree cache
    (verified, read-only) or extracted into it, so the next command needing
    the same release does not extract it again; a local archive, or any
    archive when the cache is not writable, is extracted to a temp dir."""
    if remote:
        trees = TreeCache()
        root = trees.lookup(sha256) or trees.extract(archive, sha256)
        if root is not None:
            return Fetched(resolved, root, spec.subdir, sha256, remote=remote)
    owned, root = extract_to_temp(archive)
    return Fetched(resolved, root, spec.subdir, sha256, remote=remote, _owned=[owned])


def _fetch_tarball(resolved: Resolved, spec: SourceSpec, progress: ProgressFn | None) -> Fetched:
    if not spec.is_remote:
        archive = Path(spec.location)
        try:
            with open(archive, "rb") as fh:
                sha = sha256_stream(fh)
        except OSError as exc:
            raise ShardpyError(
                "SOURCE_NOT_FOUND",
                f"Cannot read archive {archive}: {exc.strerror or exc}",
                "Check the path.",
                path=str(archive),
            ) from exc
        return _from_archive(resolved, spec, archive, sha, remote=False)

    cache = ArchiveCache()
    key = f"url:{spec.location}"
    cached = cache.lookup(key)
    conditional: dict[str, str] = {}
    if cached is not None:
        entry = cached[1]
        if entry.get("etag"):
            conditional["If-None-Match"] = str(entry["etag"])
        if entry.get("last_modified"):
            conditional["If-Modified-Since"] = str(entry["last_modified"])
    temp = cache.temp_file()
    with http_client() as client:
        result = download(
            client,
            spec.location,
            temp,
            label=spec.location.rsplit("/", 1)[-1],
            progress=progress,
            headers=conditional if cached is not None and conditional else None,
            not_found=ShardpyError(
                "SOURCE_NOT_FOUND",
                f"No archive at {spec.location} (HTTP 404)",
                "Check the URL.",
                details={"url": spec.location},
            ),
        )
    if result.path is None or result.sha256 is None:  # 304: the cached copy is current
        with contextlib.suppress(OSError):
            temp.unlink()
        if cached is None:
            raise ShardpyError(
                "SOURCE_HTTP_ERROR",
                f"{spec.location} answered 'not modified' to a plain request",
                "Try again; the server misbehaved.",
            )
        return _from_archive(resolved, spec, cached[0], str(cached[1]["sha256"]), remote=True)
    stored = cache.store(
        result.path,
        result.sha256,
        key,
        url=spec.location,
        etag=result.etag,
        last_modified=result.last_modified,
    )
    try:
        return _from_archive(resolved, spec, stored, result.sha256, remote=True)
    finally:
        if not cache.is_cached(stored):
            with contextlib.suppress(OSError):
                stored.unlink()


def _fetch_github(resolved: Resolved, spec: SourceSpec, progress: ProgressFn | None) -> Fetched:
    if resolved.commit is None:
        raise ShardpyError(
            "SOURCE_INVALID",
            f"{spec.display()} was not resolved to a commit",
            "Call resolve() first and fetch its result.",
        )
    cache = ArchiveCache()
    archive, sha = github.fetch_archive(spec.location, resolved.commit, cache=cache, progress=progress)
    try:
        return _from_archive(resolved, spec, archive, sha, remote=True)
    finally:
        if not cache.is_cached(archive):
            with contextlib.suppress(OSError):
                archive.unlink()


def _fetch_git(resolved: Resolved, spec: SourceSpec, progress: ProgressFn | None) -> Fetched:
    if resolved.commit is None:
        raise ShardpyError(
            "SOURCE_INVALID",
            f"{spec.display()} was not resolved to a commit",
            "Call resolve() first and fetch its result.",
        )
    parent = Path(tempfile.mkdtemp(prefix="shardpy-src-"))
    try:
        tree = parent / "src"
        git.fetch_tree(spec.location, resolved.commit, resolved.remote_ref, tree, progress=progress)
        digest = tree_hash(tree)
    except BaseException:
        remove_tree(parent)
        raise
    return Fetched(resolved, tree, spec.subdir, digest, remote=spec.is_remote, _owned=[parent])
