"""Helpers for the attacks of issue 11: a victim folder outside the vault, planted journals,
and a shardpy child killed at an exact point of a transaction."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from tests.shardkit import child_env, tree_snapshot, write_tree

VICTIM_FILES = {"thesis.md": "data\n", "chapters/one.md": "chapter one\n", "chapters/two.md": "two\n"}


def make_victim(root: Path) -> tuple[Path, dict[str, str]]:
    """A folder outside every vault holding the user's precious files; (path, snapshot)."""
    victim = write_tree(root / "victim", VICTIM_FILES)
    return victim, tree_snapshot(victim)


def hostile_journal(victim: Path, **extra: Any) -> str:
    """The issue's planted journal: delete the victim folder as a backup and a file outside."""
    data: dict[str, Any] = {
        "phase": "applying",
        "backup_dir": str(victim),
        "touched": [{"path": "x.md", "existed": False}],
        "new_dirs": [],
    }
    data.update(extra)
    return json.dumps(data)


def tarball(folder: Path, dest: Path) -> Path:
    with tarfile.open(dest, "w:gz") as tar:
        tar.add(folder, arcname=folder.name)
    return dest


KILL_AFTER = """
import os, sys
import shardpy.apply.transaction as t
limit = int(os.environ["KILL_AFTER_OPS"])
real = t.Transaction._apply_op
done = [0]
def apply_then_die(self, op, durable):
    if done[0] == limit:
        os._exit(9)  # as SIGKILL: no rollback, no cleanup
    real(self, op, durable)
    done[0] += 1
t.Transaction._apply_op = apply_then_die
sys.argv = ["shardpy", *sys.argv[1:]]
from shardpy.cli.app import main
main()
"""


def killed_after(ops: int, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``shardpy ARGS`` in a child that dies (no rollback) before its transaction's op number ``ops``."""
    proc = subprocess.run(
        [sys.executable, "-c", KILL_AFTER, *args],
        cwd=cwd,
        env=child_env({"KILL_AFTER_OPS": str(ops)}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 9, proc.stdout + proc.stderr
    return proc


IMPORT_KILL = """
import os, sys
import shardpy.apply.batch as a
import shardpy.flows.importflow as s
where = os.environ["KILL_AT"]
def die(*args, **kwargs):
    os._exit(9)  # as SIGKILL
if where == "seal":
    a.Journal.seal = die  # the plan's steps added, not yet sealed
else:
    s.execute = die  # sealed, no note written yet
sys.argv = ["shardpy", *sys.argv[1:]]
from shardpy.cli.app import main
main()
"""


def import_killed(at: str, *args: str | Path, cwd: Path) -> None:
    """``shardpy import ARGS`` killed at ``seal`` (plan not yet sealed) or ``execute`` (sealed)."""
    proc = subprocess.run(
        [sys.executable, "-c", IMPORT_KILL, "import", *map(str, args)],
        cwd=cwd,
        env=child_env({"KILL_AT": at}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 9, proc.stdout + proc.stderr
