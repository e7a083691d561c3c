"""``shardpy sync --watch`` as a real process (issue 30): it syncs after a change, a second
watcher refuses, SIGTERM stops it between steps, and a watcher killed in the middle of a
merge leaves nothing the next one cannot finish (never a merge left behind, never the lock)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from shardpy.sync.watch import DEBOUNCE_S, POLL_S
from tests.gitsync.kit import git
from tests.shardkit import child_env, run_shardpy, shardpy_argv
from tests.sync.kit import Fleet

NOTE = "---\ntitle: Plan\nstatus: draft\n---\n# Plan\n\none\ntwo\nthree\n"
PATIENCE_S = 90.0  # how long to wait for the watcher to act (a wait, never an assertion)


def _until(what: Callable[[], bool], proc: subprocess.Popen[str] | None = None) -> None:
    end = time.monotonic() + PATIENCE_S
    while not what():
        if proc is not None and proc.poll() is not None:
            return
        if time.monotonic() > end:
            raise AssertionError("the watcher did not get there")
        time.sleep(0.2)


@pytest.fixture
def watchers() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=30)


def _watch(
    fleet: Fleet,
    machine: str,
    started: list[subprocess.Popen[str]],
    env: dict[str, str] | None = None,
    interval: str = "1",
) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        shardpy_argv("sync", "--watch", "--interval", interval),
        cwd=fleet.machines[machine],
        env=child_env(env),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    started.append(proc)
    return proc


def _hub_head(fleet: Fleet) -> str:
    return git(fleet.root, "--git-dir", str(fleet.hub), "rev-parse", "main").stdout.strip()


@pytest.mark.parametrize("detector", ["default", "poll"])  # inotify on Linux; the stat poll
def test_the_watcher_syncs_a_change_refuses_a_second_and_stops_on_sigterm(
    fleet: Fleet, watchers: list[subprocess.Popen[str]], detector: str
) -> None:
    fleet.start({"notes/plan.md": NOTE})
    # A long interval: only the change can start the second round.
    proc = _watch(fleet, "b", watchers, {"SHARDPY_SYNC_WATCH": detector}, interval="600")
    assert proc.stdout is not None and "sync: " in proc.stdout.readline()  # the first round
    fleet.write("b", "notes/plan.md", NOTE + "four\n")
    hub_note = ("--git-dir", str(fleet.hub), "show", "main:notes/plan.md")
    _until(lambda: "four" in git(fleet.root, *hub_note).stdout)
    second = run_shardpy("sync", "--watch", "--json", cwd=fleet.machines["b"])
    assert second.returncode == 1 and "SYNC_WATCH_RUNNING" in second.stdout
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=PATIENCE_S)
    assert proc.returncode == 0, err
    lines = out.splitlines()
    assert lines[-1].endswith("sync: watcher stopped")
    assert any("committed 1 path(s)" in line and "origin: pushed" in line for line in lines)


@pytest.mark.parametrize("detector", ["default", "poll"])
def test_a_file_one_machine_keeps_for_itself_starts_no_round(
    fleet: Fleet, watchers: list[subprocess.Popen[str]], detector: str
) -> None:
    """Obsidian rewrites .obsidian/workspace.json as you click, an editor its swap file as you
    type: each started a round (a fetch from every remote, a log line) every few seconds. They
    start none now; a note's change still does."""
    import threading

    fleet.start({"notes/plan.md": NOTE, ".obsidian/app.json": "{}\n"})  # Obsidian's folder exists
    proc = _watch(fleet, "b", watchers, {"SHARDPY_SYNC_WATCH": detector}, interval="600")
    assert proc.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True)
    reader.start()
    _until(lambda: len(lines) >= 1, proc)  # the first round
    for k in range(6):  # clicking around for three seconds
        fleet.write("b", ".obsidian/workspace.json", f'{{"active": {k}}}\n')
        fleet.write("b", "notes/.plan.md.swp", f"swap {k}\n")
        time.sleep(0.5)
    time.sleep(DEBOUNCE_S + 3 * POLL_S)
    assert len(lines) == 1, lines
    fleet.write("b", "notes/plan.md", NOTE + "four\n")
    _until(lambda: len(lines) >= 2, proc)
    assert "committed 1 path(s)" in lines[1], lines


