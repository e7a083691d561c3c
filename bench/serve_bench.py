"""Benchmark ``shardpy serve`` over stdio on a generated vault.

Builds a vault of N notes (brain/, work/active/, reference/, some private,
some never exposed) and M memories under memories/ (scoped to several
projects, platforms and general), indexes it once, then measures:

- start-up: spawn ``python -m shardpy serve VAULT`` to its ``initialize``
  answer, wall and CPU, median of TRIALS (floor: the smallest low-level SDK server timed the
  same way; also ``python -c "import mcp.server.lowlevel, mcp.server.stdio"``, the SDK import
  every server pays, and ``python -c pass``);
- search p50/p95 over stdio through the SDK client (reference: the raw
  in-process ``shardpy.index.search`` call + the same exposure filter);
- recall p50/p95 over stdio with a query (reference: the in-process handler).

``--text zipf`` writes the notes from the search bench's Zipf vocabulary (a few
common words, a long tail) instead of 27 words that each sit in ~90% of the
sections, so every query is not a worst case.

Targets (issue 18): start < 0.5 s, search p95 < 50 ms, recall p95 < 50 ms
(20,000 notes, 2,000 memories).

    python bench/serve_bench.py [--notes 20000] [--memories 2000] [--calls 200] [--trials 5]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.childenv import child_env, reference_loop_ms  # noqa: E402

WORDS = """cache deploy latency probe schema index budget review incident rollback queue shard vault memory
postgres kafka ios android web release sprint quarter goal pattern gotcha decision migration""".split()  # noqa: SIM905
PROJECTS = ["atlas", "beta", "gamma", "delta"]


TEXT = {"mode": "tiny"}  # --text: "tiny" (the 27 words above) or "zipf" (search_bench's vocabulary)


@functools.cache
def _zipf() -> tuple[list[str], list[float], list[str]]:
    sys.path.insert(0, str(ROOT / "bench"))
    import search_bench

    return search_bench.VOCAB, search_bench.CUM, list(search_bench.REAL_WORDS)


def _text(rng: random.Random, n: int) -> str:
    if TEXT["mode"] == "zipf":
        vocab, cum, _ = _zipf()
        return " ".join(rng.choices(vocab, cum_weights=cum, k=n))
    return " ".join(rng.choice(WORDS) for _ in range(n))


def query_words() -> list[str]:
    """The words the timed queries are drawn from (two at random per call)."""
    return _zipf()[2] if TEXT["mode"] == "zipf" else WORDS


def build(vault: Path, notes: int, memories: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    folders = ["brain", "work/active", "reference", "work/archive"]
    manifest = {
        "memory_root": "memories",
        "mcp_exposed_roots": ["brain/", "work/active/", "reference/"],
        "mcp_never_expose": ["secret.md"],
        "user_content_roots": ["brain/", "memories/", "reference/", "work/active/"],
    }
    vault.mkdir(parents=True)
    (vault / "vault-manifest.json").write_text(json.dumps(manifest))
    for i in range(notes):
        folder = vault / folders[i % len(folders)] / f"t{i % 50}"
        folder.mkdir(parents=True, exist_ok=True)
        tags = "[private]" if i % 97 == 0 else "[note]"
        body = "\n\n".join(f"## {_text(rng, 3)}\n\n{_text(rng, 60)}" for _ in range(3))
        link = f"[[n{rng.randrange(notes)}]]"
        (folder / f"n{i}.md").write_text(f"---\ntags: {tags}\n---\n# Note {i}\n\n{body}\n\nSee {link}.\n")
    for i in range(memories):
        day = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}"
        scope = ("general", "project", "platform")[i % 3]
        projects = f"[{PROJECTS[i % 4]}]" if scope == "project" else "[]"
        platforms = "[ios]" if scope == "platform" else "[]"
        folder = vault / "memories" / day[:4] / day[5:7]
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{day} m{i}.md").write_text(
            f"---\ndate: {day}\ntags: [memory]\nscope: {scope}\n"
            f"projects: {projects}\nplatforms: {platforms}\n"
            f"confidence: observed\nsession: {day}T10:00:{i % 60:02d}.000Z\n---\n# m{i}\n\n{_text(rng, 40)}\n"
        )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# The floor under any server built on the SDK: the smallest low-level server over stdio, nothing of
# shardpy, timed to its initialize answer exactly as ours is.
TRIVIAL_SERVER = """
import anyio
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

