"""namespace/name through a registry index, resolved through the github source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.sources import fetch, list_releases, parse_source, resolve
from tests.sources.support import ShardRepo, StubGitHub


@pytest.fixture
def served_index(github_stub: StubGitHub, monkeypatch: pytest.MonkeyPatch) -> StubGitHub:
    github_stub.registry = {
        "schema_version": 1,
        "shards": {
            "acme/demo": {"repo": "o/r"},
            "acme/pinned": {"repo": "o/r", "latest": "0.9.0", "versions": ["0.9.0", "1.0.0", "1.1.0-rc.1"]},
            "acme/broken": {"name": "no repo here"},
        },
    }
    monkeypatch.setenv("SHARDPY_REGISTRY_INDEX_URL", f"{github_stub.base}/registry/index.json")
    return github_stub


def test_real_index_shape_asks_github(served_index: StubGitHub, shard_repo: ShardRepo, scratch: Path) -> None:
    source = parse_source("acme/demo", cwd=Path("/"))
    assert source.kind == "registry"
    resolved = resolve(source)
    assert (resolved.version, resolved.tag, resolved.commit) == (
        "1.0.0",
        "v1.0.0",
        shard_repo.commits["v1.0.0"],
    )
    assert resolved.spec == source
    assert resolved.upstream is not None and resolved.upstream.display() == "github:o/r"
    with fetch(resolved) as fetched:
        assert fetched.remote is True
        assert (fetched.shard_root() / ".shardmind" / "shard.yaml").is_file()
        assert fetched.resolved.spec.display() == "acme/demo"  # state records the registry name
    assert list(scratch.iterdir()) == []
    assert served_index.count("/registry/index.json") == 1  # fetch goes straight to the github repo
    assert served_index.count("/releases") == 1


def test_latest_from_the_index(served_index: StubGitHub, shard_repo: ShardRepo) -> None:
    resolved = resolve(parse_source("acme/pinned", cwd=Path("/")))
    assert (resolved.version, resolved.commit) == ("0.9.0", shard_repo.commits["v0.9.0"])
    pre = resolve(parse_source("acme/pinned", cwd=Path("/")), include_prerelease=True)
    assert pre.version == "1.1.0-rc.1"
    releases = list_releases(parse_source("acme/pinned", cwd=Path("/")))
    assert [r.version for r in releases] == ["1.1.0-rc.1", "1.0.0", "0.9.0"]


@pytest.mark.parametrize("written", ["1.0.0", "v1.0.0"])
def test_pinned_version(served_index: StubGitHub, shard_repo: ShardRepo, written: str) -> None:
    resolved = resolve(parse_source(f"acme/demo@{written}", cwd=Path("/")))
    assert (resolved.version, resolved.commit) == ("1.0.0", shard_repo.commits["v1.0.0"])
    assert resolved.upstream is not None and resolved.upstream.version == written


def test_unknown_version(served_index: StubGitHub) -> None:
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("acme/demo@5.0.0", cwd=Path("/")))
    assert err.value.code == "SOURCE_VERSION_NOT_FOUND"
    assert "1.0.0" in err.value.details["available"]


def test_unknown_name(served_index: StubGitHub) -> None:
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("other/demo", cwd=Path("/")))
    assert err.value.code == "SOURCE_NOT_FOUND"
    assert "acme/demo" in err.value.hint  # a near name is suggested


def test_entry_without_repo(served_index: StubGitHub) -> None:
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("acme/broken", cwd=Path("/")))
    assert err.value.code == "SOURCE_REGISTRY_INVALID"


def test_offline_index_file_and_file_url(
    github_stub: StubGitHub, shard_repo: ShardRepo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = tmp_path / "index.json"
    index.write_text(json.dumps({"shards": {"acme/demo": {"repo": "o/r", "latest": "1.0.0"}}}))
    for value in (str(index), index.as_uri()):
        monkeypatch.setenv("SHARDPY_REGISTRY_INDEX_URL", value)
        assert resolve(parse_source("acme/demo", cwd=Path("/"))).commit == shard_repo.commits["v1.0.0"]


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("not json", "SOURCE_REGISTRY_INVALID"),
        ('{"shards": []}', "SOURCE_REGISTRY_INVALID"),
        ('{"shards": {"acme/demo": {"repo": "not a repo"}}}', "SOURCE_REGISTRY_INVALID"),
        ('{"shards": {"acme/demo": {"repo": "o/r", "versions": "1.0.0"}}}', "SOURCE_REGISTRY_INVALID"),
    ],
)
def test_bad_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, code: str) -> None:
    index = tmp_path / "index.json"
    index.write_text(content)
    monkeypatch.setenv("SHARDPY_REGISTRY_INDEX_URL", str(index))
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("acme/demo", cwd=Path("/")))
    assert err.value.code == code


def test_missing_index_file_and_unreachable_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused_port: int
) -> None:
    monkeypatch.setenv("SHARDPY_REGISTRY_INDEX_URL", str(tmp_path / "nope.json"))
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("acme/demo", cwd=Path("/")))
    assert err.value.code == "SOURCE_UNREACHABLE"
    monkeypatch.setenv("SHARDPY_REGISTRY_INDEX_URL", f"http://127.0.0.1:{refused_port}/index.json")
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("acme/demo", cwd=Path("/")))
    assert err.value.code == "SOURCE_UNREACHABLE"


def test_registry_never_gets_the_token(served_index: StubGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "s3cret")
    resolve(parse_source("acme/demo", cwd=Path("/")))
    index_requests = [r for r in served_index.requests if r.path == "/registry/index.json"]
    assert index_requests and all("authorization" not in r.headers for r in index_requests)
    api_requests = [r for r in served_index.requests if r.path.startswith("/repos/")]
    assert api_requests and all(r.headers.get("authorization") == "Bearer s3cret" for r in api_requests)
