"""Whole-process `shardpy search` against `grep -ril` on notes users have: a basic-memory project
imported by `shardpy import --apply`, beside search_bench's own generated vault, same session.

For each corpus: build the vault, run `shardpy index .` (a whole process, vectors included: the
bundled model is the default; the folder is named because neither vault has ``.obsidian`` or a
manifest, and search refuses an unindexed folder of more than 500 notes), check the index holds a
vector per section, index it again without vectors (``SHARDPY_EMBED_MODEL=off``, another cache:
the cold index's ratio), then time five whole `shardpy search` processes (search_bench's queries,
hybrid, median wall and CPU of the child) and `grep -ril` for the first word of search_bench's
first six queries over the same tree.

    python bench/search_imported.py [--notes 20000] [--corpus imported,generated,handwritten]

``imported``: tests/importers/fixtures.py ``generated_project`` (the notes bench/import_bench.py
imports), then ``shardpy import --from basic-memory SRC VAULT --apply`` (notes land under
``memories/basic-memory/``, the run's records under ``.shardmind/imports/``). ``generated``:
search_bench's ``build_vault``. ``handwritten``: bench/gitsync_bench.py's Obsidian-style notes
(``handwritten_note``). grep runs over the vault root (records included) and over the
notes folder only.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import search_bench  # noqa: E402
from childenv import child_env, reference_loop_ms  # noqa: E402

from tests.importers.fixtures import generated_project  # noqa: E402


def _run(argv: list[str], **kw: Any) -> tuple[float, float]:
    """(wall, CPU) seconds of one whole child process (as search_bench._child); stops the bench with
    the child's output if it fails."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kw)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _vectors(cache: Path) -> tuple[int, int]:
    """(sections, vectors) in the one index under ``cache``."""
    (db,) = list((cache / "index").glob("*.sqlite3"))
    with sqlite3.connect(db) as con:
        chunks = con.execute("SELECT count(*) FROM chunks").fetchone()[0]
        vecs = con.execute("SELECT count(*) FROM vectors WHERE chunk_id > 0").fetchone()[0]
    return chunks, vecs


