"""``namespace/name`` sources through the registry index.

The index is JSON: ``{"shards": {"ns/name": {"repo": "owner/repo",
"latest"?: "x.y.z", "versions"?: [...]}}}`` (``schema_version`` tolerated).
An entry only names a GitHub repository; fetching goes through the github
source. Without ``latest``/``versions`` the repository's releases decide.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.sources import github
from shardpy.sources.http import get_json, http_client, http_error
from shardpy.sources.model import Release, Resolved
from shardpy.sources.releases import make_release, sort_releases
from shardpy.sources.spec import GITHUB_REPO_RE, SourceSpec, file_url_path
from shardpy.versions import newest, version_from_tag

DEFAULT_INDEX_URL = "https://raw.githubusercontent.com/shardmind/registry/main/index.json"


@dataclass(frozen=True)
class RegistryEntry:
    name: str
    repo: str
    latest: str | None
    versions: tuple[str, ...]


def index_url() -> str:
    return os.environ.get("SHARDPY_REGISTRY_INDEX_URL") or DEFAULT_INDEX_URL


def _invalid(url: str, why: str) -> ShardpyError:
    return ShardpyError(
        "SOURCE_REGISTRY_INVALID",
        f"The registry index at {url} is not usable: {why}",
        "Check SHARDPY_REGISTRY_INDEX_URL, or install with github:owner/repo instead.",
        details={"url": url},
    )


def load_index(url: str | None = None) -> dict[str, Any]:
    url = url or index_url()
    if url.startswith(("http://", "https://")):
        with http_client({"Accept": "application/json"}) as client:
            response = get_json(client, url)
        if response.status_code >= 400:
            raise http_error(response, "Reading the registry index")
        text = response.text
    else:
        path = Path(file_url_path(url) if url.startswith("file://") else os.path.expanduser(url))
        try:
            text = path.read_text("utf-8")
        except OSError as exc:
            raise ShardpyError(
                "SOURCE_UNREACHABLE",
                f"Cannot read the registry index {path}: {exc.strerror or exc}",
                "Check SHARDPY_REGISTRY_INDEX_URL.",
                path=str(path),
            ) from exc
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise _invalid(url, f"not JSON ({exc})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("shards"), dict):
        raise _invalid(url, 'no "shards" mapping')
    return data


def parse_entry(name: str, raw: Any, url: str) -> RegistryEntry:
    if not isinstance(raw, dict) or not isinstance(raw.get("repo"), str):
        raise _invalid(url, f'entry {name!r} has no "repo"')
    repo = raw["repo"].removeprefix("github:").removesuffix(".git")
    if not GITHUB_REPO_RE.match(repo):
        raise _invalid(url, f"entry {name!r}: repo {raw['repo']!r} is not owner/repo")
    latest = raw.get("latest")
    versions = raw.get("versions") or []
    if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
        raise _invalid(url, f'entry {name!r}: "versions" must be a list of strings')
    return RegistryEntry(name, repo, latest if isinstance(latest, str) else None, tuple(versions))


def lookup(name: str) -> RegistryEntry:
    url = index_url()
    shards = load_index(url)["shards"]
    if name not in shards:
        close = sorted(n for n in shards if isinstance(n, str) and n.split("/")[-1] == name.split("/")[-1])
        raise ShardpyError(
            "SOURCE_NOT_FOUND",
            f"{name} is not in the registry",
            (f"Did you mean {', '.join(close[:3])}? " if close else "")
            + "Check the name, or install straight from GitHub with github:owner/repo.",
            details={"name": name, "index": url},
        )
    return parse_entry(name, shards[name], url)


def upstream_spec(spec: SourceSpec, entry: RegistryEntry) -> SourceSpec:
    return SourceSpec("github", entry.repo, spec.version, spec.ref, spec.subdir, spec.raw)


def list_releases(spec: SourceSpec) -> list[Release]:
    entry = lookup(spec.location)
    if entry.versions:
        return sort_releases(make_release(f"v{v.removeprefix('v')}") for v in entry.versions)
    with github.github_client() as client:
        return github.list_releases(client, entry.repo)


def _registry_choice(entry: RegistryEntry, include_prerelease: bool) -> str | None:
    """The version the index itself picks, when it says enough to pick one."""
    parsed = [v for v in (version_from_tag(x) for x in entry.versions) if v is not None]
    if include_prerelease and parsed:
        best = newest(parsed, include_prerelease=True)
        return None if best is None else str(best)
    if entry.latest:
        return entry.latest
    best = newest(parsed)
    return None if best is None else str(best)


def resolve(spec: SourceSpec, *, include_prerelease: bool) -> Resolved:
    entry = lookup(spec.location)
    version = spec.version
    if version is None and spec.ref is None:
        version = _registry_choice(entry, include_prerelease)
    upstream = upstream_spec(spec, entry).with_version(version, spec.ref)
    return github.resolve(
        spec,
        entry.repo,
        version=version,
        ref=spec.ref,
        include_prerelease=include_prerelease,
        upstream=upstream,
    )
