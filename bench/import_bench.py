"""Benchmark `shardpy import --from basic-memory` on generated projects.

For each size: a dry run, an --apply into an empty vault, and a second
--apply with everything unchanged, each as the whole command in a fresh
child process (output to /dev/null). Prints notes per second (wall clock of
the child process, start-up included) and peak memory:

- ``*_peak_rss_mb``: the command's own process (``ru_maxrss``);
- ``*_peak_pss_total_mb``: the largest sum, sampled every 0.5 s, of the
  proportional set size of the command and every process it started (its
  planning workers share most pages with it; PSS counts a shared page once
  in total, so this is the memory the import really used); Linux only.
  Reading smaps_rollup of a 400 MB process takes ~10 ms of kernel time, so
  sampling more often would slow the measured command on a 2-core machine.

Targets (the import issue): apply >= 2,000 notes/s, dry run >= 10,000
notes/s, peak memory < 300 MB at 100,000 notes; and (issues 13, 14) --apply
within 1.5x the raw floor's time: ``floor`` is a plain Python child that
writes the same bytes --apply wrote (every file under the vault, read
beforehand) through a temp file and a rename each, then one syncfs, as the
transaction's batched mode (apply/batch.py) does. Printed: the floor's
notes/s, apply's time over the floor's (``apply_over_floor``), and, since
--apply also plans (the dry run's work), its writing part: apply's time minus
the dry run's, over the floor's (``write_over_floor``). Because this VM's disk
stalls for seconds at a time while it writes back, wall time there often
measures the disk: the same ratio is printed for CPU time (user + system of
the command and its workers, ``write_cpu_over_floor``) and for the bytes
dirtied for the disk (``/proc/self/io`` write_bytes, ``written_over_floor``).

    python bench/import_bench.py [SIZE ...] [--compare DIR]      (default: 20000 100000)

Each size runs IMPORT_BENCH_ROUNDS (default 3) rounds of dry run, --apply into
an empty vault and floor, each after a sync; each figure is the fastest of its
rounds. --compare DIR (another checkout, e.g. ``git archive REV | tar -x -C DIR``)
runs the same dry run and --apply in the same rounds.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from childenv import checkout_env, child_env, reference_loop_ms  # noqa: E402

from tests.importers.fixtures import generated_note  # noqa: E402

NEUTRAL_CWD = tempfile.gettempdir()  # where the children run (see ``run``)

CHILD = """
import resource, sys, time
from shardpy.cli.app import main
t = time.perf_counter()
try:
    main()
except SystemExit as e:
    code = e.code
else:
    code = 0
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
sys.stderr.write(f"BENCH {time.perf_counter() - t:.3f} {rss}\\n")
sys.exit(code or 0)
"""


def generate(root: Path, count: int) -> None:
    for i in range(count):
        rel, text = generated_note(i, count)
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux /proc)."""
    out = [pid]
    i = 0
    while i < len(out):
        try:
            with open(f"/proc/{out[i]}/task/{out[i]}/children") as fh:
                out.extend(int(c) for c in fh.read().split())
        except OSError:
            pass
        i += 1
    return out


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """Peak total PSS of a process tree, sampled until stopped."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid = pid
        self.peak_kb = 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            total = sum(_pss_kb(p) for p in _tree(self.pid))
            self.peak_kb = max(self.peak_kb, total)
            self.stop.wait(0.5)


def _written_bytes() -> int:
    """Bytes this process and its waited-for children dirtied for the disk (Linux), or 0."""
    try:
        with open("/proc/self/io") as fh:
            for line in fh:
                if line.startswith("write_bytes:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Run(NamedTuple):
    wall: float
    rss_mb: int
    pss_mb: int
    cpu: float  # user + system seconds of the child and the workers it waited for
    written_mb: float  # what they dirtied for the disk


def run(args: list[str], env: dict[str, str] | None = None) -> Run:
    """One command in a child process: its wall and CPU time, memory and bytes written."""
    cpu0, written0 = _children_cpu(), _written_bytes()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD, *args],
        # Not this checkout's folder: `python -c` puts the working folder first on sys.path, which
        # made a --compare child import this checkout's shardpy instead of the other one's.
        cwd=NEUTRAL_CWD,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env if env is not None else child_env(PYTHONPATH=str(ROOT)),
    )
    sampler = Sampler(proc.pid)
    sampler.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - start
    sampler.stop.set()
    sampler.join()
    line = [ln for ln in err.splitlines() if ln.startswith("BENCH ")]
    if proc.returncode != 0 or not line:
        raise SystemExit(f"child failed ({proc.returncode}): {err[-2000:]}")
    _, _, rss_kb = line[-1].split()
    return Run(
        wall,
        int(rss_kb) // 1024,
        sampler.peak_kb // 1024,
        _children_cpu() - cpu0,
        (_written_bytes() - written0) / 1e6,
    )


FLOOR = r"""
import ctypes, os, secrets, sys, time
src, dest = sys.argv[1], sys.argv[2]
files = []
for dirpath, dirnames, filenames in os.walk(src):
    dirnames[:] = [d for d in dirnames if d != ".shardmind"]
    for name in filenames:
        path = os.path.join(dirpath, name)
        with open(path, "rb") as fh:
            files.append((os.path.relpath(path, src), fh.read()))
