"""Every source kind installs (and updates) end to end through the CLI,
hermetically: git repositories in temp dirs, tarballs, and a GitHub API and
registry stub on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.shardkit import Cli
from tests.sources.support import (
    ShardRepo,
    StubGitHub,
    dir_entry,
    file_entry,
    git,
    shard_tar_entries,
    tar_bytes,
)


def run(cli: Cli, where: Path, *args: str) -> tuple[int, Any]:
    res = cli.run(*args, "--json", cwd=where)
    return res.exit_code, res.json()


def state(vault: Path) -> Any:
    return json.loads((vault / ".shardmind/state.json").read_text())


def test_git_version_tag_then_update_to_prerelease(tmp_path: Path, shard_repo: ShardRepo, cli: Cli) -> None:
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", f"{shard_repo.url}@1.0.0", str(vault), "--defaults")
    assert code == 0, out
    st = state(vault)
    assert st["version"] == "1.0.0" and st["resolved_commit"] == shard_repo.commits["v1.0.0"]
    assert (vault / "Home.md").read_text() == "# Home 1.0.0\n"
    code, out = run(cli, vault, "update", "--yes")
    assert code == 0 and out["up_to_date"] is True  # newest stable is still 1.0.0
    code, out = run(cli, vault, "update", "--yes", "--include-prerelease")
    assert code == 0 and out["to_version"] == "1.1.0-rc.1"
    assert (vault / "Home.md").read_text() == "# Home 1.1.0-rc.1\n"
    assert state(vault)["resolved_commit"] == shard_repo.commits["v1.1.0-rc.1"]


def test_git_latest_stable_and_pinned_release(tmp_path: Path, shard_repo: ShardRepo, cli: Cli) -> None:
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", f"git+{shard_repo.path}@0.9.0", str(vault), "--defaults")
    assert code == 0, out
    code, out = run(cli, vault, "update", "--yes", "--dry-run")
    assert out["to_version"] == "1.0.0"
    code, out = run(cli, vault, "update", "--yes", "--release", "v0.9.0")
    assert code == 0 and out["up_to_date"] is True
    code, out = run(cli, vault, "update", "--yes")
    assert code == 0 and out["to_version"] == "1.0.0"


def test_git_branch_ref_tracks_commits(tmp_path: Path, shard_repo: ShardRepo, cli: Cli) -> None:
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", f"{shard_repo.url}#feature/x", str(vault), "--defaults")
    assert code == 0, out
    assert state(vault)["ref"] == "feature/x"
    assert (vault / "feature.md").exists()
    code, out = run(cli, vault, "update", "--yes")
    assert code == 0 and out["up_to_date"] is True
    code, out = run(cli, vault, "update", "--yes", "--release", "1.0.0")
    assert code == 1 and out["error"]["code"] == "UPDATE_REF_FLAGS"


def test_git_ref_update_pulls_new_commit(tmp_path: Path, shard_repo: ShardRepo, cli: Cli) -> None:
    repo = tmp_path / "repo"
    git(tmp_path, "clone", "-q", str(shard_repo.path), str(repo))
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", f"git+{repo}#main", str(vault), "--defaults")
    assert code == 0, out
    (repo / "added.md").write_text("added on main\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "more")
    code, out = run(cli, vault, "update", "--yes")
    assert code == 0 and out["up_to_date"] is False
    assert (vault / "added.md").read_text() == "added on main\n"
    assert state(vault)["resolved_commit"] == git(repo, "rev-parse", "HEAD")


def test_tarball_path(tmp_path: Path, cli: Cli) -> None:
    archive = tmp_path / "shard.tar.gz"
    archive.write_bytes(tar_bytes(shard_tar_entries()))
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", str(archive), str(vault), "--defaults")
    assert code == 0, out
    assert (vault / "brain/note.md").read_text() == "note\n"
    assert state(vault)["archive_sha256"]


def test_unsafe_tarball_leaves_nothing(tmp_path: Path, cli: Cli) -> None:
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(
        tar_bytes([dir_entry("pkg"), *shard_tar_entries()[1:], file_entry("pkg/../../escape.md", b"x")])
    )
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", str(archive), str(vault), "--defaults")
    assert code == 1 and out["error"]["code"] == "SOURCE_ARCHIVE_UNSAFE"
    assert not vault.exists() and not (tmp_path.parent / "escape.md").exists()


def test_github_source_and_remote_hooks_need_trust(tmp_path: Path, github_stub: StubGitHub, cli: Cli) -> None:
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", "github:o/r", str(vault), "--defaults")
    assert code == 0, out
    assert state(vault)["version"] == "1.0.0"
    assert github_stub.count("/tarball/") == 1
    code, out = run(cli, vault, "update", "--yes")
    assert out["up_to_date"] is True


def test_registry_source(tmp_path: Path, github_stub: StubGitHub, monkeypatch: Any, cli: Cli) -> None:
    index = tmp_path / "index.json"
    index.write_text(
        json.dumps(
            {"shards": {"acme/demo": {"repo": "o/r", "latest": "1.0.0", "versions": ["0.9.0", "1.0.0"]}}}
        )
    )
    monkeypatch.setenv("SHARDPY_REGISTRY_INDEX_URL", str(index))
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", "acme/demo@0.9.0", str(vault), "--defaults")
    assert code == 0, out
    assert state(vault)["version"] == "0.9.0"
    code, out = run(cli, vault, "update", "--yes")
    assert code == 0 and out["to_version"] == "1.0.0"


def test_unreachable_and_unknown_version_leave_nothing(
    tmp_path: Path, refused_port: int, monkeypatch: Any, github_stub: StubGitHub, cli: Cli
) -> None:
    vault = tmp_path / "v"
    code, out = run(cli, tmp_path, "install", "github:o/r@9.9.9", str(vault), "--defaults")
    assert code == 1 and out["error"]["code"] == "SOURCE_VERSION_NOT_FOUND"
    monkeypatch.setenv("SHARDPY_GITHUB_API_BASE", f"http://127.0.0.1:{refused_port}")
    code, out = run(cli, tmp_path, "install", "github:o/r", str(vault), "--defaults")
    assert code == 1 and out["error"]["code"] == "SOURCE_UNREACHABLE"
    assert not vault.exists()
