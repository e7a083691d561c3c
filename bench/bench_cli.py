#!/usr/bin/env python3
"""Whole-process timings of the commands a user waits for.

    python bench/bench_cli.py [--runs 9] [--files 250] [--keep DIR]

Times (median of --runs runs, each a fresh process): `shardpy --version`,
`shardpy install --defaults` of a generated shard with --files files (and
of the bundled shard when `shard-template/` has one), and `shardpy status`
in the installed vault; prints each against its target. Uses the
`shardpy` console script next to this interpreter when there is one (what
a user runs), else (or with --module) `python -m shardpy`; with --module
and PYTHONPATH pointing at another checkout, it times that checkout.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from childenv import child_env, reference_loop_ms

ROOT = Path(__file__).resolve().parent.parent
TARGETS_MS = {"--version": 150.0, "install": 1000.0, "status": 300.0}


def shardpy_cmd(module: bool = False) -> list[str]:
    script = Path(sys.executable).with_name("shardpy")
    return [str(script)] if script.exists() and not module else [sys.executable, "-m", "shardpy"]


@functools.cache
def env() -> dict[str, str]:
    return child_env(NO_COLOR="1")


def make_shard(root: Path, files: int) -> Path:
    """A shard shaped like a real vault: mostly static notes, some templates
    with frontmatter, a few modules, nested ignore files."""
    side = root / ".shardmind"
    side.mkdir(parents=True)
    (side / "shard.yaml").write_text(
        "apiVersion: v1\nname: bench\nnamespace: bench\nversion: 1.0.0\nrequires:\n  shardmind: '>=0.1.3'\n"
    )
    (side / "shard-schema.yaml").write_text(
        "schema_version: 1\n"
        "values:\n"
        "  user_name: {type: string, default: '', message: Name, group: setup}\n"
        "  org_name: {type: string, default: Independent, group: setup}\n"
        "  purpose: {type: select, default: engineering, group: setup,\n"
        "            options: [{value: engineering}, {value: research}]}\n"
        "  search: {type: boolean, default: \"{{ purpose == 'engineering' }}\", group: setup}\n"
        "groups: [{id: setup, label: Setup}]\n"
        "modules:\n"
        "  brain: {label: Brain, paths: [brain/], removable: false}\n"
        "  work: {label: Work, paths: [work/], removable: true}\n"
        "  org: {label: Org, paths: [org/], agents: [profiler], removable: true}\n"
        "frontmatter:\n  global: [date]\n"
    )
    (root / ".shardmindignore").write_text("*.tmp\ndrafts/\n")
    folders = ["brain", "work/active", "work/archive", "org/people", "reference", "thinking"]
    templates = max(1, files // 6)
    for i in range(files - templates):
        folder = folders[i % len(folders)]
        path = root / folder / f"note-{i:04}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            f"---\ndate: 2024-01-{i % 28 + 1:02}\ntags: [bench]\n---\n# Note {i}\n\n" + "text " * 80
        )
    for i in range(templates):
        path = root / "templates-out" / f"t-{i:03}.md.njk"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(
            "---\ntitle: \"{{ user_name }}'s note\"\norg: {{ org_name }}\ndate: '{{ install_date }}'\n---\n"
            "# {{ purpose }} {{ year }}\n{% if search %}search on{% endif %}\n" + "body " * 60
        )
    (root / "drafts").mkdir()
    (root / "drafts/skip.md").write_text("ignored\n")
    return root


CPU_MS: list[float] = []  # CPU time (user + system) of each measured child, in order


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def median_ms(run: Callable[[int], None], runs: int) -> tuple[float, list[float]]:
    """Median wall time of ``runs`` calls; each call's child CPU time is
    appended to CPU_MS (less sensitive than wall time to a busy machine)."""
    samples = []
    for i in range(runs):
        cpu = _children_cpu()
        started = time.perf_counter()
        run(i)
        samples.append((time.perf_counter() - started) * 1000)
        CPU_MS.append((_children_cpu() - cpu) * 1000)
    return statistics.median(samples), samples


def _timed(run: Callable[[int], None], runs: int, target: float | None) -> dict[str, object]:
    before = len(CPU_MS)
    med, samples = median_ms(run, runs)
    return {
        "median_ms": med,
        "cpu_median_ms": statistics.median(CPU_MS[before:]),
        "target_ms": target,
        "samples": samples,
    }


def check(proc: subprocess.CompletedProcess[str]) -> None:
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {proc.args}\n{proc.stdout}\n{proc.stderr}")


def bench_install(
    cmd: list[str], name: str, source: list[str], work: Path, runs: int
) -> tuple[Callable[[int], None], Path]:
    """The install to time (into a fresh folder each run) and the first vault."""
    dests = [work / f"{name}-vault-{i}" for i in range(runs)]

    def install(i: int) -> None:
        check(subprocess.run([*cmd, "install", *source, str(dests[i]), "--defaults"], env=env(),
                             capture_output=True, text=True, cwd=work))  # fmt: skip

    return install, dests[0]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--files", type=int, default=250)
    parser.add_argument("--keep", type=Path, help="work in this folder and keep it")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--module",
        action="store_true",
        help="run `python -m shardpy` (honours PYTHONPATH, e.g. another checkout)",
    )
    args = parser.parse_args()
    runs = max(7, args.runs)
    cmd = shardpy_cmd(args.module)
    work = args.keep or Path(tempfile.mkdtemp(prefix="shardpy-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, dict[str, object]] = {}

    def run_ok(argv: list[str], cwd: Path | None = None) -> Callable[[int], None]:
        return lambda _: check(subprocess.run(argv, env=env(), capture_output=True, text=True, cwd=cwd))

    try:
        run_ok([*cmd, "--version"])(0)  # warm the file cache
        results["--version"] = _timed(run_ok([*cmd, "--version"]), runs, TARGETS_MS["--version"])

        shard = make_shard(work / "shard", args.files)
        install, vault = bench_install(cmd, "generated", [str(shard)], work, runs)
        timed = _timed(install, runs, TARGETS_MS["install"])
        produced = len(json.loads((vault / ".shardmind/state.json").read_text())["files"])
        results[f"install --defaults ({produced} files)"] = timed
        results[f"status ({produced} files)"] = _timed(
            run_ok([*cmd, "status"], cwd=vault), runs, TARGETS_MS["status"]
        )

        if (ROOT / "shard-template" / ".shardmind" / "shard.yaml").is_file():
            install, bvault = bench_install(cmd, "bundled", [], work, runs)
            timed = _timed(install, runs, None)
            count = len(json.loads((bvault / ".shardmind/state.json").read_text())["files"])
            results[f"install --defaults, bundled shard ({count} files)"] = timed
            results[f"status, bundled shard ({count} files)"] = _timed(
                run_ok([*cmd, "status"], cwd=bvault), runs, TARGETS_MS["status"]
            )
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)

    if args.json:
        print(json.dumps(results, indent=2))
        return
    load = os.getloadavg()[0]
    print(
        f"shardpy whole-process timings: median of {runs} runs ({' '.join(cmd)}; "
        f"{os.cpu_count()} CPUs, load {load:.2f}; reference loop {reference_loop_ms():.0f} ms)"
    )
    for label, r in results.items():
        med = float(r["median_ms"])  # type: ignore[arg-type]
        cpu = float(r["cpu_median_ms"])  # type: ignore[arg-type]
        target = r["target_ms"]
        verdict = "" if target is None else ("  ok" if med < float(target) else "  MISSED")  # type: ignore[arg-type]
        goal = "" if target is None else f"  (target < {target:.0f} ms)"
        spread = sorted(float(s) for s in r["samples"])  # type: ignore[attr-defined]
        print(
            f"  {label:<44} {med:7.1f} ms wall, {cpu:6.1f} ms CPU{goal}{verdict}"
            f"   [wall min {spread[0]:.0f}, max {spread[-1]:.0f}]"
        )


if __name__ == "__main__":
    main()
