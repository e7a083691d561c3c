"""Item 15: status speaks where it should: a file still holding conflict
markers is an "unresolved conflict", an interrupted import is mentioned, and
an update a dry run saw is "update available" (the dry run wrote nothing
into the vault)."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.shardkit import Cli, make_shard, tree_snapshot

FILES = {"Home.md": "# Home\n", "brain/a.md": "one\ntwo\n"}


@pytest.fixture
def vault(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))
    cli.install_json(make_shard(tmp_path / "src", files=FILES), tmp_path / "vault", "--defaults")
    return tmp_path / "vault"


def test_conflict_markers_are_an_unresolved_conflict(vault: Path, cli: Cli) -> None:
    (vault / "brain/a.md").write_text("one\n<<<<<<< yours\nmine\n=======\ntheirs\n>>>>>>> shard 2.0.0\n")
    (vault / "Home.md").write_text("# Home\n\n======= not a conflict\n")
    res = cli.run("status", cwd=vault)
    assert "unresolved conflict brain/a.md" in res.stdout
    assert "Home.md" not in res.stdout.split("unresolved conflict")[-1]
    assert cli.run("status", "--json", cwd=vault).json()["unresolved_conflicts"] == ["brain/a.md"]
    assert "brain/a.md (unresolved conflict)" in cli.run("status", "-v", cwd=vault).stdout


def test_an_interrupted_import_is_mentioned(vault: Path, cli: Cli) -> None:
    run = vault / ".shardmind/imports/20260101T000000Z-abcdef"
    run.mkdir(parents=True)
    with sqlite3.connect(run / "journal.sqlite3") as db:  # as a run killed while applying leaves it
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
        db.execute("INSERT INTO meta VALUES ('state', 'applying')")
    res = cli.run("status", cwd=vault)
    assert "import interrupted" in res.stdout and "shardpy import --resume" in res.stdout
    assert cli.run("status", "--json", cwd=vault).json()["interrupted_imports"] == [run.name]


def test_a_dry_run_update_that_saw_a_newer_release(vault: Path, tmp_path: Path, cli: Cli) -> None:
    shutil.rmtree(tmp_path / "src")
    make_shard(tmp_path / "src", files={**FILES, "Home.md": "# Home 2\n"}, manifest={"version": "2.0.0"})
    before = tree_snapshot(vault)
    assert cli.run("update", "--dry-run", cwd=vault).exit_code == 0
    assert tree_snapshot(vault) == before
    res = cli.run("status", cwd=vault)
    assert "update available: 2.0.0" in res.stdout
    assert cli.run("update", "--yes", cwd=vault).exit_code == 0
    assert "update available" not in cli.run("status", cwd=vault).stdout


def test_a_managed_file_replaced_by_a_folder_is_said_to_be_one(vault: Path, cli: Cli) -> None:
    """It was listed as missing, as if deleted (the closing note's left-out list)."""
    (vault / "brain/a.md").unlink()
    (vault / "brain/a.md").mkdir()
    (vault / "brain/a.md/inside.md").write_text("mine\n")
    data = cli.run("status", "--json", cwd=vault).json()
    assert data["missing"] == ["brain/a.md"]
    assert any("brain/a.md is a folder now" in w for w in data["warnings"])
    assert "brain/a.md is a folder now" in " ".join(cli.run("status", cwd=vault).stdout.split())
