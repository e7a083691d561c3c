"""Where the time of ``shardpy import --apply`` goes, phase by phase, beside the raw floor.

The whole-command wall time of an import on this VM swings with its disk;
the phases say which part of the command a change moved. Each round runs
``--apply`` of the same generated basic-memory project into an empty vault
in a child process that stamps the time at the end of each phase (the
source scan, claiming paths, the second pass (the plan: issue 27, it writes
nothing), the steps made again with their bytes into the journal's rows
("record"; absent from a checkout before it), sealing the journal, writing
the notes, recording the ledger), for this checkout and, with
``--compare DIR``, another one, alternating; then the floor
(bench/import_bench.py's plain temp+rename loop of the same bytes, one
syncfs). Medians over the rounds are printed.

    python bench/import_phases.py [--notes 20000] [--rounds 3] [--compare DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from childenv import checkout_env, child_env, reference_loop_ms  # noqa: E402
from import_bench import NEUTRAL_CWD, floor, generate  # noqa: E402

CHILD = r"""
import sys, time
T0 = time.perf_counter()
marks = []
import shardpy.importers.planner as P
import shardpy.flows.importflow as F
import shardpy.apply.batch as B
scan, claim, plan_all = P.scan_source, P.claim_targets, P.plan_all
def scan_(*a, **k):
    yield from scan(*a, **k)
    marks.append(("scan", time.perf_counter()))
def claim_(*a, **k):
    r = claim(*a, **k)
    marks.append(("claim", time.perf_counter()))
    return r
def plan_all_(*a, **k):
    yield from plan_all(*a, **k)
    marks.append(("second pass", time.perf_counter()))
def stamp(real, name):
    def call(*a, **k):
        r = real(*a, **k)
        marks.append((name, time.perf_counter()))
        return r
    return call
P.scan_source, P.claim_targets, P.plan_all = scan_, claim_, plan_all_
try:
    import shardpy.importers.steps as S
except ImportError:  # a checkout from before issue 27's pure planning: no such phase
    S = None
if S is not None:
    replay = S.Replay.__call__
    def replay_(*a, **k):
        yield from replay(*a, **k)
        marks.append(("record", time.perf_counter()))
    S.Replay.__call__ = replay_
B.Journal.seal = stamp(B.Journal.seal, "seal")
F.execute = stamp(F.execute, "write notes")
F._complete = stamp(F._complete, "ledger")
sys.argv = ["shardpy", *sys.argv[1:]]
from shardpy.cli.app import main
try:
    main()
except SystemExit as e:
    if e.code:
        raise
marks.append(("end", time.perf_counter()))
prev = T0
for name, t in marks:
    print(f"PHASE {name}\t{t - prev:.4f}")
    prev = t
"""

PHASES = ["scan", "claim", "second pass", "record", "seal", "write notes", "ledger", "end"]


def phases(src: Path, vault: Path, env: dict[str, str]) -> dict[str, float]:
    vault.mkdir()
    os.sync()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "import", "--from", "basic-memory", str(src), str(vault), "--apply"],
        cwd=NEUTRAL_CWD,  # not this checkout's folder (import_bench.run says why)
        capture_output=True,
        text=True,
        env=env,
    )
    if done.returncode != 0:
        raise SystemExit(f"child failed ({done.returncode}): {done.stderr[-2000:]}")
    out: dict[str, float] = {}
    for line in done.stdout.splitlines():
        if line.startswith("PHASE "):
            name, seconds = line[6:].split("\t")
            out[name] = out.get(name, 0.0) + float(seconds)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", type=Path, help="another checkout, timed in the same rounds")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="shardpy-import-phases-"))
    variants = {"this checkout": child_env(PYTHONPATH=str(ROOT))}
    if args.compare is not None:
        variants[f"compare ({args.compare})"] = checkout_env(child_env(), args.compare)
    try:
        src = work / "src"
        generate(src, args.notes)
        got: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
        floors: list[float] = []
        for r in range(args.rounds):
            for i, (name, env) in enumerate(variants.items()):
                got[name].append(phases(src, work / f"vault-{r}-{i}", env))
            os.sync()
            floors.append(floor(work / "vault-0-0", work / f"floor-{r}")[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"load {os.getloadavg()[0]:.2f}; reference loop {reference_loop_ms():.0f} ms (bench/childenv.py)")
    print(f"{args.notes} notes, median of {args.rounds} rounds, seconds per phase")
    print(f"{'':18}" + "".join(f"{p:>12}" for p in [*PHASES, "total"]))
    for name, runs in got.items():
        cells = [statistics.median(r.get(p, 0.0) for r in runs) for p in PHASES]
        total = statistics.median(sum(r.values()) for r in runs)
        print(f"{name[:18]:18}" + "".join(f"{c:12.3f}" for c in [*cells, total]))
    print(f"{'floor (write only)':18}{'':>{12 * 4}}{statistics.median(floors):12.3f}")


if __name__ == "__main__":
    main()