def test_a_watcher_killed_mid_merge_is_finished_by_the_next(
    fleet: Fleet, watchers: list[subprocess.Popen[str]]
) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.write("a", "notes/plan.md", NOTE.replace("two", "two on a"))
    fleet.sync("a")
    fleet.write("b", "notes/plan.md", NOTE.replace("two", "two on b"))
    b = fleet.machines["b"]
    killed = _watch(fleet, "b", watchers, {"SHARDPY_TEST_SYNC_FAULT": "merging"})
    killed.wait(timeout=PATIENCE_S)
    assert killed.returncode == -signal.SIGKILL
    # Killed with git's merge half done: the conflict is in the work tree, MERGE_HEAD is there.
    assert (b / ".git/MERGE_HEAD").exists()
    assert git(b, "config", "shardpy-sync.merging").stdout.strip() == "refs/remotes/origin/main"
    proc = _watch(fleet, "b", watchers)
    _until(lambda: git(b, "rev-parse", "HEAD").stdout == git(b, "rev-parse", "origin/main").stdout, proc)
    _until(lambda: _hub_head(fleet) == git(b, "rev-parse", "HEAD").stdout.strip(), proc)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=PATIENCE_S)
    assert "undid the interrupted merge of refs/remotes/origin/main" in out
    assert not (b / ".git/MERGE_HEAD").exists()
    assert git(b, "config", "shardpy-sync.merging", ok=False).returncode != 0
    assert fleet.clean("b")
    text = fleet.read("b", "notes/plan.md")
    assert "two on a" in text and "two on b" in text  # both kept (markers), nothing lost
    fleet.settle()  # the vault lock is free: plain syncs run and converge
    assert len({fleet.head(m) for m in ("a", "b", "c")}) == 1


def test_print_unit(fleet: Fleet) -> None:
    fleet.start()
    systemd = fleet.shardpy("a", "sync", "--print-unit", "systemd").stdout
    assert "ExecStart=" in systemd and "--watch" in systemd and str(fleet.machines["a"]) in systemd
    launchd = fleet.shardpy("a", "sync", "--print-unit", "launchd").stdout
    assert "<key>ProgramArguments</key>" in launchd
    assert fleet.shardpy("a", "sync", "--print-unit", "cron", ok=False).exit_code == 2


def test_printed_units_name_an_odd_vault_path_exactly(tmp_path: Path) -> None:
    """A vault path with a space, `%` (a systemd specifier), `$` (a systemd variable), quotes and
    a backslash: the launchd agent gives it back byte for byte (plistlib), the systemd unit passes
    systemd-analyze (where installed); a control character is a typed refusal, never a unit
    that means another path."""
    import plistlib
    import shutil
    import subprocess
    import sys

    from shardpy.errors import ShardpyError
    from shardpy.sync.watch import unit_text

    vault = tmp_path / "my vault 100%z $HOME q\"x s'q b\\s"
    agent = plistlib.loads(unit_text("launchd", vault, 60).encode())
    assert agent["ProgramArguments"] == [
        sys.executable,
        "-I",
        "-m",
        "shardpy",
        "sync",
        str(vault),
        "--watch",
        "--interval",
        "60",
    ]
    unit = tmp_path / "shardpy-sync.service"
    unit.write_text(unit_text("systemd", vault, 60), encoding="utf-8")
    # systemd's own rules (systemd.service(5)): "%%" a percent sign, "$$" a dollar, C escapes.
    assert '/my vault 100%%z $$HOME q\\"x s\'q b\\\\s"' in unit.read_text()
    if shutil.which("systemd-analyze"):
        done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
    for kind in ("systemd", "launchd"):
        with pytest.raises(ShardpyError) as refused:
            unit_text(kind, tmp_path / "line\nbreak", 60)
        assert refused.value.code == "SYNC_UNIT_PATH"


def test_status_lists_notes_left_with_markers(fleet: Fleet, tmp_path: Path) -> None:
    fleet.start({"notes/plan.md": NOTE})
    fleet.write("a", "notes/plan.md", NOTE.replace("two", "two on a"))
    fleet.sync("a")
    fleet.write("b", "notes/plan.md", NOTE.replace("two", "two on b"))
    report = fleet.sync("b")
    assert report["remotes"][0]["conflicts"] == ["notes/plan.md"]
    status = fleet.shardpy("b", "status", "--json").json()
    assert status["git"]["conflict_markers"] == ["notes/plan.md"]
