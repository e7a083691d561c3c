"""Benchmark the memory graph on ``shardpy serve`` beside the reference MCP memory server.

Generates a graph of N entities and R relations (three observations each, some keyed), writes
it as the reference server's ``memory.jsonl``, imports it with ``shardpy import --from
mcp-memory`` (the entity notes the tools serve), then times over stdio, through the SDK
client, against both servers on the same data:

- the first call of a fresh server (``open_nodes`` of three names, a small answer: ours reads
  and parses every entity note; the reference reads its JSONL file, as on every call), and of
  a second server (ours starts from the on-disk index the first saved; the reference's figure
  is its first call again),
- ``read_graph`` (the whole graph; reported, no target),
- ``search_nodes`` (a word of the vocabulary, held by about 0.6% of the entities, 120 of 20,000;
  target p95 < 50 ms at 20k entities),
- ``search_nodes_wide`` (a prefix of ten words, about 6% of the entities: the answer's size,
  not the search, is then the time of both servers; reported, no target),
- ``open_nodes`` (three random names; target p95 < 50 ms),
- ``add_observations`` (one new fact on a random entity; target p95 < 100 ms).

Words are fixed-width (``w0042``), so a word is never a prefix of another: before, ``w1`` matched
half of the graph and a few such queries made search_nodes' p95 a read_graph. It prints figures
and asserts nothing about time.

    python bench/graph_bench.py [--entities 20000] [--relations 60000] [--calls 50]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORDS = [f"w{i:04d}" for i in range(2000)]
SAVE_WAIT = 12.0  # seconds a first server is kept after its calls, so its sweep saves the index


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def generate(path: Path, entities: int, relations: int, seed: int = 7) -> list[str]:
    rnd = random.Random(seed)
    names = [f"Entity {i:05d}" for i in range(entities)]
    lines = []
    for i, name in enumerate(names):
        obs = [" ".join(rnd.choices(WORDS, k=6)) for _ in range(2)] + [f"[role] role {i % 17}"]
        lines.append(
            json.dumps({"type": "entity", "name": name, "entityType": f"t{i % 11}", "observations": obs})
        )
    seen: set[tuple[str, str, str]] = set()
    while len(seen) < relations:
        a, b = rnd.sample(names, 2)
        seen.add((a, b, rnd.choice(["knows", "works_with", "depends_on", "part_of"])))
    lines += [
        json.dumps({"type": "relation", "from": a, "to": b, "relationType": t}) for a, b, t in sorted(seen)
    ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return names


async def timed(call: Callable[[], Awaitable[Any]], n: int) -> list[float]:
    out = []
    for _ in range(n):
        start = time.perf_counter()
        result = await call()
        out.append((time.perf_counter() - start) * 1000)
        assert not result.is_error, result
    return out


async def measure(session: Any, names: list[str], calls: int, rnd: random.Random) -> dict[str, list[float]]:
    figures: dict[str, list[float]] = {}
    figures["read_graph"] = await timed(lambda: session.call_tool("read_graph", {}), max(3, calls // 10))
    figures["search_nodes"] = await timed(
        lambda: session.call_tool("search_nodes", {"query": rnd.choice(WORDS)}), calls
    )
    figures["search_nodes_wide"] = await timed(
        lambda: session.call_tool("search_nodes", {"query": f"w{rnd.randrange(200):03d}"}), max(3, calls // 5)
    )
    figures["open_nodes"] = await timed(
        lambda: session.call_tool("open_nodes", {"names": rnd.sample(names, 3)}), calls
    )
    counter = iter(range(10**9))
    figures["add_observations"] = await timed(
        lambda: session.call_tool(
            "add_observations",
            {
                "observations": [
                    {"entityName": rnd.choice(names), "contents": [f"bench fact {next(counter)}"]}
                ]
            },
        ),
        calls,
    )
    return figures


async def run_ours(vault: Path, repo: Path, names: list[str], calls: int) -> dict[str, list[float]]:
    figures = await _ours(vault, repo, names, calls)
    # A second server, as the next MCP session starts one: its first call starts from the on-disk
    # index the first one saved (graph.cache) instead of parsing every note.
    warm = await _ours(vault, repo, names, 0)
    return {"first_call": figures.pop("first_call"), "first_call_warm": warm["first_call"], **figures}


async def _ours(vault: Path, repo: Path, names: list[str], calls: int) -> dict[str, list[float]]:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "shardpy", "serve", str(vault)],
        cwd=str(repo),
        # the derived index's on-disk copy (graph.cache) goes with the generated vault, not the user's cache
        env={**os.environ, "SHARDPY_CACHE_DIR": str(vault.parent / "cache")},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        # the first call loads the tool modules and the index
        first = await timed(lambda: session.call_tool("open_nodes", {"names": names[:3]}), 1)
        if not calls:
            return {"first_call": first}
        figures = await measure(session, names, calls, random.Random(1))
        await anyio.sleep(SAVE_WAIT)  # the background sweep saves the on-disk index meanwhile
        return {"first_call": first, **figures}


async def run_reference(graph: Path, names: list[str], calls: int) -> dict[str, list[float]]:
    from tests.oracle import memory_server_session

    async with memory_server_session(graph) as session:
        first = await timed(lambda: session.call_tool("open_nodes", {"names": names[:3]}), 1)
        figures = await measure(session, names, calls, random.Random(1))
        return {"first_call": first, "first_call_warm": first, **figures}  # no index: it reads its file


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--entities", type=int, default=20_000)
    ap.add_argument("--relations", type=int, default=60_000)
    ap.add_argument("--calls", type=int, default=50)
    args = ap.parse_args()
    import anyio

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        graph = root / "memory.jsonl"
        names = generate(graph, args.entities, args.relations)
        vault = root / "vault"
        vault.mkdir()
        (vault / "vault-manifest.json").write_text(json.dumps({"memory_root": "memories"}), encoding="utf-8")
        start = time.perf_counter()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "shardpy",
                "import",
                "--from",
                "mcp-memory",
                str(graph),
                str(vault),
                "--apply",
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
        print(
            f"import of {args.entities:,} entities / {args.relations:,} relations: "
            f"{time.perf_counter() - start:.1f} s"
        )
        repo = root / "atlas"
        repo.mkdir()
        ours = anyio.run(run_ours, vault, repo, names, args.calls)
        ref = anyio.run(run_reference, graph, names, args.calls)
    print(f"{'tool':<18} {'shardpy p50':>12} {'p95':>8} {'reference p50':>14} {'p95':>8}   (ms, over stdio)")
    for tool in ours:
        a, b = ours[tool], ref[tool]
        print(
            f"{tool:<18} {statistics.median(a):>12.1f} {pct(a, 0.95):>8.1f} "
            f"{statistics.median(b):>14.1f} {pct(b, 0.95):>8.1f}"
        )


if __name__ == "__main__":
    main()
