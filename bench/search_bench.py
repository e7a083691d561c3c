"""Benchmark the vault search index (`shardpy.index`) on generated vaults.

For each size, in a fresh child process with its own cache folder:

- cold: the first ``refresh`` of the vault (walk, read, chunk, insert);
- no-change: a second ``refresh`` with nothing changed (walk + stat compare);
- one-note: one note edited, then ``refresh(only=[that note])``, median of 20;
- one-note CLI: ``shardpy index --only PATH`` as the flagship hook runs it
  (a whole child process, start-up included), median of 5;
- query p50/p95: ``search(max_age=inf)`` over a fixed set of queries (words,
  AND of several, phrase, prefix, OR fallback, Chinese, filters), 3 rounds;
- DB size (database + WAL) and the child's peak RSS.

Beside them, the no-index reference: ``grep -ril WORD`` over the tree for
the first word of each query (p50/p95 over a subset). basic-memory's own
search needs Python >= 3.12: bench/search_basic_memory.py runs it beside
shardpy's index on the same notes from its own virtualenv.

Targets (issue 15): cold 20,000 < 15 s; no-change 20,000 < 0.5 s; one-note
< 50 ms; query p95 < 30 ms at 100,000.

    python bench/search_bench.py [SIZE ...]      (default: 20000 100000)
    SEARCH_BENCH_KEEP=/tmp/keep python bench/search_bench.py   (generate each vault once)
    python bench/search_bench.py 20000 --compare /tmp/before   (also time the queries with the
        shardpy checked out in /tmp/before, on the same index: git archive REV | tar -x -C /tmp/before)
"""

from __future__ import annotations

import contextlib
import itertools
import json
import multiprocessing
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from childenv import child_env, reference_loop_ms  # noqa: E402

QUERIES = [
    "kubernetes",
    "project",  # one of the most common words
    "postmortem rollback",
    "budget review",
    "release plan deadline",
    '"capacitive probes"',
    "calibr*",
    "incident postmortem",
    "quokka zebrafish",  # OR fallback: no note has both
    "数据库",
    "migration NOT rollback",
    "vendor contract renewal",
    "gotcha",
    "onboarding checklist",
]
FILTERED = [("probes", {"type": "incident"}), ("budget", {"path": "area-07"})]
# Query words placed at different frequencies in a Zipf-distributed vocabulary (rank 1 is the
# most common word): realistic text has a few very common words and a long tail.
REAL_WORDS = {
    "project": 30, "meeting": 60, "decision": 90, "budget": 150, "review": 200, "release": 300,
    "plan": 40, "deadline": 700, "kubernetes": 1200, "incident": 500, "postmortem": 4000,
    "migration": 900, "rollback": 2500, "vendor": 1800, "contract": 1100, "renewal": 6000,
    "gotcha": 9000, "onboarding": 3000, "checklist": 2000, "probes": 5000, "calibration": 7000,
    "capacitive": 15000, "quokka": 40000, "zebrafish": 45000,
}  # fmt: skip
CJK = "我们决定使用数据库复制方案来保证服务可用性并记录每次会议的结论"
VOCABULARY_SIZE = 50_000


