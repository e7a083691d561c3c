"""`status --verbose` on a large vault, beside a raw floor measured in the same run.

    python bench/status_verbose_bench.py [--notes 20000] [--runs 5] [--compare DIR]

The bundled shard (``shard-template/``) is installed with ``--defaults`` into
a temp vault, ``--notes`` user notes are added as bench_update.add_notes does
(40 folders, half of them missing a key the schema requires), and
``status --verbose`` is timed in fresh processes (median of --runs, wall and
CPU ms of the child). The floor is a plain Python child that reads the same
notes and splits their frontmatter (find the closing ``---``, split lines on
``:``), the least any check of every note's keys must do. --compare DIR times
another checkout (``git archive <commit> | tar -x -C DIR``) interleaved run by
run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from bench_update import add_notes, ok, timed
from childenv import ROOT, checkout_env, child_env, reference_loop_ms

FLOOR = r"""
import os, sys
base = sys.argv[1]
keys = 0
for top, dirs, files in os.walk(os.path.join(base, "notes")):
    for name in files:
        if not name.endswith(".md"):
            continue
        with open(os.path.join(top, name), encoding="utf-8") as fh:
            text = fh.read()
        if text.startswith("---\n"):
            end = text.find("\n---", 4)
            for line in text[4:end].split("\n"):
                k, _, _ = line.partition(":")
                keys += bool(k)
print(keys)
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--compare", type=Path, help="another checkout to time in the same run")
    args = parser.parse_args()
    env = child_env()
    variants = {"this checkout": env}
    if args.compare is not None:
        variants[f"compare ({args.compare})"] = checkout_env(env, args.compare)
    root = Path(tempfile.mkdtemp(prefix="shardpy-bench-sv-"))
    vault = root / "vault"
    ok(
        [sys.executable, "-m", "shardpy", "install", str(ROOT / "shard-template"), str(vault), "--defaults"],
        env,
    )
    add_notes(vault, args.notes)
    samples: dict[str, list[tuple[float, float]]] = {}
    import bench_update

    for _ in range(args.runs):
        for label, venv in variants.items():
            wall = timed(ok, [sys.executable, "-m", "shardpy", "status", "--verbose"], venv, cwd=vault)
            samples.setdefault(label, []).append((wall, bench_update.CPU_LAST))
        wall = timed(ok, [sys.executable, "-c", FLOOR, str(vault)], env)
        samples.setdefault("raw floor", []).append((wall, bench_update.CPU_LAST))
    loop = reference_loop_ms()
    print(f"status --verbose, {args.notes:,} user notes, median of {args.runs} (loop {loop:.0f} ms)")
    for label, pairs in samples.items():
        wall = statistics.median(p[0] for p in pairs)
        cpu = statistics.median(p[1] for p in pairs)
        print(f"  {label:<40} {wall:8,.0f} ms wall {cpu:8,.0f} ms CPU")


if __name__ == "__main__":
    main()