async def main():
    server = Server("floor")
    async with stdio_server() as (r, w):
        await server.run(r, w, server.create_initialization_options())

anyio.run(main)
"""
INIT = json.dumps(
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "b", "version": "0"},
        },
    }
)


def _to_initialize(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds from spawn to the initialize answer, and the child's CPU seconds by then."""
    t = time.perf_counter()
    proc = subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=cwd
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write((INIT + "\n").encode())
    proc.stdin.flush()
    answer = proc.stdout.readline()
    wall = time.perf_counter() - t
    try:
        with open(f"/proc/{proc.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        cpu = float("nan")
    proc.stdin.close()
    proc.wait()
    assert b'"result"' in answer, answer
    return wall, cpu


def startup(vault: Path, env: dict[str, str], trials: int) -> dict[str, tuple[float, float]]:
    """Median (wall, CPU) to the initialize answer: ours, the trivial SDK server, the SDK import
    alone and bare python."""
    runs: dict[str, list[tuple[float, float]]] = {"serve": [], "trivial": [], "sdk": [], "bare": []}
    argv = {
        "serve": [sys.executable, "-m", "shardpy", "serve", str(vault)],
        "trivial": [sys.executable, "-c", TRIVIAL_SERVER],
    }
    for _ in range(trials):
        for key in ("serve", "trivial"):
            runs[key].append(_to_initialize(argv[key], env, vault.parent))
        for key, code in (("sdk", "import mcp.server.lowlevel, mcp.server.stdio"), ("bare", "pass")):
            t, c = time.perf_counter(), _children_cpu()
            subprocess.run([sys.executable, "-c", code], env=env, check=True)
            runs[key].append((time.perf_counter() - t, _children_cpu() - c))
    return {
        k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in runs.items()
    }


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


async def over_stdio(vault: Path, env: dict[str, str], calls: int, cwd: Path) -> dict[str, list[float]]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "shardpy", "serve", str(vault)], env=env, cwd=str(cwd)
    )
    rng = random.Random(1)
    out: dict[str, list[float]] = {"search": [], "recall": []}
    with open(os.devnull, "w") as devnull:
        async with stdio_client(params, errlog=devnull) as (r, w), ClientSession(r, w) as s:
            await s.initialize()
            await s.call_tool("search", {"query": "cache"})  # warm: first search opens the index
            await s.call_tool("recall", {"query": "cache"})
            for _ in range(calls):
                q = " ".join(rng.sample(query_words(), 2))
                t = time.perf_counter()
                res = await s.call_tool("search", {"query": q, "limit": 10})
                out["search"].append(time.perf_counter() - t)
                assert not res.is_error
                t = time.perf_counter()
                res = await s.call_tool("recall", {"query": q, "limit": 10})
                out["recall"].append(time.perf_counter() - t)
                assert not res.is_error
    return out