def _vocabulary() -> tuple[list[str], list[float]]:
    rng = random.Random(0)
    words: list[str] = []
    seen: set[str] = set()
    while len(words) < VOCABULARY_SIZE:
        w = "".join(rng.choice("bcdfghklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(1, 4)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    for word, rank in REAL_WORDS.items():
        words[rank] = word
    weights = [1.0 / (k + 1) for k in range(len(words))]
    cum = list(itertools.accumulate(weights))
    return words, cum


VOCAB, CUM = _vocabulary()


def _words(rng: random.Random, n: int) -> list[str]:
    return rng.choices(VOCAB, cum_weights=CUM, k=n)


def _paragraph(rng: random.Random) -> str:
    return " ".join(_words(rng, rng.randint(20, 60))) + "."


def generated_note(i: int) -> tuple[str, str]:
    rng = random.Random(i)
    folder = f"area-{i % 20:02d}/topic-{i % 97:02d}"
    kind = rng.choice(["incident", "decision", "meeting", "project", None])
    title = " ".join(_words(rng, 3)).title()
    tags = _words(rng, 2)
    lines = ["---", f"title: {title}", f"tags: [{tags[0]}, {tags[1]}]"]
    if kind:
        lines.append(f"type: {kind}")
    lines += ["---", f"# {title}", "", _paragraph(rng), ""]
    for _ in range(rng.randint(2, 5)):
        head = _words(rng, 2)
        lines += [f"## {head[0].title()} {head[1]}", "", _paragraph(rng), "", _paragraph(rng), ""]
        if rng.random() < 0.3:
            lines += [f"See [[Note {rng.randint(0, 1000)}]] and #{_words(rng, 1)[0]}.", ""]
    if rng.random() < 0.05:
        lines += ["## 记录", "", CJK[rng.randint(0, 10) :], ""]
    if rng.random() < 0.01:
        lines += ["## Sensors", "", "We chose capacitive probes after calibration.", ""]
    return f"{folder}/note-{i:06d}.md", "\n".join(lines)


def _write_range(job: tuple[str, int, int]) -> None:
    root, lo, hi = Path(job[0]), job[1], job[2]
    for i in range(lo, hi):
        rel, text = generated_note(i)
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def build_vault(root: Path, size: int) -> None:
    """Write the notes, in two processes (generation is deterministic per note number)."""
    step = 5000
    jobs = [(str(root), lo, min(lo + step, size)) for lo in range(0, size, step)]
    with multiprocessing.Pool(min(2, os.cpu_count() or 1)) as pool:
        pool.map(_write_range, jobs)


_HEAD = r"""
import json, os, resource, statistics, sys, time
from pathlib import Path
from shardpy import index
vault = Path(sys.argv[1])
queries = json.loads(sys.argv[2])
filtered = json.loads(sys.argv[3])
out = {}
def cpu():
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
def timed(key, fn):
    t, c = time.perf_counter(), cpu()
    result = fn()
    out[key] = time.perf_counter() - t
    out[key.replace("_s", "_cpu_s")] = cpu() - c
    return result
"""
_BUILD = r"""
r = timed("cold_s", lambda: index.refresh(vault))
out["notes"], out["chunks"] = r.total_notes, r.total_chunks
r2 = timed("nochange_s", lambda: index.refresh(vault))
assert r2.indexed == 0, r2
rel = "area-03/topic-03/note-000003.md"
target = vault / rel
times, cpus = [], []
for k in range(20):
    target.write_text(target.read_text() + f"\nedit {k} quokka\n")
    t, c = time.perf_counter(), time.process_time()
    r3 = index.refresh(vault, only=[rel])
    times.append(time.perf_counter() - t)
    cpus.append(time.process_time() - c)
    assert r3.indexed == 1, r3
out["one_note_ms"] = statistics.median(times) * 1000
out["one_note_cpu_ms"] = statistics.median(cpus) * 1000
"""
_QUERIES = r"""
lat, qcpu, per = [], [], {}
def query(q, **kw):
    t, c = time.perf_counter(), time.process_time()
    index.search(vault, q, max_age=float("inf"), **kw)
    lat.append(time.perf_counter() - t)
    qcpu.append(time.process_time() - c)
    per.setdefault(q + (" " + json.dumps(kw) if kw else ""), []).append(lat[-1])
for _ in range(3):
    for q in queries:
        query(q)
    for q, kw in filtered:
        query(q, **kw)
lat.sort()
out["query_p50_ms"] = statistics.median(lat) * 1000
out["query_p95_ms"] = lat[int(len(lat) * 0.95) - 1] * 1000
out["query_max_ms"] = lat[-1] * 1000
qcpu.sort()
out["query_cpu_p50_ms"] = statistics.median(qcpu) * 1000
out["query_cpu_p95_ms"] = qcpu[int(len(qcpu) * 0.95) - 1] * 1000
# The floor under exact BM25: the search's own ranked LIMIT (searcher._CANDIDATES, 64 sections) for
# the same expression, nothing else (no join, no snippet, no Python): a search cannot rank every
# match for less.
import sqlite3
from shardpy.index.query import translate
from shardpy.index.searcher import _CANDIDATES
conn = sqlite3.connect(str(index.index_path(vault)))
RANKED = _CANDIDATES.replace("LIMIT ?", "LIMIT 64")
floor, matches = [], {}
for _ in range(3):
    for q in queries + [f[0] for f in filtered]:
        expr = translate(q).expression
        t = time.perf_counter()
        conn.execute(RANKED, (expr,)).fetchall()
        floor.append(time.perf_counter() - t)
        matches[q] = conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expr,)).fetchone()[0]
floor.sort()
out["fts_p50_ms"] = statistics.median(floor) * 1000
out["fts_p95_ms"] = floor[int(len(floor) * 0.95) - 1] * 1000
slow = sorted(per.items(), key=lambda kv: -statistics.median(kv[1]))[:4]
out["slowest"] = [[k, round(statistics.median(v) * 1000, 1), matches.get(k.split(" {")[0])] for k, v in slow]
"""
# Search by meaning (issue 29): hybrid queries in process. The first one loads the model and reads
# the vectors (timed apart); the rest answer from the process's kept matrix.
HYBRID = [q for q in QUERIES if not any(c in q for c in '"*') and " NOT " not in q] + [
    "how do we roll back a bad deploy",
    "who is responsible for the vendor agreement",
    "steps after an outage",
]
_HYBRID = r"""
hyb = []
t = time.perf_counter()
first = index.search(vault, HYBRID[0], max_age=float("inf"), mode="hybrid")
out["hybrid_first_ms"] = (time.perf_counter() - t) * 1000
out["hybrid_mode"] = first.mode
hcpu = []
for _ in range(3):
    for q in HYBRID:
        t, c = time.perf_counter(), time.process_time()
        index.search(vault, q, max_age=float("inf"), mode="hybrid")
        hyb.append(time.perf_counter() - t)
        hcpu.append(time.process_time() - c)
hyb.sort()
hcpu.sort()
out["hybrid_cpu_p50_ms"] = statistics.median(hcpu) * 1000
out["hybrid_cpu_p95_ms"] = hcpu[int(len(hcpu) * 0.95) - 1] * 1000
out["hybrid_p50_ms"] = statistics.median(hyb) * 1000
out["hybrid_p95_ms"] = hyb[int(len(hyb) * 0.95) - 1] * 1000
import sqlite3
conn = sqlite3.connect(str(index.index_path(vault)))
out["vectors"] = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
"""
_TAIL = r"""
db = index.index_path(vault)
out["db_mb"] = sum(os.path.getsize(p) for p in (str(db), f"{db}-wal") if os.path.exists(p)) / 1e6
out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""
CHILD = _HEAD + f"HYBRID = {HYBRID!r}\n" + _BUILD + _QUERIES + _HYBRID + _TAIL + "print(json.dumps(out))\n"
# The same cold index and no-change refresh without vectors (SHARDPY_EMBED_MODEL=off), same run.
LEXICAL_CHILD = (
    _HEAD
    + r"""
timed("lexical_cold_s", lambda: index.refresh(vault, full=True))
timed("lexical_nochange_s", lambda: index.refresh(vault))
"""
    + "print(json.dumps(out))\n"
)
# --compare DIR: the same queries on the same index, answered by the shardpy found in DIR.
QUERY_CHILD = _HEAD + _QUERIES + "print(json.dumps(out))\n"


def _child(argv: list[str], **kw: Any) -> tuple[float, float]:
    """(wall, CPU) seconds of one child process: on a loaded shared machine wall time is mostly
    waiting, so the whole-process figures are compared in CPU too."""
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, **kw)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def _cli_one_note_ms(vault: Path, env: dict[str, str]) -> dict[str, float]:
    """The flagship's write hook (`shardpy index --only NOTE` after an edit), median of 5; and the
    search process right after it: the first one to see the changed vector, which reads the
    vector table again (docs/SEARCH.md, "The whole process")."""
    target = vault / "area-05/topic-05/note-000005.md"
    times, after = [], []
    for k in range(5):
        target.write_text(target.read_text() + f"\ncli edit {k}\n")
        t = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "shardpy", "index", "--only", str(target)],
            cwd=vault,
            env=env,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        times.append(time.perf_counter() - t)
        search = [sys.executable, "-m", "shardpy", "search", "budget review"]
        fresh = {**env, "SHARDPY_SEARCH_REFRESH_SECONDS": "1000000"}
        after.append(_child(search, cwd=vault, env=fresh, check=True, stdout=subprocess.DEVNULL)[1])
    return {
        "cli_one_note_ms": statistics.median(times) * 1000,
        "cli_search_after_write_cpu_ms": statistics.median(after) * 1000,
    }


def _cli_search_ms(vault: Path, env: dict[str, str]) -> dict[str, float]:
    """A whole `shardpy search WORDS` process (hybrid: start-up, model load, vectors read), median of
    5, wall and CPU; the same queries with ``--mode lexical`` (what the meaning adds to a process);
    and hybrid again with the index's last refresh an hour old, as a one-shot search after a pause
    finds it (it stats every indexed note first); hybrid once more as a user's session runs it
    (:func:`_user_env`: the cache found by platformdirs), taking turns; and ``grep -ril`` of each
    query's first word right after its search."""
    kinds: tuple[tuple[str, list[str]], ...] = (
        ("", []),
        ("_grep", []),
        ("_lexical", ["--mode", "lexical"]),
        ("_aged", []),
        ("_user", []),
    )
    runs: dict[str, list[tuple[float, float]]] = {key: [] for key, _ in kinds}
    fresh = {**env, "SHARDPY_SEARCH_REFRESH_SECONDS": "1000000"}
    envs = {"": fresh, "_grep": fresh, "_lexical": fresh, "_aged": env, "_user": _user_env(fresh)}
    for q in ("kubernetes", "how do we roll back a bad deploy", "vendor", "budget review", "gotcha"):
        for key, mode in kinds:
            if key == "_aged":
                _age_index(env)
            argv = [sys.executable, "-m", "shardpy", "search", *mode, q]
            if key == "_grep":  # right after the search: the pair sees the same moment of the machine
                argv = ["grep", "-ril", "--", q.split()[0], str(vault)]
            child = envs[key]
            check = key != "_grep"  # grep exits 1 when no file holds the word
            runs[key].append(_child(argv, cwd=vault, env=child, check=check, stdout=subprocess.DEVNULL))
    out = {}
    for key, got in runs.items():
        out[f"cli_search{key}_ms"] = statistics.median(r[0] for r in got) * 1000
        out[f"cli_search{key}_cpu_ms"] = statistics.median(r[1] for r in got) * 1000
    # The median of each query's search CPU over the grep run beside it: what a busy machine moves
    # least (the medians of the two batches, timed minutes apart, moved the ratio by a tenth).
    pairs = zip(runs[""], runs["_grep"], strict=True)
    out["cli_vs_grep_cpu_paired"] = statistics.median(s[1] / g[1] for s, g in pairs if g[1] > 0)
    return out


def _user_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` as a user's session has it: no SHARDPY_CACHE_DIR (the bench's isolation), so
    platformdirs finds the cache folder, as for every user (its import costs a search ~4 ms on
    Python 3.11); XDG_CACHE_HOME points at a folder whose ``shardpy`` is this run's cache."""
    cache = Path(env["SHARDPY_CACHE_DIR"])
    xdg = cache.parent / f"xdg-{cache.name}"  # one per cache: bench/search_imported.py runs several
    xdg.mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        (xdg / "shardpy").symlink_to(cache, target_is_directory=True)
    user = {k: v for k, v in env.items() if k != "SHARDPY_CACHE_DIR"}
    return {**user, "XDG_CACHE_HOME": str(xdg)}


def _age_index(env: dict[str, str]) -> None:
    """Every index in the run's cache folder as if last refreshed an hour ago."""
    for db in Path(env["SHARDPY_CACHE_DIR"]).glob("index/*.sqlite3"):
        conn = sqlite3.connect(db)
        try:
            conn.execute("UPDATE meta SET value = ? WHERE key = 'refreshed_at'", (repr(time.time() - 3600),))
            conn.commit()
        finally:
            conn.close()


def _floor_ms(env: dict[str, str]) -> dict[str, float]:
    """What any Python process pays before searching, same run: the interpreter without its site
    packages' start-up (-S), the interpreter, with sqlite3, and with numpy imported with the one
    BLAS thread shardpy.index asks for (what a search paid for its scan by meaning before SimSIMD
    did it), median of 5 each."""
    out = {}
    floors = (
        ("python_s_floor_ms", ["-S", "-c", "pass"], env),
        ("python_floor_ms", ["-c", "pass"], env),
        ("sqlite_floor_ms", ["-c", "import sqlite3"], env),
        ("numpy_one_thread_floor_ms", ["-c", "import numpy"], {**env, "OPENBLAS_NUM_THREADS": "1"}),
    )
    for key, args, child in floors:
        runs = [_child([sys.executable, *args], env=child, check=True) for _ in range(5)]
        out[key] = statistics.median(r[0] for r in runs) * 1000
        out[key.replace("_ms", "_cpu_ms")] = statistics.median(r[1] for r in runs) * 1000
    return out


def _model_mb() -> dict[str, float]:
    """What the bundled model costs on disk: the installed wordllama package and its weights file."""
    import importlib.util

    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        return {}
    root = Path(next(iter(spec.submodule_search_locations)))
    size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
    weights = sum(p.stat().st_size for p in (root / "weights").glob("*.safetensors"))
    return {"model_pkg_mb": size / 1e6, "model_weights_mb": weights / 1e6}


def _grep_ms(vault: Path, queries: list[str]) -> dict[str, float]:
    words = [q.strip('"*').split()[0] for q in queries]
    runs = [
        _child(["grep", "-ril", "--", word, str(vault)], stdout=subprocess.DEVNULL, check=False)
        for word in words
    ]
    times = sorted(r[0] for r in runs)
    return {
        "grep_p50_ms": statistics.median(times) * 1000,
        "grep_p95_ms": times[max(0, int(len(times) * 0.95) - 1)] * 1000,
        "grep_cpu_p50_ms": statistics.median(r[1] for r in runs) * 1000,
    }


COMPARE = ""  # --compare DIR: a checkout of the code before, its queries timed on the same index
EDITED = ("area-03/topic-03/note-000003.md", "area-05/topic-05/note-000005.md")  # the one-note edits


def _vault(work: Path, size: int) -> Path:
    """The generated vault; kept under $SEARCH_BENCH_KEEP (re-used by the next run) when set. A kept
    vault is used in place (copying 100,000 files costs more than the run): the notes the run
    edits are restored after it."""
    keep = os.environ.get("SEARCH_BENCH_KEEP")
    if keep:
        vault = Path(keep) / f"vault-{size}"
        if not (vault / ".complete").exists():
            shutil.rmtree(vault, ignore_errors=True)
            build_vault(vault, size)
            (vault / ".complete").touch()
        return vault
    vault = work / "vault"
    build_vault(vault, size)
    return vault


def run_size(size: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix=f"search-bench-{size}-"))
    vault, originals = work / "vault", dict[str, bytes]()
    try:
        t = time.perf_counter()
        vault = _vault(work, size)
        gen_s = time.perf_counter() - t
        originals = {rel: (vault / rel).read_bytes() for rel in EDITED}
        env = child_env(SHARDPY_CACHE_DIR=str(work / "cache"))
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(vault), json.dumps(QUERIES), json.dumps(FILTERED)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        out: dict[str, Any] = json.loads(child.stdout)
        if COMPARE:
            before = subprocess.run(
                [sys.executable, "-c", QUERY_CHILD, str(vault), json.dumps(QUERIES), json.dumps(FILTERED)],
                env={**env, "PYTHONPATH": COMPARE},
                cwd=work,  # not the checkout: python -c puts the working folder first on sys.path
                capture_output=True,
                text=True,
                check=True,
            )
            out.update({f"before_{k}": v for k, v in json.loads(before.stdout).items()})
        lexical = subprocess.run(
            [sys.executable, "-c", LEXICAL_CHILD, str(vault), "[]", "[]"],
            env={**env, "SHARDPY_CACHE_DIR": str(work / "cache-lexical"), "SHARDPY_EMBED_MODEL": "off"},
            capture_output=True,
            text=True,
            check=True,
        )
        out.update(json.loads(lexical.stdout))
        out["cold_ratio"] = out["cold_s"] / out["lexical_cold_s"]
        out.update(_cli_search_ms(vault, env))
        out.update(_cli_one_note_ms(vault, env))
        out.update(_grep_ms(vault, QUERIES[:6]))
        out["cli_vs_grep"] = out["cli_search_ms"] / out["grep_p50_ms"]
        out["cli_vs_grep_cpu"] = out["cli_search_cpu_ms"] / out["grep_cpu_p50_ms"]
        out["cli_user_vs_grep_cpu"] = out["cli_search_user_cpu_ms"] / out["grep_cpu_p50_ms"]
        out.update(_floor_ms(env))
        out["generate_s"] = gen_s
        out.update(_model_mb())
        return out
    finally:
        for rel, data in originals.items():
            (vault / rel).write_bytes(data)
        shutil.rmtree(work, ignore_errors=True)


ROWS = [
    ("cold index, wall (s)", "cold_s", "< 15 at 20k"),
    ("cold index, CPU all processes (s)", "cold_cpu_s", ""),
    ("no-change refresh, wall (s)", "nochange_s", "< 0.5 at 20k"),
    ("no-change refresh, CPU (s)", "nochange_cpu_s", ""),
    ("one-note refresh, API, wall (ms)", "one_note_ms", "< 50"),
    ("one-note refresh, API, CPU (ms)", "one_note_cpu_ms", ""),
    ("one-note refresh, CLI process (ms)", "cli_one_note_ms", "hook"),
    ("search right after it, CPU (ms)", "cli_search_after_write_cpu_ms", "reads the vectors again"),
    ("query p50 (ms)", "query_p50_ms", ""),
    ("query p95 (ms)", "query_p95_ms", "< 30 at 100k"),
    ("query CPU p50 (ms)", "query_cpu_p50_ms", ""),
    ("query CPU p95 (ms)", "query_cpu_p95_ms", ""),
    ("query max (ms)", "query_max_ms", ""),
    ("before: query p50 (ms)", "before_query_p50_ms", "--compare"),
    ("before: query p95 (ms)", "before_query_p95_ms", "--compare"),
    ("before: query CPU p50 (ms)", "before_query_cpu_p50_ms", "--compare"),
    ("before: query CPU p95 (ms)", "before_query_cpu_p95_ms", "--compare"),
    ("FTS5 ranked LIMIT alone p50 (ms)", "fts_p50_ms", "floor"),
    ("FTS5 ranked LIMIT alone p95 (ms)", "fts_p95_ms", "floor"),
    ("grep -ril p50 (ms, no index)", "grep_p50_ms", "reference"),
    ("grep -ril p95 (ms, no index)", "grep_p95_ms", "reference"),
    ("lexical-only cold index, wall (s)", "lexical_cold_s", "same run"),
    ("lexical-only cold index, CPU (s)", "lexical_cold_cpu_s", ""),
    ("cold with vectors / lexical-only", "cold_ratio", "<= 3"),
    ("vectors (sections embedded)", "vectors", ""),
    ("hybrid first query, model load (ms)", "hybrid_first_ms", ""),
    ("hybrid query p50 (ms)", "hybrid_p50_ms", ""),
    ("hybrid query p95 (ms)", "hybrid_p95_ms", "<= 80 at 20k"),
    ("hybrid query CPU p50 (ms)", "hybrid_cpu_p50_ms", ""),
    ("hybrid query CPU p95 (ms)", "hybrid_cpu_p95_ms", ""),
    ("shardpy search process, hybrid (ms)", "cli_search_ms", "<= 0.5x grep"),
    ("shardpy search process / grep -ril p50", "cli_vs_grep", "<= 0.5"),
    ("shardpy search process, CPU (ms)", "cli_search_cpu_ms", ""),
    ("grep -ril CPU p50 (ms)", "grep_cpu_p50_ms", "reference"),
    ("shardpy search / grep -ril, CPU", "cli_vs_grep_cpu", "<= 0.5"),
    ("the same, each query beside its grep (median)", "cli_vs_grep_cpu_paired", "<= 0.5"),
    ("the same as a user runs it, CPU (ms)", "cli_search_user_cpu_ms", "platformdirs"),
    ("  that / grep -ril, CPU", "cli_user_vs_grep_cpu", "<= 0.5"),
    ("shardpy search --mode lexical process (ms)", "cli_search_lexical_ms", "same run"),
    ("shardpy search --mode lexical, CPU (ms)", "cli_search_lexical_cpu_ms", ""),
    ("shardpy search, index an hour old, CPU (ms)", "cli_search_aged_cpu_ms", "stats every note"),
    ("python -S -c pass (ms, same run)", "python_s_floor_ms", "floor"),
    ("python -S -c pass, CPU (ms)", "python_s_floor_cpu_ms", "floor"),
    ("python -c pass (ms, same run)", "python_floor_ms", "floor"),
    ("python -c pass, CPU (ms)", "python_floor_cpu_ms", "floor"),
    ("python -c 'import sqlite3' (ms, same run)", "sqlite_floor_ms", "floor"),
    ("python -c 'import sqlite3', CPU (ms)", "sqlite_floor_cpu_ms", "floor"),
    ("import numpy, 1 BLAS thread, CPU (ms)", "numpy_one_thread_floor_cpu_ms", "no longer paid"),
    ("model package / weights (MB)", "model_pkg_mb", "wordllama"),
    ("model weights file (MB)", "model_weights_mb", ""),
    ("DB size (MB)", "db_mb", ""),
    ("peak RSS (MB)", "peak_rss_mb", ""),
    ("chunks", "chunks", ""),
]


def main() -> None:
    global COMPARE
    args = sys.argv[1:]
    if "--compare" in args:
        at = args.index("--compare")
        COMPARE = str(Path(args[at + 1]).resolve())
        del args[at : at + 2]
    sizes = [int(a) for a in args] or [20_000, 100_000]
    print(f"reference loop: {reference_loop_ms():.0f} ms (10M-step Python loop; ~450 ms on a quiet core)")
    print(f"load average: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"python {sys.version.split()[0]}; basic-memory beside it: bench/search_basic_memory.py")
    results = {}
    for size in sizes:
        results[size] = run_size(size)
        # On stderr at once: kept if a later, larger size dies.
        print(json.dumps({str(size): results[size]}), file=sys.stderr, flush=True)
    head = f"{'':38}" + "".join(f"{size:>12,}" for size in sizes) + "   target"
    print(head)
    for label, key, target in ROWS:
        if not any(key in results[s] for s in sizes):
            continue
        cells = "".join(f"{results[s].get(key, float('nan')):>12.2f}" for s in sizes)
        print(f"{label:38}{cells}   {target}")
    for size in sizes:
        print(f"slowest queries at {size:,} (median ms, sections matched):")
        for q, ms, n in results[size]["slowest"]:
            print(f"  {ms:8.1f}  {n if n is not None else '':>8}  {q}")
    print(json.dumps({str(k): v for k, v in results.items()}))


if __name__ == "__main__":
    os.environ.pop("SHARDPY_CACHE_DIR", None)
    main()
