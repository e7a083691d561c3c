"""Fault injection: kill shardpy mid-command, run the next command, check the vault.

For each writing command -- install, update, adopt, and import (of a
generated basic-memory project, 5,000 notes by default) -- a reference run
on a copy of the starting vault gives the "new" state and its duration.
Each trial copies the starting vault, starts the command in a child (its
own process group, so import's planning workers die with it), kills the
group at a random moment of that duration (SIGKILL; every tenth trial
SIGTERM, every tenth-plus-five SIGINT as Ctrl-C would), then runs the next
command (``shardpy status``, which recovers an unfinished transaction; for
import ``shardpy import --resume``; for install the install again) and checks:

- the vault is fully old or fully new (every file's hash; state.json without
  its timestamps; import run records and backups left out);
- every user note is there, byte for byte (none lost, none torn);
- no temporary file (``.shardpy-tmp-``) and no journal is left.

A kill "landed mid-write" when, right after it, the vault was neither old
nor new or held a journal or a temporary file.

    python bench/fault_trials.py [--trials N] [--notes N] [--seed S] [--only CMD ...]
    python bench/fault_trials.py --quick      (small: what the test suite runs)

Prints one line per command (trials, kills mid-write, ended old/new,
failures) and a total; exits 1 when any trial failed.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.importers.fixtures import generated_project  # noqa: E402

TMP_MARK = ".shardpy-tmp-"
IMPORTED_AT = re.compile(rb"^imported_at: .*$", re.MULTILINE)
VOLATILE_KEYS = ("updated_at", "checked_at", "installed_at", "install_date", "imported_at")
# vault-id is random per vault (two runs never agree on it) and local.json is
# this machine's clock: neither is content an interrupted command can tear.
SKIPPED = (
    ".shardmind/backups/",
    ".shardmind/imports/",
    ".shardmind/journal",
    ".shardmind/vault-id",
    ".shardmind/local.json",
)


def env() -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("SHARDPY_", "SHARDMIND_"))}
    out.update(NO_COLOR="1", PYTHONPATH=str(ROOT))
    return out


def shardpy(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardpy", *map(str, args)],
        cwd=cwd,
        env=env(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _normalised(data: object) -> object:
    if isinstance(data, dict):
        return {k: _normalised(v) for k, v in data.items() if k not in VOLATILE_KEYS}
    if isinstance(data, list):
        return [_normalised(v) for v in data]
    return data


def signature(vault: Path) -> dict[str, str]:
    """path → content hash of every file (state.json without its timestamps)."""
    sig: dict[str, str] = {}
    for dirpath, _dirs, files in os.walk(vault):
        for name in files:
            path = Path(dirpath) / name
            rel = path.relative_to(vault).as_posix()
            if rel.startswith(SKIPPED) or TMP_MARK in rel:
                continue
            data = path.read_bytes()
            if rel in (".shardmind/state.json", ".shardmind/update-check.json"):
                # A torn state file keeps its raw bytes: they differ from both, as they should.
                with contextlib.suppress(ValueError):
                    data = json.dumps(_normalised(json.loads(data)), sort_keys=True).encode()
            elif rel.endswith(".md"):
                data = IMPORTED_AT.sub(b"imported_at: -", data, count=1)  # the run's clock, not content
            sig[rel] = hashlib.sha256(data).hexdigest()
    return sig


def leftovers(vault: Path) -> list[str]:
    found = []
    for dirpath, dirs, files in os.walk(vault):
        for name in [*dirs, *files]:
            rel = (Path(dirpath) / name).relative_to(vault).as_posix()
            if TMP_MARK in name or rel == ".shardmind/journal.json":
                found.append(rel)
    return found


# --- the scenarios ------------------------------------------------------------


def write_shard(root: Path, version: int, size: int) -> Path:
    if root.exists():
        shutil.rmtree(root)
    side = root / ".shardmind"
    side.mkdir(parents=True)
    (side / "shard.yaml").write_text(
        f"apiVersion: v1\nnamespace: bench\nname: faults\nversion: {version}.0.0\n"
    )
    (side / "shard-schema.yaml").write_text(
        "schema_version: 1\nvalues:\n  user_name: {type: string, default: Ada, message: Name}\n"
        "groups: []\nmodules:\n  extra: {label: Extra, paths: [extra/], removable: true}\n"
    )
    (root / "Home.md.njk").write_text(f"# Home of {{{{ user_name }}}} (v{version})\n")
    for i in range(size):
        changed = version > 1 and i % 2 == 0
        body = f"# Note {i}\n\n" + "".join(f"line {k} of note {i}\n" for k in range(40))
        if changed:
            body = body.replace("line 3 ", f"line 3 (v{version}) ")
        folder = "extra" if i % 10 == 0 else "brain"
        if version > 1 and i % 17 == 0:
            continue  # removed in the new version
        (root / folder).mkdir(exist_ok=True)
        (root / folder / f"n{i}.md").write_text(body)
    if version > 1:
        for i in range(size // 10):
            (root / "brain" / f"added{i}.md").write_text(f"added {i}\n")
    return root


def user_notes(vault: Path, count: int) -> dict[str, bytes]:
    notes = {}
    for i in range(count):
        rel = f"mine/note{i}.md"
        data = f"# My note {i}\n\n{'my text ' * 30}\n".encode()
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_bytes(data)
        notes[rel] = data
    edited = vault / "brain/n1.md"
    if edited.exists():
        edited.write_text(edited.read_text() + "my edit\n")
        notes["brain/n1.md"] = edited.read_bytes()
    return notes


@dataclass
class Scenario:
    name: str
    start: Path  # the starting vault (copied per trial)
    argv: list[str]  # the command, run inside the vault copy
    next_argv: list[str]  # the next command after a kill
    notes: dict[str, bytes]  # user files that must survive byte for byte
    old: dict[str, str] = field(default_factory=dict)
    new: dict[str, str] = field(default_factory=dict)
    duration: float = 1.0


COMMANDS = ("install", "update", "adopt", "import")


def scenarios(work: Path, size: int, notes: int, user: int, only: set[str]) -> list[Scenario]:
    src1 = write_shard(work / "src1", 1, size)
    builders = {"install": _install, "update": _update, "adopt": _adopt, "import": _import}
    return [builders[name](work, src1, size, notes, user) for name in COMMANDS if name in only]


def _install(work: Path, src1: Path, size: int, notes: int, user: int) -> Scenario:
    start = work / "start-install"
    start.mkdir()
    # A killed install is not a vault yet: the user's next command is the install again.
    argv = ["install", str(src1), ".", "--defaults"]
    return Scenario("install", start, argv, argv, {})


def _update(work: Path, src1: Path, size: int, notes: int, user: int) -> Scenario:
    upd_src = write_shard(work / "src-update", 1, size)
    start = work / "start-update"
    _ok(shardpy("install", upd_src, start, "--defaults", cwd=work))
    mine = user_notes(start, user)
    write_shard(upd_src, 2, size)
    return Scenario("update", start, ["update", "--yes"], ["status"], mine)


def _adopt(work: Path, src1: Path, size: int, notes: int, user: int) -> Scenario:
    start = work / "start-adopt"
    shutil.copytree(src1, start, ignore=shutil.ignore_patterns(".shardmind"))
    (start / "Home.md").write_text("# Home of Ada (v1)\n")
    mine = user_notes(start, user)
    return Scenario("adopt", start, ["adopt", str(src1), "--yes", "--defaults"], ["status"], mine)


def _import(work: Path, src1: Path, size: int, notes: int, user: int) -> Scenario:
    project = generated_project(work / "bm", notes)
    start = work / "start-import"
    _ok(shardpy("install", src1, start, "--defaults", cwd=work))
    mine = user_notes(start, user)
    argv = ["import", "--from", "basic-memory", str(project), ".", "--apply"]
    return Scenario("import", start, argv, ["import", "--resume", "--vault", "."], mine)


def _ok(done: subprocess.CompletedProcess[str]) -> None:
    if done.returncode != 0:
        raise SystemExit(f"setup failed: {done.args}\n{done.stdout}\n{done.stderr}")


def reference(sc: Scenario, work: Path) -> None:
    sc.old = signature(sc.start)
    ref = work / f"ref-{sc.name}"
    shutil.copytree(sc.start, ref)
    began = time.perf_counter()
    _ok(shardpy(*sc.argv, cwd=ref))
    sc.duration = time.perf_counter() - began
    sc.new = signature(ref)
    if sc.new == sc.old:
        raise SystemExit(f"{sc.name}: the reference run changed nothing")
    shutil.rmtree(ref)


# --- one trial ------------------------------------------------------------------


@dataclass
class Tally:
    trials: int = 0
    mid_write: int = 0
    old: int = 0
    new: int = 0
    failures: list[str] = field(default_factory=list)


def _signal_for(trial: int) -> signal.Signals:
    if trial % 10 == 3:
        return signal.SIGTERM
    if trial % 10 == 8:
        return signal.SIGINT
    return signal.SIGKILL


def _kill_at(argv: list[str], cwd: Path, delay: float, sig: signal.Signals) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "shardpy", *argv],
        cwd=cwd,
        env=env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        proc.wait(timeout=delay)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, sig)
            if sig != signal.SIGKILL:
                proc.wait(timeout=60)  # SIGTERM / Ctrl-C: let it roll back as it would
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the whole group, workers included
    proc.wait()


def trial(sc: Scenario, work: Path, n: int, rng: random.Random, tally: Tally) -> None:
    vault = work / f"trial-{sc.name}"
    if vault.exists():
        shutil.rmtree(vault)
    shutil.copytree(sc.start, vault)
    # Half the kills fall anywhere, half late in the run, where its writes are.
    delay = sc.duration * (rng.uniform(0.15, 1.05) if n % 2 else rng.uniform(0.55, 1.05))
    _kill_at(sc.argv, vault, delay, _signal_for(n))
    tally.trials += 1
    right_after = signature(vault)
    if right_after not in (sc.old, sc.new) or leftovers(vault):
        tally.mid_write += 1
    nxt = shardpy(*sc.next_argv, cwd=vault)
    problems = _check(sc, vault, nxt)
    if problems:
        kept = work / f"failed-{sc.name}-{n}"
        shutil.copytree(vault, kept, dirs_exist_ok=True)
        print("FAILED", f"{sc.name} trial {n} (killed at {delay:.2f} s): {'; '.join(problems)}", flush=True)
        tally.failures.append(
            f"{sc.name} trial {n} (killed at {delay:.2f} s): {'; '.join(problems)} [{kept}]"
        )
        return
    after = signature(vault)
    if after == sc.old:
        tally.old += 1
    else:
        tally.new += 1


def _check(sc: Scenario, vault: Path, nxt: subprocess.CompletedProcess[str]) -> list[str]:
    problems = []
    if "Traceback" in nxt.stderr:
        problems.append("the next command crashed: " + nxt.stderr.strip().splitlines()[-1])
    for rel, data in sc.notes.items():
        path = vault / rel
        if not path.is_file():
            problems.append(f"user note {rel} lost")
        elif path.read_bytes() != data:
            problems.append(f"user note {rel} torn")
    left = leftovers(vault)
    if left:
        problems.append(f"left behind: {', '.join(left[:3])}")
    after = signature(vault)
    if after not in (sc.old, sc.new):
        extra = sorted(set(after) ^ set(sc.new))[:3]
        diff = [p for p in after if p in sc.new and after[p] != sc.new[p]][:3]
        problems.append(f"neither old nor new (paths differing from new: {extra + diff})")
    return problems


# --- main -----------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=125, help="trials per command (default 125: 500 in all)")
    ap.add_argument("--notes", type=int, default=5000, help="notes in the imported project (default 5000)")
    ap.add_argument("--size", type=int, default=200, help="files in the shard (default 200)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--only", nargs="*", default=None, help="commands to run (install update adopt import)")
    ap.add_argument("--quick", action="store_true", help="1 trial per command, 40 notes, 12 files")
    args = ap.parse_args(argv)
    if args.quick:
        args.trials, args.notes, args.size = 1, 40, 12
    rng = random.Random(args.seed)
    work = Path(tempfile.mkdtemp(prefix="shardpy-faults-"))
    totals = Tally()
    began = time.perf_counter()
    try:
        chosen = scenarios(work, args.size, args.notes, 20, set(args.only or COMMANDS))
        for sc in chosen:
            reference(sc, work)
            tally = Tally()
            for n in range(args.trials):
                trial(sc, work, n, rng, tally)
                if (n + 1) % 25 == 0 and n + 1 < args.trials:
                    _report(sc.name, tally, "so far")
            _report(sc.name, tally, f"reference run {sc.duration:.2f} s")
            _add(totals, tally)
    finally:
        if not totals.failures:
            shutil.rmtree(work, ignore_errors=True)
    _report("total", totals, f"{time.perf_counter() - began:.0f} s wall")
    for line in totals.failures:
        print("FAILED", line)
    return 1 if totals.failures else 0


def _add(totals: Tally, tally: Tally) -> None:
    totals.trials += tally.trials
    totals.mid_write += tally.mid_write
    totals.old += tally.old
    totals.new += tally.new
    totals.failures += tally.failures


def _report(name: str, t: Tally, note: str) -> None:
    print(
        f"{name:8} trials {t.trials:4}  killed mid-write {t.mid_write:4}  ended old {t.old:4}  "
        f"new {t.new:4}  failures {len(t.failures)}  ({note})",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
