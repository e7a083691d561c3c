"""gitsync.repo.local_config reads the local config with one `git config`, and again only when
.git/config changed (a sync round's second read, under the vault lock, was another ~2 ms of git
for the same answer; issue 30): every change is seen, by git or by hand."""

from __future__ import annotations

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


def test_the_local_config_is_read_again_only_when_it_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(tmp_path, "init", "-q")
    repo = gitsync_repo.open_repo_at(tmp_path)[0]
    calls = _count_git(monkeypatch)
    first = gitsync_repo.local_config(repo)
    first["core.bare"] = ["mutated by a caller"]  # a copy: the kept read is not changed
    assert gitsync_repo.local_config(repo)["core.bare"] == ["false"]
    assert len(calls) == 1  # the second read came from the first
    git(tmp_path, "config", "--local", "shardpy-sync.x", "1")
    assert gitsync_repo.local_config(repo)["shardpy-sync.x"] == ["1"]
    config = tmp_path / ".git" / "config"
    config.write_text(config.read_text() + "[shardpy-sync]\n\ty = 2\n")  # by hand, in place
    assert gitsync_repo.local_config(repo)["shardpy-sync.y"] == ["2"]
    assert len(calls) == 3
