"""Retrieval quality of `shardpy search`: lexical, semantic and hybrid on one evaluation set.

    python bench/search_quality.py [--model SPEC ...] [--any-weight W ...]

The set (bench/quality/): a flagship vault (`shardpy install --defaults`) plus
notes written by hand in the formats shardpy imports — basic-memory notes,
a Claude Code memory folder, an MCP memory graph — imported with
`shardpy import` as a user would (the Markdown ones are copied as they are
when the importer is unavailable, and the script says so).
bench/quality/queries.tsv holds (kind, title of the relevant note, query):
"reworded" queries avoid the note's key words, "exact" ones use them.

Prints recall@5 and MRR@10 per mode and kind. ``--model`` takes what
SHARDPY_EMBED_MODEL takes (wordllama, a model folder); several compare
candidates in one run, each with its own fresh index.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DATA = HERE / "quality"
sys.path.insert(0, str(HERE.parent))


def _shardpy(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardpy", *args], capture_output=True, text=True, env=env, check=False
    )


def build_vault(root: Path, env: dict[str, str]) -> Path:
    vault = root / "vault"
    done = _shardpy("install", "--defaults", str(vault), env=env)
    if done.returncode != 0:
        raise SystemExit(f"shardpy install failed: {done.stderr[-800:]}")
    sources = {
        "basic-memory": DATA / "basic-memory",
        "claude-code-memory": DATA / "claude-code",
        "mcp-memory": DATA / "mcp-graph" / "memory.jsonl",
    }
    for kind, src in sources.items():
        done = _shardpy("import", str(src), str(vault), "--from", kind, "--apply", env=env)
        if done.returncode != 0:
            print(f"  import {kind} failed ({done.stderr.strip()[-200:]}); copying its Markdown instead")
            dest = vault / "imported" / kind
            if src.is_dir():
                shutil.copytree(src, dest, dirs_exist_ok=True)
    return vault


def load_queries() -> list[tuple[str, str, str]]:
    rows = []
    for line in (DATA / "queries.tsv").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            kind, title, query = line.split("\t")
            rows.append((kind, title, query))
    return rows


def _titles_by_path(vault: Path) -> dict[str, str]:
    """Relevance is judged by note title; Claude Code memories are titled by their ``name``."""
    from shardpy.index import store

    root = Path(os.path.realpath(vault))
    with store.reader(store.index_path(root), str(root)) as conn:
        assert conn is not None
        return {str(p): str(t) for p, t in conn.execute("SELECT path, title FROM files")}


def evaluate(
    vault: Path, queries: list[tuple[str, str, str]], modes: list[str]
) -> dict[str, dict[str, list[float]]]:
    from shardpy import index

    titles = _titles_by_path(vault)
    known = set(titles.values())
    missing = sorted({t for _k, t, _q in queries} - known)
    if missing:
        print(f"  warning: no note titled {missing}")
    out: dict[str, dict[str, list[float]]] = {}
    for mode in modes:
        rr: dict[str, list[float]] = {"reworded": [], "exact": []}
        rec: dict[str, list[float]] = {"reworded": [], "exact": []}
        started = time.perf_counter()
        for kind, title, query in queries:
            hits = index.search(vault, query, top=10, mode=mode, max_age=float("inf")).hits
            got = [titles.get(h.path, h.title) for h in hits]
            rank = got.index(title) + 1 if title in got else None
            rec[kind].append(1.0 if rank is not None and rank <= 5 else 0.0)
            rr[kind].append(1.0 / rank if rank is not None else 0.0)
        out[mode] = {
            **{f"recall@5 {k}": v for k, v in rec.items()},
            **{f"MRR@10 {k}": v for k, v in rr.items()},
            "ms/query": [(time.perf_counter() - started) * 1000 / len(queries)],
        }
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def report(label: str, res: dict[str, dict[str, list[float]]]) -> None:
    cols = ["recall@5 reworded", "recall@5 exact", "MRR@10 reworded", "MRR@10 exact", "ms/query"]
    print(f"\n{label}")
    print(f"  {'mode':<10}" + "".join(f"{c:>20}" for c in cols))
    for mode, row in res.items():
        print(f"  {mode:<10}" + "".join(f"{_mean(row[c]):>20.3f}" for c in cols))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", action="append", help="SHARDPY_EMBED_MODEL value(s) to compare")
    ap.add_argument("--any-weight", action="append", type=float, help="hybrid weights of the any-word list")
    ap.add_argument("--k", action="append", type=int, help="reciprocal-rank fusion constant(s)")
    ap.add_argument("--keep", help="build the vault here and keep it")
    args = ap.parse_args()
    from shardpy.index import embed, hybrid

    queries = load_queries()
    kinds = [k for k, _t, _q in queries]
    print(f"{len(queries)} queries: {kinds.count('reworded')} reworded, {kinds.count('exact')} exact")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(args.keep or tmp)
        root.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "SHARDPY_CACHE_DIR": str(root / "cache"), "SHARDPY_EMBED_MODEL": "off"}
        vault = build_vault(root, env)
        print(f"vault: {sum(1 for _ in vault.rglob('*.md'))} Markdown files")
        for spec in args.model or [embed.DEFAULT]:
            os.environ["SHARDPY_EMBED_MODEL"] = spec
            os.environ["SHARDPY_CACHE_DIR"] = str(root / "cache" / spec.replace("/", "_"))
            from shardpy import index

            started = time.perf_counter()
            rep = index.refresh(vault, full=True)
            took = time.perf_counter() - started
            print(f"\nmodel {spec}: index of {rep.total_chunks} sections in {took:.2f} s")
            grid = [(k, w) for k in args.k or [hybrid.K] for w in args.any_weight or [hybrid.ANY_WEIGHT]]
            for n, (k, weight) in enumerate(grid):
                hybrid.K, hybrid.ANY_WEIGHT = k, weight
                res = evaluate(vault, queries, ["lexical", "semantic", "hybrid"] if n == 0 else ["hybrid"])
                report(f"model {spec}, fusion K {k}, any-word weight {weight}", res)


if __name__ == "__main__":
    main()
