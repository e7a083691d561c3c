"""Kill the apply at random points (SIGKILL, child process); --resume ends with exactly the notes of
an uninterrupted run. Also: refusing new runs while one is interrupted, --abandon, Ctrl-C."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from shardpy.apply import executor as apply_mod
from shardpy.apply.batch import incomplete_runs
from shardpy.errors import ShardpyError
from shardpy.flows.importflow import abandon_run, resume
from tests.importers.fixtures import basic_memory_project, generated_project, tree_hash
from tests.importers.helpers import do_import

ROOT = Path(__file__).resolve().parents[2]
_STAMP = re.compile(rb"imported_at: \S+")


def _notes(vault: Path) -> dict[str, bytes]:
    """Every file outside .shardmind, with the run's instant blanked out."""
    out: dict[str, bytes] = {}
    for p in sorted(vault.rglob("*")):
        rel = p.relative_to(vault).as_posix()
        if rel.startswith(".shardmind") or not p.is_file():
            continue
        try:
            data = p.read_bytes()
        except FileNotFoundError:  # a writer's temporary file, renamed while we listed (polling)
            continue
        out[rel] = _STAMP.sub(b"imported_at: X", data)
    return out


def _child(source: Path, vault: Path, delay: float) -> subprocess.Popen[bytes]:
    env = {**os.environ, apply_mod.STEP_DELAY_ENV: str(delay), "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "shardpy",
            "import",
            "--from",
            "basic-memory",
            str(source),
            str(vault),
            "--apply",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _source(tmp_path: Path) -> Path:
    src = generated_project(tmp_path / "src", 60)
    basic_memory_project(src / "fixture", extras=False)
    return src


def test_kill_at_random_points_then_resume(tmp_path: Path) -> None:
    src = _source(tmp_path)
    ref = tmp_path / "ref"
    ref.mkdir()
    start = time.monotonic()
    # 10 ms per step keeps the apply window well over half of each run, so that at least 5 of the 14
    # random kills land in it (with 4 ms it was ~40% of a run and this test failed about 1 time in 3).
    proc = _child(src, ref, 0.01)
    assert proc.wait(timeout=60) == 0, proc.stderr.read() if proc.stderr else ""
    duration = time.monotonic() - start
    expected = _notes(ref)
    assert len(expected) > 60
    rng = random.Random(1234)
    phases = {"before": 0, "during": 0, "after": 0}
    trial = -1
    # 14 trials, and more (up to 40) while fewer than 2 kills landed mid-apply: on a loaded
    # machine the random instants can miss the apply window by chance.
    while (trial := trial + 1) < 14 or (phases["during"] < 2 and trial < 40):
        vault = tmp_path / f"v{trial}"
        vault.mkdir()
        proc = _child(src, vault, 0.01)
        time.sleep(rng.uniform(0.1, duration))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        pending = [r for r in incomplete_runs(vault) if r[1] != "planning"]
        if pending:
            phases["during"] += 1
            with pytest.raises(ShardpyError) as e:  # a new run is refused until the old one is finished
                do_import("basic-memory", src, vault, apply=True)
            assert e.value.code == "IMPORT_RUN_INTERRUPTED"
            out = resume(vault)
            assert out.applied.errors == [] and out.applied.changed == []
        elif (vault / ".shardmind/imports/ledger.sqlite3").exists():
            phases["after"] += 1
            if _notes(vault) != expected:
                # Killed while still planning: nothing was written, and a new run is allowed.
                assert _notes(vault) == {}
                do_import("basic-memory", src, vault, apply=True)
        else:
            phases["before"] += 1
            with pytest.raises(ShardpyError) as e:
                resume(vault)
            assert e.value.code == "IMPORT_NOTHING_TO_RESUME"
            assert _notes(vault) == {}
            do_import("basic-memory", src, vault, apply=True)
        assert _notes(vault) == expected, f"trial {trial}"
        assert incomplete_runs(vault) == []
        again = do_import("basic-memory", src, vault).plan.counts()
        assert again["create"] == again["update"] == again["error"] == 0
    assert phases["during"] >= 2, phases  # timing varies with machine load


def test_abandon_rolls_back(tmp_path: Path) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Mine.md").write_text("mine\n", encoding="utf-8")
    before = tree_hash(vault)
    proc = _child(src, vault, 0.02)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if any(r[1] == "applying" for r in incomplete_runs(vault)) and len(_notes(vault)) > 5:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert incomplete_runs(vault)
    run_id, res = abandon_run(vault)
    assert res.removed >= 5 and res.left == []
    after = {k: v for k, v in tree_hash(vault).items() if not k.startswith(".shardmind")}
    assert after == before
    assert incomplete_runs(vault) == []
    assert (vault / ".shardmind/imports" / run_id / "result.json").is_file()
    with pytest.raises(ShardpyError) as e:
        abandon_run(vault)
    assert e.value.code == "IMPORT_NOTHING_TO_RESUME"


def _killed_after_three_notes(tmp_path: Path) -> tuple[Path, Path]:
    """(source, vault) of an --apply run killed once it wrote three notes: resumable."""
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    proc = _child(src, vault, 0.02)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(_notes(vault)) < 3:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    return src, vault


def test_resume_finishes_planned_bytes_even_if_source_changed(tmp_path: Path) -> None:
    src, vault = _killed_after_three_notes(tmp_path)
    changed = next(p for p in sorted(src.rglob("*.md")) if "fixture" not in p.parts)
    changed.write_text(changed.read_text("utf-8") + "- [late] changed meanwhile #x\n", encoding="utf-8")
    out = resume(vault)
    assert out.source_changed is not None
    total_notes = len(_notes(vault))
    assert total_notes == out.total
    # The change is picked up by the next run as an ordinary update.
    counts = do_import("basic-memory", src, vault).plan.counts()
    assert counts["update"] == 1 and counts["create"] == 0


def _ctrl_c_at_note(monkeypatch: pytest.MonkeyPatch, n: int) -> Any:
    """Ctrl-C as the ``n``-th note is written; the real writer (to put back)."""
    calls = {"n": 0}
    real = apply_mod.atomic_write

    def flaky(root: Path, rel: str, data: bytes, **kw: object) -> list[str]:
        if not rel.startswith(".shardmind"):
            calls["n"] += 1
            if calls["n"] == n:
                raise KeyboardInterrupt
        return real(root, rel, data)

    monkeypatch.setattr(apply_mod, "atomic_write", flaky)
    return real


def test_ctrl_c_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    _ctrl_c_at_note(monkeypatch, 10)
    with pytest.raises(KeyboardInterrupt):
        do_import("basic-memory", src, vault, apply=True)
    assert _notes(vault) == {}
    assert incomplete_runs(vault) == []


def test_ctrl_c_during_a_resume_says_the_run_is_still_interrupted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C during --resume printed "every change was rolled back": the notes written stayed,
    and the next import was refused as interrupted (a helper's probe). The run stays resumable,
    and the message says so."""
    _, vault = _killed_after_three_notes(tmp_path)
    real = _ctrl_c_at_note(monkeypatch, 3)
    with pytest.raises(KeyboardInterrupt, match="--resume") as caught:
        resume(vault)
    assert "rolled back" not in str(caught.value)
    assert incomplete_runs(vault)  # still resumable
    monkeypatch.setattr(apply_mod, "atomic_write", real)
    out = resume(vault)
    assert len(_notes(vault)) == out.total
