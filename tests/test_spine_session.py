"""Issue 27: every command writes through one session (``shardpy/apply/session.py``), which
recovers both journal kinds before anything else. An import run killed while applying is the
user's to settle, so every writing command refuses with ``IMPORT_RUN_INTERRUPTED`` (as a new
import does) and writes nothing, while ``status`` only reports it; a run killed while it was
still planning wrote nothing and is discarded by the next writing command."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from shardpy.apply.batch import incomplete_runs
from tests.importers.fixtures import basic_memory_project
from tests.security.kit import import_killed
from tests.shardkit import Cli, run_shardpy, tree_snapshot
from tests.update.kit import Scenario


@pytest.fixture
def sc(tmp_path: Path, cli: Cli) -> Scenario:
    sc = Scenario(tmp_path, cli)
    sc.shard("1.0.0", {"brain/Note.md": "# Note\n"})
    sc.install("--defaults")
    sc.shard("1.1.0", {"brain/Note.md": "# Note, newer\n", "brain/New.md": "# New\n"})
    return sc


def _killed_import(sc: Scenario, at: str) -> None:
    source = basic_memory_project(sc.root / "bm", extras=False)
    import_killed(at, "--from", "basic-memory", source, sc.vault, "--apply", cwd=sc.root)


def _error(done: subprocess.CompletedProcess[str]) -> str:
    out = json.loads(done.stdout)
    return str(out["error"]["code"])


COMMANDS = {
    "update": ["update", "--json"],
    "update --dry-run": ["update", "--dry-run", "--json"],
    "adopt": ["adopt", "{src}", "--yes", "--json"],
    "git setup": ["git", "setup", "--json"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_writing_command_refuses_while_an_import_run_waits(sc: Scenario, command: str) -> None:
    _killed_import(sc, "execute")
    assert [state for _, state in incomplete_runs(sc.vault)] == ["applying"]
    before = tree_snapshot(sc.vault)
    args = [a.format(src=sc.src) for a in COMMANDS[command]]
    done = run_shardpy(*args, cwd=sc.vault)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stdout + done.stderr
    assert _error(done) == "IMPORT_RUN_INTERRUPTED"
    assert tree_snapshot(sc.vault) == before  # nothing written, the run left for --resume
    status = json.loads(run_shardpy("status", "--json", cwd=sc.vault).stdout)
    assert len(status["interrupted_imports"]) == 1  # status reports it, never refuses


def test_a_run_killed_while_planning_is_discarded_by_the_next_writing_command(sc: Scenario) -> None:
    _killed_import(sc, "seal")
    assert [state for _, state in incomplete_runs(sc.vault)] == ["planning"]
    done = run_shardpy("update", "--json", cwd=sc.vault)
    assert done.returncode == 0, done.stdout + done.stderr
    assert incomplete_runs(sc.vault) == []
    assert sc.read("brain/New.md") == "# New\n"


def test_after_resume_the_command_runs(sc: Scenario) -> None:
    _killed_import(sc, "execute")
    assert run_shardpy("import", "--resume", "--vault", sc.vault, cwd=sc.root).returncode == 0
    done = run_shardpy("update", "--json", cwd=sc.vault)
    assert done.returncode == 0, done.stdout + done.stderr
    assert sc.read("brain/New.md") == "# New\n"


def test_a_vault_id_half_written_at_a_kill_is_removed_by_the_next_command(sc: Scenario) -> None:
    """A kill inside the first transaction's write of the vault id (before its journal) leaves
    the id's temporary file and no journal; the next command's recovery removes it (the fault
    harness's adopt trial found one left behind)."""
    temp = sc.vault / ".shardmind/.shardpy-tmp-0123abcd-vault-id"
    temp.write_text("0" * 32 + "\n")
    done = run_shardpy("status", "--json", cwd=sc.vault)
    assert done.returncode == 0, done.stdout + done.stderr
    assert not temp.exists()


def test_an_adopt_killed_while_writing_the_vault_id_leaves_no_temporary_file(tmp_path: Path) -> None:
    """A first transaction killed inside its write of the vault id, before any journal or state:
    the folder held only that temporary file in a new ``.shardmind/`` (the fault harness's adopt
    trial), and ``status`` answered "not a vault" without removing it."""
    clone = tmp_path / "clone"
    (clone / ".shardmind/backups").mkdir(parents=True)
    (clone / "Note.md").write_text("# Mine\n")
    temp = clone / ".shardmind/.shardpy-tmp-0123abcd-vault-id"
    temp.write_text("0" * 32 + "\n")
    done = run_shardpy("status", "--json", cwd=clone)
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["vault"] is None
    assert not temp.exists()
    assert (clone / "Note.md").read_text() == "# Mine\n"
    assert not (clone / ".shardmind").exists() or not any((clone / ".shardmind").rglob("*.*"))
