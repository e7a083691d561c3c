"""Fault injection: an update killed at any point leaves the vault either
fully old or fully new once the next command has run; a second writer is
refused while one runs."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.update.kit import Scenario
from tests.update.test_table import NOTE_V1

TRIALS = 16
MAX_TRIALS = 40  # a loaded machine shifts the window: go on until kills land in it
DELAY = {"SHARDPY_TEST_APPLY_DELAY": "0.003"}


def files(version: int) -> dict[str, str | bytes]:
    out: dict[str, str | bytes] = {f"brain/n{i}.md": f"note {i} v{version}\n" for i in range(40)}
    out["brain/Note.md"] = NOTE_V1.replace("alpha", f"alpha v{version}")
    if version == 2:
        out["brain/added.md"] = "added in v2\n"
        # A file turned into a folder and a folder into a file: their deletes run first, and a kill
        # between them and the writes must be undone like any other (transaction._order).
        out["guide/deep/intro.md"], out["kit"] = "intro\n", "kit file\n"
    else:
        out["brain/removed.md"] = "removed in v2\n"
        out["guide"], out["kit/sub/a.md"] = "plain guide\n", "a\n"
    return out


def signature(vault: Path) -> dict[str, Any]:
    """Everything an update changes, minus timestamps and backups."""
    sig: dict[str, Any] = {}
    for p in sorted(vault.rglob("*")):
        rel = p.relative_to(vault).as_posix()
        if not p.is_file() or rel.startswith((".shardmind/backups/", ".shardmind/journal")):
            continue
        if rel in (".shardmind/state.json", ".shardmind/update-check.json", ".shardmind/local.json"):
            data = json.loads(p.read_text())
            for key in ("updated_at", "checked_at"):
                data.pop(key, None)
            sig[rel] = data
        else:
            sig[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return sig


def shardpy(vault: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "shardpy", *args],
        cwd=vault,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def test_killed_update_is_all_old_or_all_new(sc: Scenario, tmp_path: Path) -> None:
    sc.shard("1.0.0", files(1))
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("gamma", "gamma (mine)"))
    sc.write("mine.md", "my own note\n")
    sc.shard("2.0.0", files(2))
    pristine = tmp_path / "pristine"
    shutil.copytree(sc.vault, pristine)
    old = signature(pristine)
    reference = tmp_path / "reference"
    shutil.copytree(pristine, reference)
    started = time.monotonic()
    assert shardpy(reference, "update", "--yes", env=DELAY).wait() in (0, 3)  # 3: conflicts left
    # Kill times spread over a whole run as long as it takes on this machine now.
    span = time.monotonic() - started
    new = signature(reference)
    assert new != old
    rng = random.Random(1234)
    outcomes = {"old": 0, "new": 0}
    interrupted = 0
    trial = 0
    while trial < TRIALS or (interrupted < 2 and trial < MAX_TRIALS):
        trial += 1
        vault = tmp_path / f"trial{trial}"
        shutil.copytree(pristine, vault)
        proc = shardpy(vault, "update", "--yes", env=DELAY)
        time.sleep(rng.uniform(0.1, 1.0) * span)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        interrupted += (vault / ".shardmind/journal.json").exists()
        assert shardpy(vault, "status").wait() == 0  # the next command recovers first
        after = signature(vault)
        assert not (vault / ".shardmind/journal.json").exists()
        assert after in (old, new), f"trial {trial}: neither old nor new"
        outcomes["old" if after == old else "new"] += 1
        shutil.rmtree(vault)
    assert outcomes["old"] + outcomes["new"] == trial
    print(
        f"\nkilled mid-transaction: {interrupted}/{trial}; ended old {outcomes['old']}, new {outcomes['new']}"
    )
    assert interrupted > 0, "no trial hit the transaction window"


def test_ctrl_c_rolls_back_and_exits_130(sc: Scenario) -> None:
    sc.shard("1.0.0", files(1))
    sc.install("--defaults")
    sc.shard("2.0.0", files(2))
    before = signature(sc.vault)
    proc = shardpy(sc.vault, "update", "--yes", env={"SHARDPY_TEST_APPLY_DELAY": "0.02"})
    deadline = time.monotonic() + 20
    while not (sc.vault / ".shardmind/journal.json").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    assert proc.wait() == 130
    assert signature(sc.vault) == before
    assert not (sc.vault / ".shardmind/journal.json").exists()


def test_second_writer_is_refused(sc: Scenario) -> None:
    sc.shard("1.0.0", files(1))
    sc.install("--defaults")
    sc.shard("2.0.0", files(2))
    # Slow enough (≈4 s of writes) that the second command starts inside the
    # transaction even when a loaded machine takes seconds to start Python.
    proc = shardpy(sc.vault, "update", "--yes", env={"SHARDPY_TEST_APPLY_DELAY": "0.1"})
    deadline = time.monotonic() + 20
    while not (sc.vault / ".shardmind/journal.json").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    second = subprocess.run(
        [sys.executable, "-m", "shardpy", "update", "--yes", "--json"],
        cwd=sc.vault,
        capture_output=True,
        text=True,
    )
    assert proc.wait() == 0
    assert second.returncode == 1
    assert json.loads(second.stdout)["error"]["code"] == "VAULT_LOCKED"


def test_a_journal_half_written_at_a_kill_is_removed_by_the_next_command(sc: Scenario) -> None:
    # A kill inside atomic_write of the journal leaves its temporary file and no journal;
    # found by test_killed_update_is_all_old_or_all_new (trial 13 of a loaded run).
    sc.shard("1.0.0", files(1))
    sc.install("--defaults")
    before = signature(sc.vault)
    side = sc.vault / ".shardmind"
    half = side / ".shardpy-tmp-0a1b2c3d-journal.json"
    half.write_text('{"version": 2, "pha')
    other = side / ".shardpy-tmp-0a1b2c3d-notes.txt"  # not the journal's temporary: left alone
    other.write_text("x")
    assert shardpy(sc.vault, "status").wait() == 0
    assert not half.exists()
    assert other.exists()
    other.unlink()
    assert signature(sc.vault) == before
