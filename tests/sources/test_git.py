"""Git sources: releases from tags, pinned versions, refs, fetch, errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.sources import Fetched, SourceSpec, fetch, list_releases, parse_source, resolve
from tests.sources.support import ShardRepo, git


def manifest_version(fetched: Fetched) -> str:
    text = (fetched.shard_root() / ".shardmind" / "shard.yaml").read_text()
    return text.split("version: ")[1].strip()


@pytest.fixture(params=["path", "file-url"])
def repo_spec(request: pytest.FixtureRequest, shard_repo: ShardRepo, tmp_path: Path) -> SourceSpec:
    """The same repository addressed as a local git path and as a file:// URL."""
    location = f"git+{shard_repo.path}" if request.param == "path" else shard_repo.url
    return parse_source(location, cwd=tmp_path)


def test_list_releases(repo_spec: SourceSpec, shard_repo: ShardRepo) -> None:
    releases = list_releases(repo_spec)
    assert [r.tag for r in releases] == ["v1.1.0-rc.1", "v1.0.0", "v0.9.0", "release-5"]
    by_tag = {r.tag: r for r in releases}
    assert by_tag["v1.1.0-rc.1"].prerelease and not by_tag["v1.0.0"].prerelease
    assert by_tag["v1.0.0"].version == "1.0.0" and by_tag["release-5"].version is None
    # the annotated tag is peeled to its commit
    assert by_tag["v0.9.0"].commit == shard_repo.commits["v0.9.0"]


def test_latest_stable_and_prerelease(repo_spec: SourceSpec, shard_repo: ShardRepo, scratch: Path) -> None:
    resolved = resolve(repo_spec)
    assert (resolved.version, resolved.tag, resolved.ref) == ("1.0.0", "v1.0.0", None)
    assert resolved.commit == shard_repo.commits["v1.0.0"]
    with fetch(resolved) as fetched:
        assert manifest_version(fetched) == "1.0.0"
        assert not (fetched.root / ".git").exists()
        assert not (fetched.root / "feature.md").exists()
        assert fetched.remote is False
        assert fetched.archive_sha256 and len(fetched.archive_sha256) == 64
    assert list(scratch.iterdir()) == []

    pre = resolve(repo_spec, include_prerelease=True)
    assert (pre.version, pre.commit) == ("1.1.0-rc.1", shard_repo.commits["v1.1.0-rc.1"])


@pytest.mark.parametrize(
    ("written", "tag", "version"), [("0.9.0", "v0.9.0", "0.9.0"), ("v0.9.0", "v0.9.0", "0.9.0")]
)
def test_pinned_version_both_spellings(
    repo_spec: SourceSpec, shard_repo: ShardRepo, written: str, tag: str, version: str
) -> None:
    resolved = resolve(repo_spec.with_version(written))
    assert (resolved.tag, resolved.version, resolved.commit) == (tag, version, shard_repo.commits["v0.9.0"])
    with fetch(resolved) as fetched:
        assert manifest_version(fetched) == "0.9.0"


def test_pinned_non_semver_tag(repo_spec: SourceSpec, shard_repo: ShardRepo) -> None:
    resolved = resolve(repo_spec.with_version("release-5"))
    assert (resolved.tag, resolved.version, resolved.commit) == (
        "release-5",
        "release-5",
        shard_repo.commits["v1.0.0"],
    )


def test_unknown_version_lists_available(repo_spec: SourceSpec) -> None:
    with pytest.raises(ShardpyError) as err:
        resolve(repo_spec.with_version("7.0.0"))
    assert err.value.code == "SOURCE_VERSION_NOT_FOUND"
    assert err.value.details["available"] == ["1.1.0-rc.1", "1.0.0", "0.9.0", "release-5"]
    assert "1.0.0" in err.value.message


@pytest.mark.parametrize(
    ("ref", "label", "extra_file"),
    [
        ("feature/x", "feature", "feature.md"),
        ("main", "tip", "tip.md"),
        ("v0.9.0", "v0.9.0", None),
        ("refs/heads/main", "tip", "tip.md"),
    ],
)
def test_refs(
    repo_spec: SourceSpec, shard_repo: ShardRepo, ref: str, label: str, extra_file: str | None, scratch: Path
) -> None:
    resolved = resolve(repo_spec.with_version(None, ref))
    assert (resolved.ref, resolved.version, resolved.commit) == (ref, None, shard_repo.commits[label])
    with fetch(resolved) as fetched:
        if extra_file:
            assert (fetched.root / extra_file).is_file()
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("length", [7, 12, 40])
def test_commit_refs(repo_spec: SourceSpec, shard_repo: ShardRepo, length: int) -> None:
    sha = shard_repo.commits["feature"]
    resolved = resolve(repo_spec.with_version(None, sha[:length].upper() if length == 12 else sha[:length]))
    assert resolved.commit == sha
    with fetch(resolved) as fetched:
        assert (fetched.root / "feature.md").is_file()  # a commit only reachable from a branch


