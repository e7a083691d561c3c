"""Benchmark `shardpy import --from basic-memory` on generated projects.

Prints, for each size: dry-run and apply notes per second (wall clock of the
whole command in a fresh child process, output sent to /dev/null) and each
child's peak RSS (``resource.getrusage(RUSAGE_CHILDREN)``). Targets: apply
>= 2,000 notes/s, dry-run >= 10,000 notes/s, peak RSS < 300 MB at 100,000.

    python bench/import_bench.py [SIZE ...]      (default: 20000 100000)
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.importers.fixtures import generated_note  # noqa: E402

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


def run(args: list[str]) -> tuple[float, float, int]:
    """(wall seconds of the child, seconds inside main(), peak RSS MB)."""
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    wall = time.perf_counter() - start
    line = [ln for ln in proc.stderr.splitlines() if ln.startswith("BENCH ")]
    if proc.returncode not in (0,) or not line:
        raise SystemExit(f"child failed ({proc.returncode}): {proc.stderr[-2000:]}")
    _, inner, rss_kb = line[-1].split()
    return wall, float(inner), int(rss_kb) // 1024


def bench(count: int, work: Path) -> dict[str, float | int]:
    src = work / f"src-{count}"
    vault = work / f"vault-{count}"
    t = time.perf_counter()
    generate(src, count)
    gen = time.perf_counter() - t
    vault.mkdir()
    base = ["import", "--from", "basic-memory", str(src), str(vault)]
    dry_wall, _, dry_rss = run(base)
    apply_wall, _, apply_rss = run([*base, "--apply"])
    again_wall, _, again_rss = run([*base, "--apply"])
    written = sum(1 for _ in (vault / "memories").rglob("*.md"))
    assert written == count, (written, count)
    return {
        "notes": count,
        "generate_s": round(gen, 1),
        "dry_run_s": round(dry_wall, 2),
        "dry_run_notes_per_s": round(count / dry_wall),
        "dry_run_peak_rss_mb": dry_rss,
        "apply_s": round(apply_wall, 2),
        "apply_notes_per_s": round(count / apply_wall),
        "apply_peak_rss_mb": apply_rss,
        "rerun_unchanged_s": round(again_wall, 2),
        "rerun_notes_per_s": round(count / again_wall),
        "rerun_peak_rss_mb": again_rss,
    }


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [20_000, 100_000]
    work = Path(tempfile.mkdtemp(prefix="shardpy-import-bench-"))
    try:
        for n in sizes:
            print(json.dumps(bench(n, work)), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    _ = resource  # the children measure themselves


if __name__ == "__main__":
    main()
