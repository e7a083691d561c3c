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
temp file and a rename. --compare DIR times another checkout (e.g. the code
before a change, ``git archive <commit> | tar -x -C DIR``) in the same run,
interleaved run by run, so both see the same machine load.

--shardmind CLI_JS times the peer, ShardMind, on the same stub in the same
run (its ``dist/cli.js``; it needs Node >= 22, --node names the binary).
ShardMind is not on the npm registry; build it from its repository::

    git clone https://github.com/breferrari/shardmind && cd shardmind
    npm ci --ignore-scripts && npx tsup        # then --shardmind $PWD/dist/cli.js
    npm install node@22                        # a Node 22 if the machine has an older one

--latency-ms N makes every stub answer wait N ms, as a round trip to GitHub
would (the loopback stub answers in about 1 ms): shardpy resolves and fetches
in a child process while it starts (sources/prefetch.py), which hides that
wait; the raw floor and ShardMind wait too.

ShardMind installs into its working folder and has no download cache, so its
cold and warm installs are the same command; its status is the bare command.
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

from childenv import checkout_env, child_env
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
    peer: bool = False  # ShardMind: installs into its working folder; status is the bare command

    def install(self, source: str, dest: Path, env: dict[str, str]) -> None:
        if self.peer:
            dest.mkdir(parents=True)
            ok([*self.argv, "install", source, "--defaults"], env, cwd=dest)
        else:
            ok([*self.argv, "install", source, str(dest), "--defaults"], env)

    def status(self, verb: list[str]) -> list[str]:
        return [*self.argv, *verb[1:]] if self.peer else [*self.argv, *verb]


def codes(compare: Path | None, base_env: dict[str, str], shardmind: Path | None, node: str) -> list[Code]:
    out = [Code("this checkout", [sys.executable, "-m", "shardpy"], dict(base_env))]
    if shardmind is not None:
        out.append(Code("ShardMind 0.1.2", [node, str(shardmind)], dict(base_env), peer=True))
    if compare is not None:
        env = checkout_env(base_env, compare)
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
    argv: list[str], env: dict[str, str], cwd: Path | None = None, accept: tuple[int, ...] = (0,)
) -> subprocess.CompletedProcess[str]:
    # Never the checkout's folder: `python -m` puts the working directory first on
    # sys.path, and the checkout there would shadow the one PYTHONPATH names.
    where = cwd or tempfile.gettempdir()
    proc = subprocess.run(argv, env=env, cwd=where, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if proc.returncode not in accept:
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
    parser.add_argument("--shardmind", type=Path, help="ShardMind's dist/cli.js, timed in the same run")
    parser.add_argument("--node", default="node", help="the Node (>= 22) that runs --shardmind")
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=0.0,
        help="every stub answer waits this long (a real network's round trip)",
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="shardpy-bench-om-"))
    repo = build_repo(root / "repo")
    stub = start_stub(repo)
    stub.delay = args.latency_ms / 1000
    try:
        variants = codes(args.compare, child_env(), args.shardmind, args.node)
        for code in variants:
            code.env = shard_env(stub, root / f"cache-{len(code.samples)}-{id(code)}", code.env)
            if code.peer:
                home = root / f"home-{id(code)}"
                home.mkdir()
                code.env |= {"SHARDMIND_GITHUB_API_BASE": stub.base, "SHARDMIND_NO_UPDATE_CHECK": "1"}
                code.env["HOME"] = str(home)
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
        code.install(f"github:{REPO}@{OLD}", template, code.env)
        user_edits(template)
        templates[code.label] = template
    for r in range(args.runs):
        for n, code in enumerate(variants):
            cold = dict(code.env, SHARDPY_CACHE_DIR=str(root / f"cold-{n}-{r}"))
            dest = root / f"inst-{n}-{r}"
            source = f"github:{REPO}@{NEW}"
            sample(code.samples, "install (cold cache)", timed(code.install, source, dest, cold))
            shutil.rmtree(dest)
            sample(code.samples, "install (warm cache)", timed(code.install, source, dest, code.env))
            shutil.rmtree(dest)
            work = root / f"upd-{n}-{r}"
            shutil.copytree(templates[code.label], work)
            sample(
                code.samples,
                "update 6.0.0 -> 8.3.5",
                # Exit 3: done, with the conflict the user edits provoke (kept as theirs, reported).
                timed(ok, [*code.argv, "update", "--yes"], code.env, cwd=work, accept=(0, 3)),
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
                sample(code.samples, key, timed(ok, code.status(verb), code.env, cwd=vault))


def _report(variants: list[Code], floor_samples: dict[str, list[float]], args) -> None:  # type: ignore[no-untyped-def]
    med = statistics.median
    print(
        f"obsidian-mind-like shard ({REPO} {OLD} and {NEW}, loopback GitHub stub"
        f"{f', {args.latency_ms:g} ms per answer' if args.latency_ms else ''}); "
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
    peer = next((c for c in variants if c.peer), None)
    print(f"  {'':<{width}}" + "".join(f" | {c.label[:40]:>40}" for c in variants))
    for key in labels:
        ref = fic if key.startswith("install") else fuc if key.startswith("update") else None
        cells = ""
        for c in variants:
            wall, cpu = med(c.samples[key]), med(c.samples[key + " cpu"])
            ratio = f"  CPU {cpu / ref:4.1f}x floor" if ref else ""
            cells += f" | {wall:8.0f} / {cpu:6.0f}{ratio:>17}"
        print(f"  {key:<{width}}{cells}")
    if peer is not None:
        print("  ratio to ShardMind in the same run (wall / CPU; goal for install and update: <= 0.15):")
        for c in variants:
            if c.peer:
                continue
            for key in labels:
                wall = med(c.samples[key]) / med(peer.samples[key])
                cpu = med(c.samples[key + " cpu"]) / med(peer.samples[key + " cpu"])
                print(f"    {c.label[:30]:<30} {key:<{width}} {wall:5.2f}x / {cpu:5.2f}x")


if __name__ == "__main__":
    main()