def write_handwritten(vault: Path, notes: int) -> None:
    """bench/gitsync_bench.py's Obsidian-style notes (daily notes, meetings, projects, people,
    clippings; a tenth without frontmatter, CRLF now and then), written as they are; a name two
    notes share gets the note's number."""
    from gitsync_bench import handwritten_note

    for i in range(notes):
        rel, text = handwritten_note(i)
        path = vault / rel
        if path.exists():
            path = path.with_name(f"{path.stem} {i}{path.suffix}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def corpus(kind: str, notes: int, work: Path) -> dict[str, Any]:
    vault = work / f"vault-{kind}"
    cache = work / f"cache-{kind}"
    env = child_env(SHARDPY_CACHE_DIR=str(cache))
    out: dict[str, Any] = {"corpus": kind}
    t = time.perf_counter()
    if kind == "imported":
        src = work / "src"
        generated_project(src, notes)
        vault.mkdir()
        wall, cpu = _run(
            [
                sys.executable,
                "-m",
                "shardpy",
                "import",
                "--from",
                "basic-memory",
                str(src),
                str(vault),
                "--apply",
            ],
            env=env,
            cwd=work,
        )
        out["import_s"], out["import_cpu_s"] = round(wall, 1), round(cpu, 1)
        notes_dir = vault / "memories"
    elif kind == "handwritten":
        write_handwritten(vault, notes)
        notes_dir = vault
    else:
        search_bench.build_vault(vault, notes)
        notes_dir = vault
    out["build_s"] = round(time.perf_counter() - t, 1)
    out["notes"] = sum(1 for _ in notes_dir.rglob("*.md"))
    out["tree_mb"] = round(sum(p.stat().st_size for p in vault.rglob("*") if p.is_file()) / 1e6, 1)
    out["notes_mb"] = round(sum(p.stat().st_size for p in notes_dir.rglob("*.md")) / 1e6, 1)
    os.sync()
    wall, cpu = _run([sys.executable, "-m", "shardpy", "index", "."], env=env, cwd=vault)
    out["index_s"], out["index_cpu_s"] = round(wall, 1), round(cpu, 1)
    out["sections"], out["vectors"] = _vectors(cache)
    # The same cold index without vectors (issue 29: with vectors at most 3x this, same run).
    lexical = {**env, "SHARDPY_CACHE_DIR": str(work / f"cache-{kind}-lexical"), "SHARDPY_EMBED_MODEL": "off"}
    wall, cpu = _run([sys.executable, "-m", "shardpy", "index", "."], env=lexical, cwd=vault)
    out["lexical_index_s"], out["lexical_index_cpu_s"] = round(wall, 1), round(cpu, 1)
    out["index_vs_lexical"] = round(out["index_s"] / wall, 2)
    out["index_vs_lexical_cpu"] = round(out["index_cpu_s"] / cpu, 2)
    search_bench._cli_search_ms(vault, env)  # warm the page cache for both sides alike
    search_bench._grep_ms(vault, search_bench.QUERIES[:6])
    out.update(search_bench._cli_search_ms(vault, env))
    out.update(search_bench._grep_ms(vault, search_bench.QUERIES[:6]))
    notes_only = search_bench._grep_ms(notes_dir, search_bench.QUERIES[:6])
    out.update({f"notes_only_{k}": v for k, v in notes_only.items()})
    out["cli_vs_grep"] = out["cli_search_ms"] / out["grep_p50_ms"]
    out["cli_vs_grep_cpu"] = out["cli_search_cpu_ms"] / out["grep_cpu_p50_ms"]
    out["cli_vs_grep_notes_only_cpu"] = out["cli_search_cpu_ms"] / out["notes_only_grep_cpu_p50_ms"]
    out.update(search_bench._floor_ms(env))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=20_000)
    ap.add_argument(
        "--corpus", default="imported,generated", help="comma-separated: imported,generated,handwritten"
    )
    args = ap.parse_args()
    loop = reference_loop_ms()
    print(f"reference loop: {loop:.0f} ms; load average {os.getloadavg()} on {os.cpu_count()} cores")
    work = Path(tempfile.mkdtemp(prefix="search-imported-"))
    results = []
    try:
        for kind in args.corpus.split(","):
            res = corpus(kind, args.notes, work)
            print(json.dumps(res), file=sys.stderr, flush=True)
            results.append(res)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = [
        ("notes", "notes", "d"),
        ("vault tree MB (notes MB)", "tree_mb", ".1f"),
        ("shardpy index wall s", "index_s", ".1f"),
        ("shardpy index CPU s", "index_cpu_s", ".1f"),
        ("same, no vectors: wall s", "lexical_index_s", ".1f"),
        ("same, no vectors: CPU s", "lexical_index_cpu_s", ".1f"),
        ("cold index / no vectors, wall (<= 3)", "index_vs_lexical", ".2f"),
        ("cold index / no vectors, CPU", "index_vs_lexical_cpu", ".2f"),
        ("sections / vectors", "sections", "d"),
        ("shardpy search process wall ms", "cli_search_ms", ".0f"),
        ("shardpy search process CPU ms", "cli_search_cpu_ms", ".0f"),
        ("the same, --mode lexical, CPU ms", "cli_search_lexical_cpu_ms", ".0f"),
        ("the same, index an hour old, CPU ms", "cli_search_aged_cpu_ms", ".0f"),
        ("grep -ril p50 wall ms (vault root)", "grep_p50_ms", ".0f"),
        ("grep -ril p50 CPU ms (vault root)", "grep_cpu_p50_ms", ".0f"),
        ("grep -ril p50 wall ms (notes only)", "notes_only_grep_p50_ms", ".0f"),
        ("grep -ril p50 CPU ms (notes only)", "notes_only_grep_cpu_p50_ms", ".0f"),
        ("search / grep wall (vault root)", "cli_vs_grep", ".2f"),
        ("search / grep CPU (vault root)", "cli_vs_grep_cpu", ".2f"),
        ("search / grep CPU (notes only)", "cli_vs_grep_notes_only_cpu", ".2f"),
        ("python -c pass CPU ms", "python_floor_cpu_ms", ".0f"),
        ("import numpy, one BLAS thread, CPU ms (no longer paid)", "numpy_one_thread_floor_cpu_ms", ".0f"),
    ]
    print(f"{'':38}" + "".join(f"{r['corpus']:>14}" for r in results))
    for label, key, fmt in rows:
        cells = []
        for r in results:
            cell = format(r[key], fmt)
            if key == "tree_mb":
                cell += f" ({r['notes_mb']:.1f})"
            if key == "sections":
                cell += f" / {r['vectors']}"
            cells.append(f"{cell:>14}")
        print(f"{label:38}" + "".join(cells))
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    os.environ.pop("SHARDPY_CACHE_DIR", None)
    main()
