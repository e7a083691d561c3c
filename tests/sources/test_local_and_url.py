"""Local directories, the bundled kind, and .tar.gz archives over HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.sources import bundled_source, fetch, list_releases, parse_source, resolve
from tests.sources.support import StubGitHub, shard_tar_entries, tar_bytes, write_shard


def test_local_directory(tmp_path: Path, scratch: Path) -> None:
    src = tmp_path / "my-shard"
    write_shard(src, "1.0.0")
    spec = parse_source(str(src), cwd=tmp_path)
    resolved = resolve(spec)
    assert (resolved.version, resolved.tag, resolved.ref, resolved.commit) == (None, None, None, None)
    assert list_releases(spec) == []
    fetched = fetch(resolved)
    assert fetched.root == src and fetched.remote is False
    assert fetched.shard_root() == src
    assert fetched.archive_sha256 is None  # a local shard is hashed by the loader, from what it uses
    fetched.cleanup()
    assert (src / "Home.md").exists()  # cleanup never touches the user's directory
    assert list(scratch.iterdir()) == []


def test_local_monorepo_with_subdir(tmp_path: Path) -> None:
    write_shard(tmp_path / "repo" / "shards" / "a", "1.0.0")
    write_shard(tmp_path / "repo" / "shards" / "b", "2.0.0")
    fetched = fetch(resolve(parse_source("repo//shards/b", cwd=tmp_path)))
    assert fetched.shard_root() == tmp_path / "repo" / "shards" / "b"


def test_local_directory_removed_after_parse(tmp_path: Path) -> None:
    src = tmp_path / "vanishing"
    src.mkdir()
    resolved = resolve(parse_source(str(src), cwd=tmp_path))
    src.rmdir()
    with pytest.raises(ShardpyError) as err:
        fetch(resolved)
    assert err.value.code == "SOURCE_NOT_FOUND"


def test_bundled_behaves_like_local(tmp_path: Path) -> None:
    write_shard(tmp_path / "_bundled" / "shard-template", "8.3.5")
    spec = bundled_source(tmp_path / "_bundled")
    with fetch(resolve(spec)) as fetched:
        assert fetched.remote is False
        assert fetched.shard_root() == tmp_path / "_bundled" / "shard-template"
    assert (tmp_path / "_bundled" / "shard-template").is_dir()


@pytest.fixture
def served_tarball(github_stub: StubGitHub) -> str:
    github_stub.files["shard-2.0.0.tar.gz"] = tar_bytes(shard_tar_entries("demo-2.0.0/"))
    return f"{github_stub.base}/files/shard-2.0.0.tar.gz"


def test_tarball_url(served_tarball: str, github_stub: StubGitHub, tmp_path: Path, scratch: Path) -> None:
    spec = parse_source(served_tarball, cwd=tmp_path)
    assert spec.kind == "tarball" and spec.is_remote
    with fetch(resolve(spec)) as fetched:
        assert fetched.remote is True
        assert fetched.root.name == "demo-2.0.0"
        digest = fetched.archive_sha256
    assert list(scratch.iterdir()) == []
    assert (tmp_path / "cache" / "archives" / f"{digest}.tar.gz").is_file()
    # a repeat revalidates with the ETag and gets 304: the cached copy is used
    with fetch(resolve(spec)) as again:
        assert again.archive_sha256 == digest
        assert (again.root / "Home.md").is_file()
    file_requests = [r for r in github_stub.requests if r.path.startswith("/files/")]
    assert len(file_requests) == 2
    assert "if-none-match" not in file_requests[0].headers
    assert "if-none-match" in file_requests[1].headers


def test_tarball_url_changed_upstream(served_tarball: str, github_stub: StubGitHub, tmp_path: Path) -> None:
    spec = parse_source(served_tarball, cwd=tmp_path)
    with fetch(resolve(spec)) as first:
        old = first.archive_sha256
    github_stub.files["shard-2.0.0.tar.gz"] = tar_bytes(shard_tar_entries("demo-2.0.1/", version="2.0.1"))
    with fetch(resolve(spec)) as second:
        assert second.archive_sha256 != old
        assert second.root.name == "demo-2.0.1"


def test_tarball_url_errors(
    github_stub: StubGitHub, tmp_path: Path, refused_port: int, scratch: Path
) -> None:
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(f"{github_stub.base}/files/missing.tar.gz", cwd=tmp_path)))
    assert err.value.code == "SOURCE_NOT_FOUND"
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(f"http://127.0.0.1:{refused_port}/x.tar.gz", cwd=tmp_path)))
    assert err.value.code == "SOURCE_UNREACHABLE"
    assert list(scratch.iterdir()) == []
    archives = tmp_path / "cache" / "archives"
    assert not archives.exists() or not any(p.name.endswith(".part") for p in archives.iterdir())


def test_unsafe_tarball_url_leaves_nothing(github_stub: StubGitHub, tmp_path: Path, scratch: Path) -> None:
    from tests.sources.support import file_entry

    github_stub.files["evil.tar.gz"] = tar_bytes([*shard_tar_entries(), file_entry("../../escape", b"x")])
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(f"{github_stub.base}/files/evil.tar.gz", cwd=tmp_path)))
    assert err.value.code == "SOURCE_ARCHIVE_UNSAFE"
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / "escape").exists()