def written():
    with open("/proc/self/io") as fh:
        return next(int(l.split()[1]) for l in fh if l.startswith("write_bytes:"))
start, cpu, dirtied = time.perf_counter(), sum(os.times()[:2]), written()
made = set()
for rel, data in files:
    target = os.path.join(dest, rel)
    folder = os.path.dirname(target)
    if folder not in made:
        os.makedirs(folder, exist_ok=True)
        made.add(folder)
    tmp = os.path.join(folder, ".tmp-" + secrets.token_hex(4))
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, data)
    os.close(fd)
    os.replace(tmp, target)
fd = os.open(dest, os.O_RDONLY)
ctypes.CDLL(None).syncfs(fd)
os.close(fd)
print(f"{time.perf_counter() - start:.3f} {sum(os.times()[:2]) - cpu:.3f} {(written() - dirtied) / 1e6:.1f}")
"""


def floor(vault: Path, dest: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, MB written) of the plain temp+rename loop writing what the import wrote
    into ``vault`` (its reading beforehand not counted)."""
    done = subprocess.run(
        [sys.executable, "-c", FLOOR, str(vault), str(dest)], capture_output=True, text=True, check=True
    )
    wall, cpu, mb = (float(x) for x in done.stdout.split())
    return wall, cpu, mb


def bench(count: int, work: Path, compare: Path | None = None) -> dict[str, Any]:
    src = work / f"src-{count}"
    vault = work / f"vault-{count}"
    t = time.perf_counter()
    generate(src, count)
    gen = time.perf_counter() - t
    # The kernel would otherwise write the generated files back to disk during the first
    # measured run (here ~80 MB per 20,000 notes), which is not the import's work.
    os.sync()
    out: dict[str, Any] = {"notes": count, "generate_s": round(gen, 1)}
    # Rounds interleave the dry run, an --apply into a fresh vault and the floor, each after a
    # sync (the disk here stalls now and then while it writes back an earlier run's ~80 MB): each
    # figure is the fastest of its rounds, and every round's figure is printed beside it.
    # (wall s, CPU s, MB written) of every round of each run.
    times: dict[str, list[tuple[float, float, float]]] = {"dry_run": [], "apply": [], "floor": []}
    variants: list[tuple[str, dict[str, str] | None]] = [("", None)]
    if compare is not None:  # the other checkout runs in the same rounds, right after this one
        variants.append(("compare_", checkout_env(child_env(), compare)))
        times |= {"compare_dry_run": [], "compare_apply": []}
    for r in range(ROUNDS):
        for prefix, env in variants:
            target = vault if r == 0 and not prefix else work / f"{prefix}vault-{count}-{r}"
            target.mkdir()
            _round(times, out, prefix, env, ["import", "--from", "basic-memory", str(src), str(target)])
            written = sum(1 for _ in (target / "memories").rglob("*.md"))
            assert written == count, (written, count)
        os.sync()
        times["floor"].append(floor(vault, work / f"floor-{count}-{r}"))
    os.sync()
    again = run(["import", "--from", "basic-memory", str(src), str(vault), "--apply"])
    times["rerun"] = [(again.wall, again.cpu, again.written_mb)]
    out["rerun_peak_rss_mb"], out["rerun_peak_pss_total_mb"] = again.rss_mb, again.pss_mb
    for label, values in times.items():
        best = min(v[0] for v in values)
        out[f"{label}_s"] = round(best, 2)
        out[f"{label}_notes_per_s"] = round(count / best)
        out[f"{label}_all_s"] = [round(v[0], 2) for v in values]
        out[f"{label}_cpu_s"] = round(min(v[1] for v in values), 2)
        out[f"{label}_written_mb"] = round(min(v[2] for v in values), 1)
    ref, ref_cpu = float(out["floor_s"]), float(out["floor_cpu_s"])
    for prefix, _ in variants:
        apply_s, dry_s = float(out[f"{prefix}apply_s"]), float(out[f"{prefix}dry_run_s"])
        out[f"{prefix}apply_vs_floor"] = round(ref / apply_s, 2)
        out[f"{prefix}apply_over_floor"] = round(apply_s / ref, 2)
        out[f"{prefix}write_over_floor"] = round((apply_s - dry_s) / ref, 2)
        write_cpu = float(out[f"{prefix}apply_cpu_s"]) - float(out[f"{prefix}dry_run_cpu_s"])
        out[f"{prefix}write_cpu_over_floor"] = round(write_cpu / ref_cpu, 2)
        out[f"{prefix}written_over_floor"] = round(
            float(out[f"{prefix}apply_written_mb"]) / max(float(out["floor_written_mb"]), 0.1), 2
        )
    return out


