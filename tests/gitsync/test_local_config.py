"""gitsync.repo.local_config reads the local config with one `git config`, and again only when
.git/config changed (a sync round's second read, under the vault lock, was another ~2 ms of git
for the same answer; issue 30): every change is seen, by git or by hand, and a file changed
within a tick of the read is never trusted to say it did (git's racy rule)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from shardpy.gitsync import repo as gitsync_repo
from tests.gitsync.kit import git


def _count_git(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    calls: list[list[str]] = []
    real = gitsync_repo.git

    def counted(args: list[str], *a: object, **k: object) -> object:
        calls.append(args)
        return real(args, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(gitsync_repo, "git", counted)
    return calls


def _age(path: Path, seconds: float = 5.0) -> None:
    past = time.time() - seconds
    os.utime(path, (past, past))


def test_the_local_config_is_read_again_only_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tmp_path, "init", "-q")
    config = tmp_path / ".git" / "config"
    _age(config)  # changed long before the reads: its signature vouches for them
    repo = gitsync_repo.open_repo_at(tmp_path)[0]
    calls = _count_git(monkeypatch)
    first = gitsync_repo.local_config(repo)
    first["core.bare"] = ["mutated by a caller"]  # a copy: the kept read is not changed
    assert gitsync_repo.local_config(repo)["core.bare"] == ["false"]
    assert len(calls) == 1  # the second read came from the first
    git(tmp_path, "config", "--local", "shardpy-sync.x", "1")
    assert gitsync_repo.local_config(repo)["shardpy-sync.x"] == ["1"]
    config.write_text(config.read_text() + "[shardpy-sync]\n\ty = 2\n")  # by hand, in place
    assert gitsync_repo.local_config(repo)["shardpy-sync.y"] == ["2"]
    assert len(calls) == 3


def test_a_config_changed_within_a_tick_of_its_read_is_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A clock that ticks every 4 ms (kernels before 6.13; ext2 coarser) gave an edit in place
    right after a read the same inode, size and times (a helper's review, on an ext2 mount): the
    read was kept and the edit missed. Here the file's stat is held still as such a clock does."""
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "--local", "shardpy-sync.k", "aaaa")
    config = tmp_path / ".git" / "config"
    repo = gitsync_repo.open_repo_at(tmp_path)[0]
    real_stat = os.stat
    frozen = real_stat(config)

    def still(path: object, *a: object, **k: object) -> os.stat_result:
        return frozen if Path(str(path)) == config else real_stat(path, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(gitsync_repo.os, "stat", still)
    assert gitsync_repo.local_config(repo)["shardpy-sync.k"] == ["aaaa"]
    git(tmp_path, "config", "--local", "shardpy-sync.k", "bbbb")
    assert gitsync_repo.local_config(repo)["shardpy-sync.k"] == ["bbbb"]


def test_status_keys_the_cache_by_the_git_folder_git_uses(tmp_path: Path) -> None:
    """A folder named .git in the vault that is not a repository: git passes it by for the one
    above, and status reads the sync records through that one. It had guessed `vault/.git`, whose
    config file stood still while the real one changed (a helper's review)."""
    from shardpy.gitsync.report import git_report

    git(tmp_path, "init", "-q")
    git(tmp_path, "remote", "add", "origin", "https://example.invalid/x")
    git(tmp_path, "config", "shardpy-sync.origin.ok", "2021-01-01T00:00:00Z")
    vault = tmp_path / "vault"
    (vault / ".git").mkdir(parents=True)
    (vault / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    _age(vault / ".git" / "config")
    _age(tmp_path / ".git" / "config")
    first = git_report(vault)
    assert first is not None and [r.last_ok for r in first.remotes] == ["2021-01-01T00:00:00Z"]
    git(tmp_path, "config", "shardpy-sync.origin.ok", "2022-01-01T00:00:00Z")
    _age(tmp_path / ".git" / "config")  # past the racy window, as a later status would be
    second = git_report(vault)
    assert second is not None and [r.last_ok for r in second.remotes] == ["2022-01-01T00:00:00Z"]
