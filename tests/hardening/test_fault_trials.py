"""Item 6: the fault-injection harness's quick mode runs in the suite (its
long runs are reported from bench/fault_trials.py itself)."""

from __future__ import annotations

import subprocess
import sys

from tests.shardkit import REPO_ROOT, child_env


def test_quick_fault_trials_find_no_broken_vault() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO_ROOT / "bench/fault_trials.py"), "--quick"],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    total = [line for line in done.stdout.splitlines() if line.startswith("total")]
    assert total and "trials    4" in total[0] and "failures 0" in total[0], done.stdout