def _round(
    times: dict[str, list[tuple[float, float, float]]],
    out: dict[str, Any],
    prefix: str,
    env: dict[str, str] | None,
    base: list[str],
) -> None:
    """One dry run and one --apply (into an empty vault) of one code variant, each after a sync."""
    for label, args in (("dry_run", base), ("apply", [*base, "--apply"])):
        os.sync()
        done = run(args, env)
        label = prefix + label
        times[label].append((done.wall, done.cpu, done.written_mb))
        out[f"{label}_peak_rss_mb"] = max(done.rss_mb, int(out.get(f"{label}_peak_rss_mb", 0)))
        out[f"{label}_peak_pss_total_mb"] = max(done.pss_mb, int(out.get(f"{label}_peak_pss_total_mb", 0)))


ROUNDS = int(os.environ.get("IMPORT_BENCH_ROUNDS", "3"))


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sizes", nargs="*", type=int, default=[20_000, 100_000])
    parser.add_argument("--compare", type=Path, help="another checkout to time in the same rounds")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shardpy-import-bench-"))
    results = []
    try:
        for n in args.sizes:
            result = bench(n, work, args.compare)
            results.append(result)
            print(json.dumps(result), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print()
    print(f"load {os.getloadavg()[0]:.2f}; reference loop {reference_loop_ms():.0f} ms (bench/childenv.py)")
    head = ("notes", "run", "seconds", "notes/s", "CPU s", "MB written", "peak RSS MB", "peak PSS MB")
    print(
        f"{head[0]:>7}  {head[1]:<16} {head[2]:>8} {head[3]:>8} {head[4]:>6} {head[5]:>10} {head[6]:>11}"
        f" {head[7]:>11}  every round (s)"
    )
    for r in results:
        labels = [k[: -len("_all_s")] for k in r if k.endswith("_all_s")]
        for label in labels:
            print(
                f"{r['notes']:>7}  {label:<16} {r[f'{label}_s']:>8} {r[f'{label}_notes_per_s']:>8}"
                f" {r[f'{label}_cpu_s']:>6} {r[f'{label}_written_mb']:>10}"
                f" {r.get(f'{label}_peak_rss_mb', ''):>11} {r.get(f'{label}_peak_pss_total_mb', ''):>11}"
                f"  {' '.join(str(v) for v in r[f'{label}_all_s'])}"
            )
        for prefix in ("", "compare_"):
            if f"{prefix}apply_over_floor" in r:
                name = prefix.rstrip("_") or "this checkout"
                print(
                    f"  {name}: apply takes {r[f'{prefix}apply_over_floor']}x the floor's wall time; its"
                    f" writing part (apply - dry run) {r[f'{prefix}write_over_floor']}x the wall time,"
                    f" {r[f'{prefix}write_cpu_over_floor']}x the CPU time and"
                    f" {r[f'{prefix}written_over_floor']}x the bytes (goal <= 1.5)"
                )


if __name__ == "__main__":
    main()
