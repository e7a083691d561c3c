"""`status --verbose` beside plain `status` on a vault of notes imported from basic-memory.

    python bench/status_verbose_bench.py [--notes 20000] [--runs 5] [--source basic-memory|synthetic]
                                         [--compare DIR]

The bundled shard (``shard-template/``) is installed with ``--defaults`` into
a temp vault. With ``--source basic-memory`` (the default) ``--notes`` notes
are generated as a basic-memory project by the repository's generator
(``bench/import_bench.generate``, ``tests/importers/fixtures.generated_note``)
and brought in with ``shardpy import --from basic-memory SRC VAULT --apply``:
every imported note carries ``imported_at`` timestamps and quoted hashes, the
blocks that used to leave the fast key reader for ruamel's pure-Python loader
(issue 25: 250 times plain status). ``--source synthetic`` adds user notes as
bench_update.add_notes does (40 folders, half missing a required key).

Plain ``status`` and ``status --verbose`` are timed in fresh processes in the
same rounds (median of --runs, wall and CPU ms of the child), with a raw
read-and-split floor; the ratio verbose / plain is printed, and the verbose
output is checked identical run to run. ``status --verbose`` keeps each
note's frontmatter keys in the user cache folder (shardpy/notes/keycache.py):
the rounds time it with the keys kept, and its first run (every note read,
an empty cache folder of its own per checkout) is timed once before them and
printed apart. --compare DIR times another checkout
(``git archive <commit> | tar -x -C DIR``) interleaved run by run, and says
whether both printed the same bytes.
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
for top, dirs, files in os.walk(base):
    dirs[:] = [d for d in dirs if not d.startswith(".")]
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


def _fill(vault: Path, root: Path, source: str, count: int, env: dict[str, str]) -> None:
    """``count`` notes in ``vault``: imported from a generated basic-memory project, or synthetic."""
    if source == "synthetic":
        add_notes(vault, count)
        return
    from import_bench import generate

    src = root / "basic-memory"
    generate(src, count)
    argv = [sys.executable, "-m", "shardpy", "import", "--from", "basic-memory", str(src), str(vault)]
    ok([*argv, "--apply"], env)


def _timed_output(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, str]:
    """(wall ms, CPU ms, stdout) of one child run."""
    import bench_update

    out: list[str] = []
    wall = timed(lambda: out.append(ok(argv, env, cwd=cwd).stdout))
    return wall, bench_update.CPU_LAST, out[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--source", choices=["basic-memory", "synthetic"], default="basic-memory")
    parser.add_argument("--compare", type=Path, help="another checkout to time in the same run")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="shardpy-bench-sv-"))
    env = child_env(SHARDPY_CACHE_DIR=str(root / "cache-this"))
    variants = {"this checkout": env}
    if args.compare is not None:
        compare = checkout_env(env, args.compare)
        variants[f"compare ({args.compare})"] = {**compare, "SHARDPY_CACHE_DIR": str(root / "cache-compare")}
    vault = root / "vault"
    ok(
        [sys.executable, "-m", "shardpy", "install", str(ROOT / "shard-template"), str(vault), "--defaults"],
        env,
    )
    _fill(vault, root, args.source, args.notes, env)
    samples: dict[str, list[tuple[float, float]]] = {}
    outputs: dict[str, set[str]] = {}
    import bench_update

    for label, venv in variants.items():  # the first verbose run: no keys kept yet
        argv = [sys.executable, "-m", "shardpy", "status", "--verbose"]
        wall, cpu, stdout = _timed_output(argv, venv, vault)
        samples[f"{label}: status --verbose, first run"] = [(wall, cpu)]
        outputs.setdefault(f"{label}: status --verbose", set()).add(stdout)
    for _ in range(args.runs):
        for label, venv in variants.items():
            for verb in (["status"], ["status", "--verbose"]):
                key = f"{label}: {' '.join(verb)}"
                wall, cpu, stdout = _timed_output([sys.executable, "-m", "shardpy", *verb], venv, vault)
                samples.setdefault(key, []).append((wall, cpu))
                outputs.setdefault(key, set()).add(stdout)
        wall = timed(ok, [sys.executable, "-c", FLOOR, str(vault)], env)
        samples.setdefault("raw floor (read + split every note)", []).append((wall, bench_update.CPU_LAST))
    loop = reference_loop_ms()
    what = f"{args.notes:,} {args.source} notes, median of {args.runs} (loop {loop:.0f} ms)"
    print(f"status vs status --verbose, {what}")
    medians: dict[str, tuple[float, float]] = {}
    for label, pairs in samples.items():
        wall = statistics.median(p[0] for p in pairs)
        cpu = statistics.median(p[1] for p in pairs)
        medians[label] = (wall, cpu)
        print(f"  {label:<48} {wall:8,.0f} ms wall {cpu:8,.0f} ms CPU")
    for label in variants:
        plain, verbose = medians[f"{label}: status"], medians[f"{label}: status --verbose"]
        same = all(len(outputs[f"{label}: {v}"]) == 1 for v in ("status", "status --verbose"))
        wall_ratio, cpu_ratio = verbose[0] / plain[0], verbose[1] / plain[1]
        first = medians[f"{label}: status --verbose, first run"]
        print(
            f"  {label}: verbose / plain = {wall_ratio:.1f}x wall, {cpu_ratio:.1f}x CPU"
            f" (first run {first[0] / plain[0]:.1f}x wall, {first[1] / plain[1]:.1f}x CPU);"
            f" output identical run to run (first run included): {'yes' if same else 'NO'}"
        )
    if len(variants) > 1:  # a change to speed alone leaves every byte of both outputs as it was
        alike = all(
            len({o for lab in variants for o in outputs[f"{lab}: {v}"]}) == 1
            for v in ("status", "status --verbose")
        )
        print(f"  output identical across the checkouts: {'yes' if alike else 'NO'}")


if __name__ == "__main__":
    main()
