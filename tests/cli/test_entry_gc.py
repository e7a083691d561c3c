"""The console script's collector policy (shardpy.cli.app.main, GC_THRESHOLD): a first-generation
threshold that start-up does not trip over and over, and what is alive at exit frozen so the
interpreter's last collection skips it. Whatever way the command ends: a value, SystemExit,
an error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shardkit import REPO_ROOT

# atexit runs after main() returned or raised, before the interpreter's last collection.
PROBE = (
    "import atexit, gc, sys\n"
    "from shardpy.cli.app import GC_THRESHOLD, main\n"
    "atexit.register(lambda: print(gc.get_threshold()[0] == GC_THRESHOLD, gc.get_freeze_count() > 0))\n"
    "sys.argv = ['shardpy', *sys.argv[1:]]\n"
    "main()\n"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],  # returns a value
        ["status", "--json"],  # leaves by SystemExit from a plain command
        ["search", "--mode", "nonsense", "x"],  # a typed error
    ],
)
def test_the_threshold_is_raised_and_the_survivors_frozen(argv: list[str], tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHARDPY_")}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        env={**env, "PYTHONPATH": str(REPO_ROOT), "SHARDPY_CACHE_DIR": str(tmp_path)},
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert done.stdout.split()[-2:] == ["True", "True"], done.stdout + done.stderr


def test_the_default_threshold_stays_for_a_library_caller() -> None:
    """Importing shardpy changes nothing: only the console script sets the policy."""
    code = "import gc; t = gc.get_threshold(); import shardpy.cli.app; print(gc.get_threshold() == t)"
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
        check=True,
    )
    assert done.stdout.split() == ["True"]
