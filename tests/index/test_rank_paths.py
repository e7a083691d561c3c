"""The fast paths rank exactly as scoring every match would.

The searcher answers from FTS5's ranked LIMIT (unfiltered), from one SQL pass
with the filter in the join (type/path), and falls back to that pass when the
candidates do not fill the page. Each must give the page an exhaustive ranking
gives: every matching section scored with bm25, the best section of each note,
ordered by (score, section id). The oracle below is that, written directly.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardpy import index
from shardpy.index import searcher, store
from shardpy.index.query import translate
from tests.index.conftest import manifest, write

WORDS = ["alpha", "beta", "gamma", "delta", "probe", "cache", "budget", "review", "plan", "kiwi"]
TYPES = ["incident", "project", None]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """60 notes of 1-6 sections over a 10-word vocabulary, skewed so some words are everywhere."""
    root = tmp_path_factory.mktemp("rank") / "vault"
    rng = random.Random(15)
    weights = [1 / (k + 1) for k in range(len(WORDS))]
    for i in range(60):
        kind = TYPES[i % 3]
        head = f"---\ntype: {kind}\n---\n" if kind else ""
        title = " ".join(rng.choices(WORDS, weights, k=2))
        sections = [
            f"## {' '.join(rng.choices(WORDS, weights, k=rng.randint(1, 3)))}\n\n"
            + " ".join(rng.choices(WORDS + ["filler"] * 6, k=rng.randint(3, 40)))
            for _ in range(rng.randint(1, 6))
        ]
        text = f"{head}# {title}\n\n" + "\n\n".join(sections) + "\n"
        write(root, f"area-{i % 4}/sub-{i % 3}/n{i}.md", text)
    manifest(root, {})
    return root


def oracle(vault: Path, query: str, top: int, offset: int, kind: str | None, path: str | None) -> list:
    """(path, score, line) of the page, from every match scored: no LIMIT, no candidates."""
    conn = sqlite3.connect(store.index_path(vault))
    try:
        tr = translate(query)
        weights = ", ".join(map(str, store.WEIGHTS))
        chunks = {r[0]: r[1:] for r in conn.execute("SELECT id, file_id, line FROM chunks")}
        files = {r[0]: r[1:] for r in conn.execute("SELECT id, path, type FROM files")}
        for expr in (tr.expression, tr.fallback):
            if expr is None:
                break
            scored = conn.execute(f"SELECT rowid, bm25(fts, {weights}) FROM fts WHERE fts MATCH ?", (expr,))
            best: dict[int, tuple[float, int]] = {}
            for cid, score in scored:
                fid = chunks[cid][0]
                fpath, ftype = files[fid]
                if kind is not None and ftype != kind:
                    continue
                if path is not None and not (fpath == path or fpath.startswith(path + "/")):
                    continue
                best[fid] = min(best.get(fid, (score, cid)), (score, cid))
            if best:
                order = sorted(best.values())[offset : offset + top]
                return [(files[chunks[c][0]][0], -s, chunks[c][1]) for s, c in order]
        return []
    finally:
        conn.close()


queries = st.lists(st.sampled_from([*WORDS, "zzz"]), min_size=1, max_size=3).map(" ".join)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    query=queries,
    top=st.integers(1, 12),
    offset=st.integers(0, 8),
    kind=st.sampled_from([None, "incident", "project"]),
    path=st.sampled_from([None, "area-1", "area-2/sub-2", "area-1/sub-1/n1.md", "area-9"]),
    few=st.booleans(),
)
def test_every_path_ranks_as_scoring_every_match(
    vault: Path,
    monkeypatch: pytest.MonkeyPatch,
    query: str,
    top: int,
    offset: int,
    kind: str | None,
    path: str | None,
    few: bool,
) -> None:
    # few: a candidate LIMIT so small that deduplication leaves the page short and the exact pass answers.
    monkeypatch.setattr(searcher, "MIN_CANDIDATES", 1 if few else 64)
    monkeypatch.setattr(searcher, "CANDIDATE_FACTOR", 1 if few else 3)
    result = index.search(vault, query, top=top, offset=offset, type=kind, path=path, max_age=float("inf"))
    got = [(h.path, h.score, h.line) for h in result.hits]
    assert got == oracle(vault, query, top, offset, kind, path)
    assert all(h.snippet for h in result.hits)


def test_paging_past_an_and_result_does_not_switch_to_or(tmp_path: Path) -> None:
    root = tmp_path / "v"
    write(root, "both.md", "# Both\n\n## S\n\nalpha beta\n")
    write(root, "one.md", "# One\n\n## S\n\nalpha only\n")
    first = index.search(root, "alpha beta", top=1)
    assert (first.match, [h.path for h in first.hits]) == ("all", ["both.md"])
    second = index.search(root, "alpha beta", top=1, offset=1, max_age=float("inf"))
    assert (second.match, second.hits) == ("all", [])
    fallback = index.search(root, "alpha gamma", top=1, offset=1, max_age=float("inf"))
    assert fallback.match == "any" and [h.path for h in fallback.hits] == ["one.md"]
