"""``github:owner/repo`` sources through the GitHub REST API.

Resolution always ends at a commit sha (``/commits/<ref>``) and the
archive is downloaded as ``/tarball/<sha>``, so the download cache can key
on an immutable commit and a repeat install never downloads twice.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from shardpy.errors import ShardpyError
from shardpy.sources.cache import ArchiveCache
from shardpy.sources.http import download, get_json, http_client, http_error
from shardpy.sources.model import ProgressFn, Release, Resolved
from shardpy.sources.releases import (
    candidate_tags,
    find_pinned,
    make_release,
    no_releases,
    pick_latest,
    release_version,
    sort_releases,
    version_not_found,
)
from shardpy.sources.spec import SourceSpec

if TYPE_CHECKING:
    import httpx

DEFAULT_API_BASE = "https://api.github.com"
MAX_PAGES = 10


def api_base() -> str:
    return (os.environ.get("SHARDPY_GITHUB_API_BASE") or DEFAULT_API_BASE).rstrip("/")


def api_headers() -> dict[str, str]:
    headers = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
    token = os.environ.get("GITHUB_TOKEN", "").strip()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return headers


@contextlib.contextmanager
def github_client() -> Iterator[httpx.Client]:
    # httpx drops Authorization when a redirect leaves the API's origin
    # (the tarball redirect to codeload), so the token is never leaked.
    with http_client(api_headers()) as client:
        yield client


def _repo_url(repo: str, *rest: str) -> str:
    return "/".join([api_base(), "repos", repo, *rest])


def repo_not_found(repo: str) -> ShardpyError:
    private = " (a private repository needs GITHUB_TOKEN)" if not os.environ.get("GITHUB_TOKEN") else ""
    return ShardpyError(
        "SOURCE_NOT_FOUND",
        f"GitHub repository {repo} not found{private}",
        "Check the owner/repo spelling; for a private repository set GITHUB_TOKEN.",
        details={"repo": repo},
    )


def _json(response: httpx.Response, what: str) -> Any:
    try:
        return response.json()
    except ValueError as exc:
        raise ShardpyError(
            "SOURCE_HTTP_ERROR",
            f"{what}: the server did not answer with JSON",
            "Check SHARDPY_GITHUB_API_BASE points at a GitHub API.",
            details={"url": str(response.request.url)},
        ) from exc


def _paged(client: httpx.Client, url: str, repo: str, what: str) -> list[Any]:
    items: list[Any] = []
    next_url: str | None = url
    params: dict[str, str] | None = {"per_page": "100"}
    for _ in range(MAX_PAGES):
        if next_url is None:
            break
        response = get_json(client, next_url, params=params)
        if response.status_code == 404:
            raise repo_not_found(repo)
        if response.status_code >= 400:
            raise http_error(response, what)
        page = _json(response, what)
        if not isinstance(page, list):
            raise ShardpyError(
                "SOURCE_HTTP_ERROR", f"{what}: unexpected answer", "Check SHARDPY_GITHUB_API_BASE."
            )
        items.extend(page)
        next_url = response.links.get("next", {}).get("url")
        params = None  # the next link carries its own query
    return items


def list_releases(client: httpx.Client, repo: str) -> list[Release]:
    """Published releases (drafts skipped), or the repository's tags when it has no releases."""
    raw = _paged(client, _repo_url(repo, "releases"), repo, f"Listing releases of {repo}")
    releases = [
        make_release(item["tag_name"], prerelease=bool(item.get("prerelease")))
        for item in raw
        if isinstance(item, dict) and isinstance(item.get("tag_name"), str) and not item.get("draft")
    ]
    if releases:
        return sort_releases(releases)
    tags = _paged(client, _repo_url(repo, "tags"), repo, f"Listing tags of {repo}")
    return sort_releases(
        make_release(item["name"], commit=(item.get("commit") or {}).get("sha"))
        for item in tags
        if isinstance(item, dict) and isinstance(item.get("name"), str)
    )


def commit_sha(client: httpx.Client, repo: str, ref: str) -> str | None:
    """The commit ``ref`` (branch, tag, sha or sha prefix) names, or None when GitHub has none."""
    response = get_json(client, _repo_url(repo, "commits", quote(ref, safe="/")))
    if response.status_code in (404, 422):
        return None
    if response.status_code >= 400:
        raise http_error(response, f"Looking up {ref!r} in {repo}")
    sha = _json(response, f"Looking up {ref!r} in {repo}").get("sha")
    if not isinstance(sha, str):
        raise ShardpyError("SOURCE_HTTP_ERROR", f"Looking up {ref!r} in {repo}: no sha in the answer", "")
    return sha


def _ensure_repo(client: httpx.Client, repo: str) -> None:
    response = get_json(client, _repo_url(repo))
    if response.status_code == 404:
        raise repo_not_found(repo)
    if response.status_code >= 400:
        raise http_error(response, f"Looking up {repo}")


def resolve(
    spec: SourceSpec,
    repo: str,
    *,
    version: str | None,
    ref: str | None,
    include_prerelease: bool,
    upstream: SourceSpec | None = None,
) -> Resolved:
    label = f"github:{repo}"
    with github_client() as client:
        if ref is not None:
            sha = commit_sha(client, repo, ref)
            if sha is None:
                _ensure_repo(client, repo)
                raise ShardpyError(
                    "SOURCE_REF_NOT_FOUND",
                    f"{label} has no branch, tag or commit {ref!r}",
                    "Check the ref; commits need at least 7 hex digits.",
                    details={"ref": ref},
                )
            return Resolved(spec, None, None, ref, sha, upstream=upstream)

        releases = list_releases(client, repo)
        if version is not None:
            release = find_pinned(releases, version)
            candidates = [release.tag] if release else candidate_tags(version)
            for tag in candidates:
                sha = (release.commit if release else None) or commit_sha(client, repo, tag)
                if sha is not None:
                    chosen = release or make_release(tag)
                    return Resolved(spec, release_version(chosen), tag, None, sha, upstream=upstream)
            raise version_not_found(label, version, releases)

        latest = pick_latest(releases, include_prerelease=include_prerelease)
        if latest is None:
            raise no_releases(label, releases)
        sha = latest.commit or commit_sha(client, repo, latest.tag)
        if sha is None:
            raise version_not_found(label, release_version(latest), releases)
        return Resolved(spec, release_version(latest), latest.tag, None, sha, upstream=upstream)


def fetch_archive(
    repo: str, commit: str, *, cache: ArchiveCache, progress: ProgressFn | None
) -> tuple[Path, str]:
    """The tarball of ``commit``: from the cache, else downloaded into it. Returns (path, sha256)."""
    key = f"github:{api_base()}/{repo}@{commit}"
    hit = cache.lookup(key)
    if hit is not None:
        path, entry = hit
        return path, str(entry["sha256"])
    temp = cache.temp_file()
    with github_client() as client:
        result = download(
            client,
            _repo_url(repo, "tarball", commit),
            temp,
            label=f"{repo}@{commit[:12]}",
            progress=progress,
            not_found=ShardpyError(
                "SOURCE_NOT_FOUND",
                f"GitHub has no archive for {repo} at {commit[:12]}",
                "Check the repository and ref; a private repository needs GITHUB_TOKEN.",
            ),
            github=True,
        )
    if result.path is None or result.sha256 is None:  # only a conditional request may get a 304
        raise ShardpyError("SOURCE_HTTP_ERROR", f"GitHub sent no archive for {repo}", "Try again.")
    return cache.store(result.path, result.sha256, key, repo=repo, commit=commit), result.sha256