def test_unknown_ref(repo_spec: SourceSpec) -> None:
    for ref in ("no-such-branch", "deadbeefdeadbeef", "abc"):
        with pytest.raises(ShardpyError) as err:
            resolve(repo_spec.with_version(None, ref))
        assert err.value.code == "SOURCE_REF_NOT_FOUND"
        assert "main" in err.value.hint


def test_no_releases(tmp_path: Path) -> None:
    repo = tmp_path / "bare-history"
    repo.mkdir()
    git(repo, "init", "-q", "--template=", "-b", "main")
    (repo / "a.md").write_text("a")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "v2.0.0-beta.1")
    spec = parse_source(f"git+{repo}", cwd=tmp_path)
    with pytest.raises(ShardpyError) as err:
        resolve(spec)
    assert err.value.code == "SOURCE_NO_RELEASES"
    assert "--include-prerelease" in err.value.hint
    assert resolve(spec, include_prerelease=True).version == "2.0.0-beta.1"


def test_directory_with_version_is_git(shard_repo: ShardRepo, tmp_path: Path) -> None:
    spec = parse_source(f"{shard_repo.path}@1.0.0", cwd=tmp_path)
    with fetch(resolve(spec)) as fetched:
        assert manifest_version(fetched) == "1.0.0"


def test_missing_repository_is_a_typed_error(tmp_path: Path, scratch: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    spec = parse_source(f"git+{gone}", cwd=tmp_path)
    with pytest.raises(ShardpyError) as err:
        resolve(spec)
    assert err.value.code == "SOURCE_NOT_FOUND"
    assert str(gone) in err.value.message
    assert "does not appear to be a git repository" in err.value.message  # git's own words
    assert list(scratch.iterdir()) == []


def test_git_not_installed(repo_spec: SourceSpec, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))
    with pytest.raises(ShardpyError) as err:
        resolve(repo_spec)
    assert err.value.code == "SOURCE_GIT_NOT_INSTALLED"


def test_unreachable_remote(refused_port: int, scratch: Path) -> None:
    spec = SourceSpec("git", f"http://127.0.0.1:{refused_port}/acme/shard.git", raw="x")
    with pytest.raises(ShardpyError) as err:
        resolve(spec)
    assert err.value.code == "SOURCE_UNREACHABLE"
    assert list(scratch.iterdir()) == []


def test_hooks_in_the_source_never_run(tmp_path: Path) -> None:
    """A repository whose own hooks would write a marker: fetching must not run them."""
    repo = tmp_path / "hooked"
    repo.mkdir()
    git(repo, "init", "-q", "--template=", "-b", "main")
    (repo / "a.md").write_text("a")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    git(repo, "tag", "v1.0.0")
    marker = tmp_path / "hook-ran"
    for hook in ("post-checkout", "pre-upload", "post-merge", "reference-transaction"):
        script = repo / ".git" / "hooks" / hook
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f"#!/bin/sh\ntouch {marker}\n")
        script.chmod(0o755)
    with fetch(resolve(parse_source(f"git+{repo}", cwd=tmp_path))) as fetched:
        assert (fetched.root / "a.md").read_text() == "a"
    assert not marker.exists()


def test_progress_is_reported(repo_spec: SourceSpec) -> None:
    calls: list[tuple[str, int, int | None]] = []
    with fetch(resolve(repo_spec), progress=lambda label, done, total: calls.append((label, done, total))):
        pass
    assert calls and calls[0][1] == 0 and calls[-1][1] == calls[-1][2]


def test_symlinks_in_the_tree_stay_links(tmp_path: Path) -> None:
    """Links are checked out as links (the walker refuses them), never followed."""
    repo = tmp_path / "linky"
    repo.mkdir()
    git(repo, "init", "-q", "--template=", "-b", "main")
    os.symlink("/etc/passwd", repo / "passwd")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "one")
    with fetch(resolve(parse_source(f"git+{repo}#main", cwd=tmp_path))) as fetched:
        assert (fetched.root / "passwd").is_symlink()
