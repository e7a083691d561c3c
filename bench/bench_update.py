"""Install and update of an obsidian-mind-like shard from a GitHub API stub,
and status on a large vault, beside the raw floor measured in the same run.

    python bench/bench_update.py [--runs 5] [--notes 20000] [--compare DIR]

The shard (bench/obsidian_mind.py): ~213 files released as v6.0.0 and
v8.3.5 in a local git repository, served as tarballs by the loopback GitHub
stub the tests use. Timed, each a whole fresh process, median of --runs:

- ``install github:…@8.3.5 --defaults``, with an empty download cache (cold)
  and with the archive already cached (warm);
- ``update --yes`` 6.0.0 -> 8.3.5 after user edits (10 managed notes edited,
  one on a line the release changes too, 30 notes added, one file deleted);
- ``status`` and ``status --verbose`` on that vault with --notes user notes
  (half of them missing frontmatter keys the schema requires).

The reference beside each figure is the raw floor: a plain Python child that
downloads the same tarball, extracts it and writes the same files through a
temp file and a rename (ShardMind, the Node peer, is not installable
offline). --compare DIR times another checkout (e.g. the code before a
change, ``git archive <commit> | tar -x -C DIR``) in the same run,
interleaved run by run, so both see the same machine load.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from childenv import child_env
from obsidian_mind import (
    FLOOR_INSTALL,
    FLOOR_UPDATE,
    NEW,
    OLD,
    REPO,
    build_repo,
    floor,
    shard_env,
    start_stub,
    tarball_url,
    user_edits,
)


@dataclass
class Code:
    """A checkout to time: its label, argv prefix and environment."""

    label: str
    argv: list[str]
    env: dict[str, str]
    samples: dict[str, list[float]] = field(default_factory=dict)


def codes(compare: Path | None, base_env: dict[str, str]) -> list[Code]:
    out = [Code("this checkout", [sys.executable, "-m", "shardpy"], dict(base_env))]
    if compare is not None:
        import compileall

        compileall.compile_dir(compare / "shardpy", quiet=1)
        env = {**base_env, "PYTHONPATH": str(compare)}
        out.append(Code(f"compare ({compare})", [sys.executable, "-m", "shardpy"], env))
    return out


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(fn: Callable[..., object], *args: object, **kwargs: object) -> float:
    """Wall ms of ``fn``; the CPU ms its child used is left in CPU_LAST (a busy
    machine stretches wall time, CPU time much less)."""
    global CPU_LAST
    cpu = _children_cpu()
    start = time.perf_counter()
    fn(*args, **kwargs)
    CPU_LAST = (_children_cpu() - cpu) * 1000
    return (time.perf_counter() - start) * 1000


CPU_LAST = 0.0


def sample(store: dict[str, list[float]], key: str, wall: float) -> None:
    """Record a wall sample and the CPU of the same child under ``key + " cpu"``."""
    store.setdefault(key, []).append(wall)
    store.setdefault(key + " cpu", []).append(CPU_LAST)


def ok(
    argv: list[str], env: dict[str, str], cwd: Path | None = None, codes: tuple[int, ...] = (0,)
) -> subprocess.CompletedProcess[str]:
    # Never the checkout's folder: `python -m` puts the working directory first on
    # sys.path, and the checkout there would shadow the one PYTHONPATH names.
    proc = subprocess.run(argv, env=env, cwd=cwd or tempfile.gettempdir(), capture_output=True, text=True)
    if proc.returncode not in codes:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(argv)}\n{proc.stdout}\n{proc.stderr}")
    return proc


def add_notes(vault: Path, count: int) -> None:
    """``count`` user notes in 40 folders; odd ones lack a required key."""
    for i in range(count):
        folder = vault / "notes" / f"topic-{i % 40:02}"
        folder.mkdir(parents=True, exist_ok=True)
        desc = "" if i % 2 else f"description: note {i}\n"
        (folder / f"note {i:05}.md").write_text(
            f"---\ndate: 2024-03-{i % 28 + 1:02}\n{desc}tags: [user]\n---\n# Note {i}\n\nsee [[Home]]\n"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--compare", type=Path, help="another checkout to time in the same run")
    parser.add_argument("--status-runs", type=int, help="runs of the status commands (default: --runs)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="shardpy-bench-om-"))
    repo = build_repo(root / "repo")
    stub = start_stub(repo)
    try:
        variants = codes(args.compare, child_env())
        for code in variants:
            code.env = shard_env(stub, root / f"cache-{len(code.samples)}-{id(code)}", code.env)
        floor_env = child_env()
        _run(root, stub, repo, variants, floor_env, args)
    finally:
        stub.stop()
        shutil.rmtree(root, ignore_errors=True)


def _run(root: Path, stub, repo, variants: list[Code], floor_env: dict[str, str], args) -> None:  # type: ignore[no-untyped-def]
    new_url, old_url = tarball_url(stub, repo, NEW), tarball_url(stub, repo, OLD)
    floor_samples: dict[str, list[float]] = {"install": [], "update": []}
    templates: dict[str, Path] = {}
    for n, code in enumerate(variants):  # an installed 6.0.0 vault with user edits, per variant
        template = root / f"template-{n}"
        ok([*code.argv, "install", f"github:{REPO}@{OLD}", str(template), "--defaults"], code.env)
        user_edits(template)
        templates[code.label] = template
    for r in range(args.runs):
        for n, code in enumerate(variants):
            cold = dict(code.env, SHARDPY_CACHE_DIR=str(root / f"cold-{n}-{r}"))
            dest = root / f"inst-{n}-{r}"
            argv = [*code.argv, "install", f"github:{REPO}@{NEW}", str(dest), "--defaults"]
            sample(code.samples, "install (cold cache)", timed(ok, argv, cold))
            shutil.rmtree(dest)
            sample(code.samples, "install (warm cache)", timed(ok, argv, code.env))
            shutil.rmtree(dest)
            work = root / f"upd-{n}-{r}"
            shutil.copytree(templates[code.label], work)
            sample(
                code.samples,
                "update 6.0.0 -> 8.3.5",
                # Exit 3: finished, with the one conflict the user edits make (README "Exit codes").
                timed(ok, [*code.argv, "update", "--yes"], code.env, cwd=work, codes=(0, 3)),
            )
            if r:
                shutil.rmtree(work)
        fdest = root / f"floor-{r}"
        sample(floor_samples, "install", timed(floor, FLOOR_INSTALL, new_url, fdest, floor_env))
        shutil.rmtree(fdest)
        floor(FLOOR_INSTALL, old_url, fdest, floor_env)
        sample(floor_samples, "update", timed(floor, FLOOR_UPDATE, new_url, fdest, floor_env))
        shutil.rmtree(fdest)
    _status(root, variants, args)
    _report(variants, floor_samples, args)


def _status(root: Path, variants: list[Code], args) -> None:  # type: ignore[no-untyped-def]
    for n, code in enumerate(variants):
        vault = root / f"upd-{n}-0"
        add_notes(vault, args.notes)
        for _ in range(args.status_runs or args.runs):
            for verb in (["status"], ["status", "--verbose"]):
                key = " ".join(verb) + f" ({args.notes} notes)"
                sample(code.samples, key, timed(ok, [*code.argv, *verb], code.env, cwd=vault))


def _report(variants: list[Code], floor_samples: dict[str, list[float]], args) -> None:  # type: ignore[no-untyped-def]
    med = statistics.median
    print(
        f"obsidian-mind-like shard ({REPO} {OLD} and {NEW}, loopback GitHub stub); "
        f"median of {args.runs} runs ({args.status_runs or args.runs} for status), "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}; wall ms / CPU ms of each child"
    )
    fi, fu = med(floor_samples["install"]), med(floor_samples["update"])
    fic, fuc = med(floor_samples["install cpu"]), med(floor_samples["update cpu"])
    print(
        f"  raw floor (plain extract + temp/rename loop): install {fi:.0f} / {fic:.0f}, "
        f"update {fu:.0f} / {fuc:.0f}"
    )
    labels = [k for k in variants[0].samples if not k.endswith(" cpu")]
    width = max(len(k) for k in labels)
    print(f"  {'':<{width}}" + "".join(f" | {c.label[:40]:>40}" for c in variants))
    for key in labels:
        ref = fic if key.startswith("install") else fuc if key.startswith("update") else None
        cells = ""
        for c in variants:
            wall, cpu = med(c.samples[key]), med(c.samples[key + " cpu"])
            ratio = f"  CPU {cpu / ref:4.1f}x floor" if ref else ""
            cells += f" | {wall:8.0f} / {cpu:6.0f}{ratio:>17}"
        print(f"  {key:<{width}}{cells}")


if __name__ == "__main__":
    main()
