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

Each call's time is also shown less the SDK client's check of the answer against the tool's
output schema (``CheckClock``): that check runs in the client, costs the same for both servers,
and is most of a 120-entity search answer's time (about 50 ms CPU) whichever server answers.

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


class CheckClock:
    """The time the SDK client spends checking each answer against the tool's output schema
    (``ClientSession.validate_tool_result``: Python jsonschema, about 50 ms CPU for a 100 kB
    search answer, the same for both servers: a client's cost, not a server's)."""

    def __init__(self, session: Any) -> None:
        self.spent = 0.0
        real = session.validate_tool_result

        async def validate(name: str, result: Any) -> None:
            start = time.perf_counter()
            try:
                await real(name, result)
            finally:
                self.spent += time.perf_counter() - start

        session.validate_tool_result = validate


Timing = tuple[float, float]  # (ms the call took, ms of it the client spent checking the answer)


async def timed(call: Callable[[], Awaitable[Any]], n: int, clock: CheckClock) -> list[Timing]:
    out = []
    for _ in range(n):
        start, checked = time.perf_counter(), clock.spent
        result = await call()
        out.append(((time.perf_counter() - start) * 1000, (clock.spent - checked) * 1000))
        assert not result.is_error, result
    return out


async def measure(
    session: Any, names: list[str], calls: int, rnd: random.Random, clock: CheckClock
) -> dict[str, list[Timing]]:
    figures: dict[str, list[Timing]] = {}
    figures["read_graph"] = await timed(
        lambda: session.call_tool("read_graph", {}), max(3, calls // 10), clock
    )
    figures["search_nodes"] = await timed(
        lambda: session.call_tool("search_nodes", {"query": rnd.choice(WORDS)}), calls, clock
    )
    figures["search_nodes_wide"] = await timed(
        lambda: session.call_tool("search_nodes", {"query": f"w{rnd.randrange(200):03d}"}),
        max(3, calls // 5),
        clock,
    )
    figures["open_nodes"] = await timed(
        lambda: session.call_tool("open_nodes", {"names": rnd.sample(names, 3)}), calls, clock
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
        clock,
    )
    return figures


async def run_ours(vault: Path, repo: Path, names: list[str], calls: int) -> dict[str, list[Timing]]:
    figures = await _ours(vault, repo, names, calls)
    # A second server, as the next MCP session starts one: its first call starts from the on-disk
    # index the first one saved (graph.cache) instead of parsing every note.
    warm = await _ours(vault, repo, names, 0)
    return {"first_call": figures.pop("first_call"), "first_call_warm": warm["first_call"], **figures}


async def _ours(vault: Path, repo: Path, names: list[str], calls: int) -> dict[str, list[Timing]]:
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
        clock = CheckClock(session)
        # the first call loads the tool modules and the index
        first = await timed(lambda: session.call_tool("open_nodes", {"names": names[:3]}), 1, clock)
        if not calls:
            return {"first_call": first}
        figures = await measure(session, names, calls, random.Random(1), clock)
        await anyio.sleep(SAVE_WAIT)  # the background sweep saves the on-disk index meanwhile
        return {"first_call": first, **figures}


async def run_reference(graph: Path, names: list[str], calls: int) -> dict[str, list[Timing]]:
    from tests.oracle import memory_server_session

    async with memory_server_session(graph) as session:
        clock = CheckClock(session)
        first = await timed(lambda: session.call_tool("open_nodes", {"names": names[:3]}), 1, clock)
        figures = await measure(session, names, calls, random.Random(1), clock)
        return {"first_call": first, "first_call_warm": first, **figures}  # no index: it reads its file


def in_process(vault: Path, names: list[str], calls: int) -> dict[str, list[float]]:
    """The same calls' handlers run in this process, timed in CPU of the calling thread (ms): what a
    call costs the server, whatever the machine's load does to its wall time. The cache folder is
    the servers' (SHARDPY_CACHE_DIR, set by main), so the index loads as a second server's."""
    from shardpy.serve import graphtools as gt
    from shardpy.serve.identity import Caller
    from shardpy.serve.toolkit import Served

    served, caller, rnd = Served.open(vault), Caller("atlas"), random.Random(1)
    gt.store_of(served).snapshot(full=True)
    counter = iter(range(10**9))
    calls_of: dict[str, Callable[[], Any]] = {
        "search_nodes": lambda: gt.search_nodes(served, caller, gt.SearchNodesArgs(query=rnd.choice(WORDS))),
        "open_nodes": lambda: gt.open_nodes(served, caller, gt.OpenNodesArgs(names=rnd.sample(names, 3))),
        "add_observations": lambda: gt.add_observations(
            served,
            caller,
            gt.AddObservationsArgs.model_validate(
                {
                    "observations": [
                        {"entityName": rnd.choice(names), "contents": [f"cpu fact {next(counter)}"]}
                    ]
                }
            ),
        ),
    }
    out: dict[str, list[float]] = {}
    for tool, call in calls_of.items():
        out[tool] = []
        for _ in range(calls):
            start = time.thread_time()
            call()
            out[tool].append((time.thread_time() - start) * 1000)
    gt.store_of(served).close()
    return out


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
        os.environ["SHARDPY_CACHE_DIR"] = str(vault.parent / "cache")
        cpu = in_process(vault, names, args.calls)
    print(f"load average (1, 5, 15 min): {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("ms over stdio, as the SDK client sees a call; 'less check': without the client's own")
    print("output-schema check of the answer (Python jsonschema, the same for both servers)")
    head = f"{'tool':<18} {'shardpy p50':>12} {'p95':>8} {'reference p50':>14} {'p95':>8}"
    print(f"{head}   {'less check: ours p50':>20} {'p95':>8} {'ref p50':>8} {'p95':>8}")
    for tool in ours:
        row = f"{tool:<18}"
        for side, width in ((ours[tool], 12), (ref[tool], 14)):
            walls = [w for w, _ in side]
            row += f" {statistics.median(walls):>{width}.1f} {pct(walls, 0.95):>8.1f}"
        row += "   "
        for side, width in ((ours[tool], 20), (ref[tool], 8)):
            served = [w - c for w, c in side]
            row += f" {statistics.median(served):>{width}.1f} {pct(served, 0.95):>8.1f}"
        print(row)
    print("in-process CPU of the calling thread, ms (the same calls' handlers, no transport):")
    for tool, spent in cpu.items():
        print(f"{tool:<18} p50 {statistics.median(spent):>6.1f}   p95 {pct(spent, 0.95):>6.1f}")


if __name__ == "__main__":
    main()