def in_process(vault: Path, calls: int, project: str) -> dict[str, list[float]]:
    from shardpy.serve import tools
    from shardpy.serve.identity import Caller

    served = tools.Served.open(vault)
    caller = Caller(project)
    rng = random.Random(1)
    out: dict[str, list[float]] = {"search": [], "recall": [], "index": [], "stat": []}
    from shardpy import index

    tools.search(served, caller, tools.SearchArgs(query="cache"))
    tools.recall(served, caller, tools.RecallArgs(query="cache"))
    for _ in range(calls):
        q = " ".join(rng.sample(query_words(), 2))
        t = time.perf_counter()
        tools.search(served, caller, tools.SearchArgs(query=q, limit=10))
        out["search"].append(time.perf_counter() - t)
        t = time.perf_counter()
        tools.recall(served, caller, tools.RecallArgs(query=q, limit=10))
        out["recall"].append(time.perf_counter() - t)
        t = time.perf_counter()
        index.search(vault, q, top=40)  # the floor under search: the index's own query, one page
        out["index"].append(time.perf_counter() - t)
        t = time.perf_counter()
        for dirpath, _dirs, files in os.walk(vault / "memories"):
            for f in files:
                os.lstat(os.path.join(dirpath, f))  # the floor under recall: list and stat the store
        out["stat"].append(time.perf_counter() - t)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument("--memories", type=int, default=2_000)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--trials", type=int, default=5)
    ap.add_argument(
        "--text",
        choices=["tiny", "zipf"],
        default="tiny",
        help="tiny: 27 words, each in ~90%% of sections (every query ranks nearly every section);"
        " zipf: the search bench's 50,000-word Zipf vocabulary and query words",
    )
    a = ap.parse_args()
    TEXT["mode"] = a.text
    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        env = child_env(XDG_CACHE_HOME=str(base / "cache"), PYTHONPATH=str(ROOT))
        os.environ["XDG_CACHE_HOME"] = str(base / "cache")
        vault = base / "vault"
        repo = base / "atlas"
        repo.mkdir()
        t = time.perf_counter()
        build(vault, a.notes, a.memories)
        print(
            f"vault: {a.notes:,} notes, {a.memories:,} memories ({a.text} text),"
            f" generated in {time.perf_counter() - t:.1f} s"
        )
        from shardpy import index

        t = time.perf_counter()
        index.refresh(vault)
        print(f"index built in {time.perf_counter() - t:.1f} s (not part of any figure below)")
        print(f"reference loop (10M steps): {reference_loop_ms():.0f} ms")
        up = startup(vault, env, a.trials)
        (s, s_cpu), (tw, tc) = up["serve"], up["trivial"]
        print(
            f"start-up to initialize answer: {s * 1000:.0f} ms wall, {s_cpu * 1000:.0f} ms CPU,"
            f" median of {a.trials}  (target < 500 ms)"
        )
        print(
            f"  floor: the trivial low-level SDK server to its initialize answer {tw * 1000:.0f} ms wall,"
            f" {tc * 1000:.0f} ms CPU; import of the SDK alone {up['sdk'][0] * 1000:.0f} ms wall,"
            f" {up['sdk'][1] * 1000:.0f} ms CPU; bare python {up['bare'][0] * 1000:.0f} ms"
        )
        wire = anyio.run(over_stdio, vault, env, a.calls, repo)
        raw = in_process(vault, a.calls, "atlas")
        floors = {
            "search": ("index.search alone", raw["index"]),
            "recall": ("walk+lstat of the store", raw["stat"]),
        }
        for tool in ("search", "recall"):
            w, r = wire[tool], raw[tool]
            label, floor = floors[tool]
            print(
                f"{tool:6} over stdio: p50 {pct(w, 0.5) * 1000:.1f} ms  p95 {pct(w, 0.95) * 1000:.1f} ms"
                f"  (target p95 < 50 ms, {a.calls} calls)"
            )
            print(
                f"        in-process handler: p50 {pct(r, 0.5) * 1000:.1f} ms"
                f"  p95 {pct(r, 0.95) * 1000:.1f} ms;"
                f" {label}: p50 {pct(floor, 0.5) * 1000:.1f} ms  p95 {pct(floor, 0.95) * 1000:.1f} ms"
            )
        print(f"reference loop at the end: {reference_loop_ms():.0f} ms")


if __name__ == "__main__":
    main()
