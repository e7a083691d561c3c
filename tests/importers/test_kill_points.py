"""Issue 13: a kill at each stage of an import's apply through the batched transaction (while the
journal is filled, while plan.json is written, as the run is sealed, between batches, after the
ledger commit), then --resume (or, when nothing had been written, the import again), ends with
exactly the notes of an uninterrupted run; --resume never calls an unsealed run finished."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.importers.fixtures import generated_project, tree_hash
from tests.importers.test_resume import _notes

ROOT = Path(__file__).resolve().parents[2]

KILL = """
import os, sys
import shardpy.apply.executor as x
import shardpy.apply.finish as f
import shardpy.apply.runjournal as j
where, nth = os.environ["KILL_AT"].split(":")
calls = [0]
def dying(real):
    def call(*args, **kwargs):
        calls[0] += 1
        if calls[0] == int(nth):
            os._exit(9)  # as SIGKILL
        return real(*args, **kwargs)
    return call
if where == "add":
    j.Journal.add = dying(j.Journal.add)  # the journal half filled: still planning
elif where == "plan_json":
    j._write_stream = dying(j._write_stream)  # steps committed, plan.json not yet written
elif where == "seal_state":
    j.Journal.set_meta = dying(j.Journal.set_meta)  # plan.json written, state not yet "applying"
elif where == "batch":
    x.SYNC_EVERY = 4
    x._Run.mark_done = dying(x._Run.mark_done)  # some batches recorded, the next written, not recorded
elif where == "finish":
    f._finish = dying(f._finish)  # ledger and state committed, result.json not written
elif where == "planned":
    import shardpy.flows.importflow as flow
    plan = flow.build_plan
    def planned(*args, **kwargs):
        plan(*args, **kwargs)
        os._exit(9)  # the whole plan made, the run's journal not yet
    flow.build_plan = planned
sys.argv = ["shardpy", *sys.argv[1:]]
from shardpy.cli.app import main
main()
"""


def _shardpy(*args: str | Path, kill: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHARDPY_")}
    env["PYTHONPATH"] = str(ROOT)
    if kill is not None:
        env["KILL_AT"] = kill
        argv = [sys.executable, "-c", KILL, *map(str, args)]
    else:
        argv = [sys.executable, "-m", "shardpy", *map(str, args)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, bytes]]:
    base = tmp_path_factory.mktemp("killpoints")
    src = generated_project(base / "src", 24)
    ref = base / "ref"
    ref.mkdir()
    done = _shardpy("import", "--from", "basic-memory", src, ref, "--apply")
    assert done.returncode == 0, done.stderr
    notes = _notes(ref)
    assert len(notes) >= 24
    return src, notes


@pytest.mark.parametrize("kill", ["add:1", "add:12", "plan_json:1", "seal_state:1", "batch:3", "finish:1"])
def test_kill_then_resume_ends_with_the_uninterrupted_notes(
    tmp_path: Path, reference: tuple[Path, dict[str, bytes]], kill: str
) -> None:
    src, expected = reference
    vault = tmp_path / "vault"
    vault.mkdir()
    killed = _shardpy("import", "--from", "basic-memory", src, vault, "--apply", kill=kill)
    assert killed.returncode == 9, killed.stdout + killed.stderr
    resumed = _shardpy("import", "--resume", "--vault", vault, "--json")
    out = json.loads(resumed.stdout)
    if kill.startswith(("add", "plan_json", "seal_state")):
        # The plan was not sealed: nothing was written, and resume says so instead of "finished".
        assert resumed.returncode == 1 and out["error"]["code"] == "IMPORT_NOTHING_TO_RESUME", out
        assert "interrupted while its plan" in out["error"]["message"]
        assert _notes(vault) == {}
        again = _shardpy("import", "--from", "basic-memory", src, vault, "--apply")
        assert again.returncode == 0, again.stderr
    elif kill.startswith("batch"):
        assert resumed.returncode == 0, out
        assert out["resumed"] is True and 0 < out["remaining"] < out["steps"], out
        assert out["errors"] == [] and out["changed_meanwhile"] == []
    else:  # finished but for its result file: nothing left to resume
        assert resumed.returncode == 1 and out["error"]["code"] == "IMPORT_NOTHING_TO_RESUME", out
    assert _notes(vault) == expected
    rerun = _shardpy("import", "--from", "basic-memory", src, vault, "--apply", "--json")
    assert rerun.returncode == 0, rerun.stderr
    assert json.loads(rerun.stdout)["summary"]["unchanged"] == len(expected)


def test_a_kill_as_planning_ends_leaves_nothing(
    tmp_path: Path, reference: tuple[Path, dict[str, bytes]]
) -> None:
    """Issue 27: planning writes nothing, so a run killed as its plan is complete leaves the vault
    as it was - no run folder, no journal for the next command to discard (before, the journal was
    made first and filled while planning)."""
    src, expected = reference
    vault = tmp_path / "vault"
    vault.mkdir()
    killed = _shardpy("import", "--from", "basic-memory", src, vault, "--apply", kill="planned:1")
    assert killed.returncode == 9, killed.stdout + killed.stderr
    assert tree_hash(vault) == {}  # not even .shardmind/
    resumed = _shardpy("import", "--resume", "--vault", vault, "--json")
    assert json.loads(resumed.stdout)["error"]["code"] == "IMPORT_NOTHING_TO_RESUME"
    again = _shardpy("import", "--from", "basic-memory", src, vault, "--apply")
    assert again.returncode == 0, again.stderr
    assert _notes(vault) == expected
