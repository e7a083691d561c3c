"""github:owner/repo against a stub of the REST API on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.sources import fetch, list_releases, parse_source, resolve
from tests.sources.support import ShardRepo, StubGitHub


def version_of(root: Path) -> str:
    return (root / ".shardmind" / "shard.yaml").read_text().split("version: ")[1].strip()


def test_latest_stable_release(github_stub: StubGitHub, shard_repo: ShardRepo, scratch: Path) -> None:
    resolved = resolve(parse_source("github:o/r", cwd=Path("/")))
    assert (resolved.version, resolved.tag, resolved.commit) == (
        "1.0.0",
        "v1.0.0",
        shard_repo.commits["v1.0.0"],
    )
    fetched = fetch(resolved)
    try:
        assert fetched.remote is True
        assert fetched.root.name == f"o-r-{resolved.commit[:7]}"  # the top directory, stripped
        assert version_of(fetched.shard_root()) == "1.0.0"
        assert fetched.archive_sha256 and len(fetched.archive_sha256) == 64
    finally:
        fetched.cleanup()
    assert list(scratch.iterdir()) == []
    assert github_stub.count("/tarball/") == 1 and github_stub.count("/codeload/") == 1  # 302 followed


def test_include_prerelease(github_stub: StubGitHub, shard_repo: ShardRepo) -> None:
    resolved = resolve(parse_source("github:o/r", cwd=Path("/")), include_prerelease=True)
    assert (resolved.version, resolved.commit) == ("1.1.0-rc.1", shard_repo.commits["v1.1.0-rc.1"])


def test_release_flagged_prerelease_is_skipped(github_stub: StubGitHub, shard_repo: ShardRepo) -> None:
    github_stub.add_repo("o/flagged", shard_repo, prerelease_flags={"v1.0.0": True})
    assert resolve(parse_source("github:o/flagged", cwd=Path("/"))).version == "0.9.0"


def test_list_releases_follows_pages(github_stub: StubGitHub) -> None:
    github_stub.page_size = 1
    releases = list_releases(parse_source("github:o/r", cwd=Path("/")))
    assert [r.tag for r in releases] == ["v1.1.0-rc.1", "v1.0.0", "v0.9.0"]
    assert github_stub.count("/releases") == 3


@pytest.mark.parametrize("written", ["0.9.0", "v0.9.0"])
def test_pinned_version(github_stub: StubGitHub, shard_repo: ShardRepo, written: str) -> None:
    resolved = resolve(parse_source(f"github:o/r@{written}", cwd=Path("/")))
    assert (resolved.version, resolved.tag, resolved.commit) == (
        "0.9.0",
        "v0.9.0",
        shard_repo.commits["v0.9.0"],
    )
    with fetch(resolved) as fetched:
        assert version_of(fetched.root) == "0.9.0"


def test_pinned_tag_without_a_release(github_stub: StubGitHub, shard_repo: ShardRepo) -> None:
    resolved = resolve(parse_source("github:o/r@release-5", cwd=Path("/")))
    assert (resolved.tag, resolved.commit) == ("release-5", shard_repo.commits["v1.0.0"])


def test_unknown_version(github_stub: StubGitHub) -> None:
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("github:o/r@9.9.9", cwd=Path("/")))
    assert err.value.code == "SOURCE_VERSION_NOT_FOUND"
    assert err.value.details["available"] == ["1.1.0-rc.1", "1.0.0", "0.9.0"]


@pytest.mark.parametrize(("ref", "label"), [("feature/x", "feature"), ("main", "tip"), ("v0.9.0", "v0.9.0")])
def test_refs(github_stub: StubGitHub, shard_repo: ShardRepo, ref: str, label: str) -> None:
    resolved = resolve(parse_source(f"github:o/r#{ref}", cwd=Path("/")))
    assert (resolved.ref, resolved.version, resolved.commit) == (ref, None, shard_repo.commits[label])
    with fetch(resolved) as fetched:
        assert fetched.root.is_dir()


def test_short_sha(github_stub: StubGitHub, shard_repo: ShardRepo) -> None:
    sha = shard_repo.commits["feature"]
    resolved = resolve(parse_source(f"github:o/r#{sha[:7]}", cwd=Path("/")))
    assert resolved.commit == sha
    with fetch(resolved) as fetched:
        assert (fetched.root / "feature.md").is_file()


def test_unknown_ref_and_repo(github_stub: StubGitHub) -> None:
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("github:o/r#nope", cwd=Path("/")))
    assert err.value.code == "SOURCE_REF_NOT_FOUND"
    for text in ("github:o/missing", "github:o/missing#main", "github:o/missing@1.0.0"):
        with pytest.raises(ShardpyError) as err:
            resolve(parse_source(text, cwd=Path("/")))
        assert err.value.code == "SOURCE_NOT_FOUND", text
        assert "GITHUB_TOKEN" in err.value.hint


def test_repo_without_releases_uses_tags(github_stub: StubGitHub, shard_repo: ShardRepo) -> None:
    github_stub.add_repo("o/tags-only", shard_repo)
    github_stub.repos["o/tags-only"].releases = []
    resolved = resolve(parse_source("github:o/tags-only", cwd=Path("/")))
    assert (resolved.tag, resolved.commit) == ("v1.0.0", shard_repo.commits["v1.0.0"])
    assert github_stub.count("/repos/o/tags-only/tags") == 1
    assert github_stub.count("/repos/o/tags-only/commits/") == 0  # tags carry their commit


def test_no_releases(github_stub: StubGitHub, shard_repo: ShardRepo) -> None:
    github_stub.add_repo("o/empty", shard_repo)
    github_stub.repos["o/empty"].releases = []
    github_stub.repos["o/empty"].tags = {}
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("github:o/empty", cwd=Path("/")))
    assert err.value.code == "SOURCE_NO_RELEASES"
    assert "#ref" in err.value.hint


def test_rate_limit(github_stub: StubGitHub, scratch: Path) -> None:
    github_stub.rate_limited = True
    for text in ("github:o/r", "github:o/r#main", "github:o/r@1.0.0"):
        with pytest.raises(ShardpyError) as err:
            resolve(parse_source(text, cwd=Path("/")))
        assert err.value.code == "SOURCE_RATE_LIMITED"
        assert "GITHUB_TOKEN" in err.value.hint
        assert "UTC" in err.value.message  # the reset time is shown


def test_rate_limit_during_download_leaves_nothing(
    github_stub: StubGitHub, scratch: Path, tmp_path: Path
) -> None:
    resolved = resolve(parse_source("github:o/r", cwd=Path("/")))
    github_stub.rate_limited = True
    with pytest.raises(ShardpyError) as err:
        fetch(resolved)
    assert err.value.code == "SOURCE_RATE_LIMITED"
    assert list(scratch.iterdir()) == []
    archives = tmp_path / "cache" / "archives"
    assert not archives.exists() or [p.name for p in archives.iterdir()] == []


def test_forbidden_with_quota_left_is_an_http_error(github_stub: StubGitHub) -> None:
    github_stub.rate_limited = True
    github_stub.remaining = "12"
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("github:o/r", cwd=Path("/")))
    assert err.value.code == "SOURCE_HTTP_ERROR"
    assert "403" in err.value.message


def test_connection_refused_is_unreachable(refused_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHARDPY_GITHUB_API_BASE", f"http://127.0.0.1:{refused_port}")
    with pytest.raises(ShardpyError) as err:
        resolve(parse_source("github:o/r", cwd=Path("/")))
    assert err.value.code == "SOURCE_UNREACHABLE"
    assert f"127.0.0.1:{refused_port}" in err.value.message


def test_token_is_sent(github_stub: StubGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "s3cret")
    with fetch(resolve(parse_source("github:o/r", cwd=Path("/")))):
        pass
    api = [r for r in github_stub.requests if r.path.startswith("/repos/")]
    assert api and all(r.headers.get("authorization") == "Bearer s3cret" for r in api)
    assert all(r.headers.get("accept") == "application/vnd.github+json" for r in api)
    assert all(r.headers.get("user-agent", "").startswith("shardpy/") for r in api)


def test_no_token_no_header(github_stub: StubGitHub) -> None:
    resolve(parse_source("github:o/r", cwd=Path("/")))
    assert all("authorization" not in r.headers for r in github_stub.requests)


def test_cache_hit_avoids_second_download(github_stub: StubGitHub, tmp_path: Path, scratch: Path) -> None:
    spec = parse_source("github:o/r@1.0.0", cwd=Path("/"))
    with fetch(resolve(spec)) as first:
        first_hash = first.archive_sha256
        first_files = sorted(p.relative_to(first.root).as_posix() for p in first.root.rglob("*"))
    assert github_stub.count("/tarball/") == 1
    with fetch(resolve(spec)) as second:
        assert second.archive_sha256 == first_hash
        assert sorted(p.relative_to(second.root).as_posix() for p in second.root.rglob("*")) == first_files
    assert github_stub.count("/tarball/") == 1 and github_stub.count("/codeload/") == 1
    cached = list((tmp_path / "cache" / "archives").glob("*.tar.gz"))
    assert [p.name for p in cached] == [f"{first_hash}.tar.gz"]
    assert list(scratch.iterdir()) == []


def test_corrupt_cache_entry_is_downloaded_again(github_stub: StubGitHub, tmp_path: Path) -> None:
    spec = parse_source("github:o/r@1.0.0", cwd=Path("/"))
    with fetch(resolve(spec)) as first:
        digest = first.archive_sha256
    (tmp_path / "cache" / "archives" / f"{digest}.tar.gz").write_bytes(b"tampered")
    with fetch(resolve(spec)) as second:
        assert second.archive_sha256 == digest
        assert version_of(second.root) == "1.0.0"
    assert github_stub.count("/tarball/") == 2


def test_unwritable_cache_still_fetches(
    github_stub: StubGitHub, tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache dir should be")
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(blocker))
    with fetch(resolve(parse_source("github:o/r", cwd=Path("/")))) as fetched:
        assert version_of(fetched.root) == "1.0.0"
    assert list(scratch.iterdir()) == []


def test_download_progress(github_stub: StubGitHub) -> None:
    calls: list[tuple[str, int, int | None]] = []
    resolved = resolve(parse_source("github:o/r", cwd=Path("/")))
    with fetch(resolved, progress=lambda label, done, total: calls.append((label, done, total))):
        pass
    assert calls[0][1] == 0
    assert calls[-1][1] > 0 and calls[-1][1] == calls[-1][2]  # content-length known: ends at 100 %
    assert all(label.startswith("o/r@") for label, _, _ in calls)


def test_download_size_cap(github_stub: StubGitHub, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    resolved = resolve(parse_source("github:o/r", cwd=Path("/")))
    monkeypatch.setenv("SHARDPY_MAX_ARCHIVE_BYTES", "100")
    with pytest.raises(ShardpyError) as err:
        fetch(resolved)
    assert err.value.code == "SOURCE_ARCHIVE_TOO_LARGE"
    assert list(scratch.iterdir()) == []
