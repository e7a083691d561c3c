"""Item 6: the fault-injection harness's quick mode runs in the suite (its
long runs are reported from bench/fault_trials.py itself)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.shardkit import REPO_ROOT, Cli, child_env, make_shard


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


def test_an_install_killed_while_writing_its_journal_is_cleaned_up(tmp_path: Path, cli: Cli) -> None:
    """Seen by the harness: killed between the journal's temporary file and its
    rename, an install leaves `.shardmind/.shardpy-tmp-…-journal.json` (not a
    vault yet, so `status` has nothing to recover); the next install removes it."""
    dest = tmp_path / "vault"
    (dest / ".shardmind").mkdir(parents=True)
    (dest / ".shardmind/.shardpy-tmp-0123abcd-journal.json").write_text('{"phase": "backing')
    shard = make_shard(tmp_path / "shard", files={"a.md": "a\n"})
    cli.install_json(shard, dest, "--defaults")
    assert [p.name for p in (dest / ".shardmind").iterdir() if ".shardpy-tmp-" in p.name] == []
