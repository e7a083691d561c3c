"""Issue 11, critical: a planted journal never deletes or imports anything.

Each attack runs exactly as the issue describes it (a tarball installed with
--no-hooks then `status` in a subfolder; a repository cloned then adopted),
with a victim folder outside the vault that must be byte-identical afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.security.kit import hostile_journal, make_victim, tarball
from tests.shardkit import Cli, run_shardpy, tree_snapshot, write_tree
from tests.sources.support import GIT_ENV, git

MANIFEST = "apiVersion: v1\nname: s\nnamespace: rel\nversion: 1.0.0\n"


def test_planted_journal_in_a_tarball_shard_is_neither_installed_nor_replayed(tmp_path: Path) -> None:
    victim, before = make_victim(tmp_path)
    shard = write_tree(
        tmp_path / "shard",
        {
            ".shardmind/shard.yaml": MANIFEST,
            "projects/.shardmind/journal.json": hostile_journal(victim),
            "projects/plan.md": "plan\n",
        },
    )
    archive = tarball(shard, tmp_path / "s.tgz")
    done = run_shardpy("install", "--defaults", "--no-hooks", archive, "V", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    vault = tmp_path / "V"
    assert (vault / "projects/plan.md").is_file()
    assert not (vault / "projects/.shardmind").exists(), "a shard shipped an engine folder"
    status = run_shardpy("status", "--json", cwd=vault / "projects")
    assert status.returncode == 0, status.stderr
    assert Path(json.loads(status.stdout)["vault"]) == vault.resolve()
    assert tree_snapshot(victim) == before


def test_nested_engine_folder_does_not_make_a_vault(tmp_path: Path) -> None:
    """A folder holding `.shardmind/journal.json` alone is content, not a vault root."""
    victim, before = make_victim(tmp_path)
    folder = write_tree(tmp_path / "notes", {".shardmind/journal.json": hostile_journal(victim)})
    status = run_shardpy("status", "--json", cwd=folder)
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["vault"] is None
    assert tree_snapshot(victim) == before
    assert (folder / ".shardmind/journal.json").is_file()


@pytest.fixture
def hostile_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path, dict[str, str]]:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))
    victim, before = make_victim(tmp_path)
    repo = write_tree(
        tmp_path / "repo",
        {
            ".shardmind/shard.yaml": MANIFEST,
            ".shardmind/journal.json": hostile_journal(victim),
            "projects/.shardmind/journal.json": hostile_journal(victim),
            "projects/plan.md": "plan\n",
        },
    )
    git(repo, "init", "-q", "--template=", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "1.0.0")
    git(repo, "tag", "v1.0.0")
    return repo, victim, before


def test_planted_journal_in_a_cloned_repository_is_not_replayed_by_adopt(
    hostile_repo: tuple[Path, Path, dict[str, str]], tmp_path: Path, cli: Cli
) -> None:
    repo, victim, before = hostile_repo
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(repo), str(clone))
    res = cli.run("adopt", f"git+{repo}@1.0.0", "--yes", "--json", cwd=clone)
    assert res.error_code() == "TRANSACTION_JOURNAL_INVALID", res.output
    assert tree_snapshot(victim) == before
    (clone / ".shardmind/journal.json").unlink()  # the way out the hint gives
    res = cli.run("adopt", f"git+{repo}@1.0.0", "--yes", "--json", cwd=clone)
    assert res.exit_code == 0, res.output
    status = run_shardpy("status", "--json", cwd=clone / "projects")
    assert status.returncode == 0, status.stderr
    assert Path(json.loads(status.stdout)["vault"]) == clone.resolve()
    assert tree_snapshot(victim) == before
