"""Ranked, section-level answers from the index.

BM25 over six weighted columns (store.WEIGHTS); the best section of each note
is one hit (a note never fills the page with its own sections). Plain words
are ANDed; when that finds nothing the words are ORed and the result says
``match: "any"``.
"""

from __future__ import annotations

import math
import re
import sqlite3
import time
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.index import store
from shardpy.index.build import refresh, resolve_vault
from shardpy.index.config import IndexConfig
from shardpy.index.model import Match, SearchHit, SearchResult
from shardpy.index.query import MAX_QUERY_CHARS, Translated, translate

MARK_OPEN, MARK_CLOSE, ELLIPSIS = "«", "»", "…"
SNIPPET_TOKENS = 24
MAX_TOP = 1000

# The best sections first: FTS5's own ranking (the table's rank is bm25 with store.WEIGHTS) with a
# LIMIT, so only the candidates are joined to their notes. The best section of each note is the hit.
_CANDIDATES = "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT ?"
_CANDIDATE_INFO = (
    "SELECT c.id, f.id, f.path, f.title, c.heading, c.line, f.type FROM chunks AS c "
    "JOIN files AS f ON f.id = c.file_id WHERE c.id IN ({marks})"
)
MAX_CANDIDATES = 20_000  # beyond this a filter is so narrow that ranking every match is cheaper
_RANKED = f"""
SELECT cid, fid, path, title, heading, line, type FROM (
    SELECT c.id AS cid, f.id AS fid, f.path AS path, f.title AS title, c.heading AS heading,
           c.line AS line, f.type AS type, m.score AS score,
           row_number() OVER (PARTITION BY c.file_id ORDER BY m.score, c.id) AS rn
    FROM (SELECT rowid AS rid, bm25(fts, {", ".join(map(str, store.WEIGHTS))}) AS score
          FROM fts WHERE fts MATCH :q) AS m
    JOIN chunks AS c ON c.id = m.rid
    JOIN files AS f ON f.id = c.file_id
    WHERE (:type IS NULL OR f.type = :type)
      AND (:path IS NULL OR f.path = :path OR substr(f.path, 1, length(:dir)) = :dir)
)
WHERE rn = 1
ORDER BY score, cid
LIMIT :limit OFFSET :offset
"""
_SNIPPET = (
    f"SELECT rank, snippet(fts, 4, '{MARK_OPEN}', '{MARK_CLOSE}', '{ELLIPSIS}', {SNIPPET_TOKENS}), body "
    "FROM fts WHERE fts MATCH ? AND rowid = ?"
)


def _check(query: str, top: int, offset: int) -> str:
    text = query.strip()
    if not text:
        raise ShardpyError(
            "SEARCH_EMPTY_QUERY", "The search query is empty", "Give one or more words to look for."
        )
    if len(text) > MAX_QUERY_CHARS:
        raise ShardpyError(
            "SEARCH_QUERY_TOO_LONG",
            f"The search query is {len(text):,} characters long (at most {MAX_QUERY_CHARS:,})",
            "Search for the few words that matter; this is a keyword index, not a document comparison.",
        )
    if not 1 <= top <= MAX_TOP or offset < 0:
        raise ShardpyError(
            "SEARCH_BAD_LIMIT",
            f"top must be 1..{MAX_TOP} and offset at least 0 (got top={top}, offset={offset})",
            "Pass --top N with a positive N.",
        )
    return text


def _path_filter(path: str | None) -> tuple[str | None, str | None]:
    """(exact path, folder prefix): whole segments, so work/active never matches work/active-secrets."""
    if path is None:
        return None, None
    clean = path.replace("\\", "/").strip()
    while clean.startswith("./"):
        clean = clean[2:]
    clean = clean.strip("/")
    if not clean or clean == ".":
        return None, None
    return clean, clean + "/"


def _refresh_if_stale(root: Path, db: Path, max_age: float | None, notices: list[str]) -> None:
    conn = store.open_for_read(db, str(root))
    age = math.inf
    if conn is not None:
        try:
            stamp = store.get_meta(conn, "refreshed_at")
        finally:
            conn.close()
        age = time.time() - float(stamp) if stamp else math.inf
        if max_age is None:
            max_age = IndexConfig.for_vault(root).refresh_seconds
        if age <= max_age:
            return
    built = conn is not None
    try:
        # An index exists: never wait for another writer (its refresh will do). None yet: wait for it.
        report = refresh(root, lock_wait=0.0 if built else store.LOCK_WAIT_SECONDS)
    except ShardpyError as exc:
        if exc.code != "INDEX_LOCKED" or not built:
            raise
        notices.append("index is being refreshed by another process; results may be slightly stale")
        return
    notices.extend(report.notices)
    if report.degraded:
        notices.append(f"{len(report.degraded)} notes could not be fully parsed (indexed as plain text)")
    if report.skipped:
        notices.append(f"{len(report.skipped)} files skipped (run `shardpy index` for the list)")


def _fallback_snippet(body: str, tr: Translated, query: str) -> str:
    """A snippet when the match was outside the body column (title, heading, cjk)."""
    for needle in (*tr.cjk_runs, *re.findall(r"\w{3,}", query)):
        at = body.casefold().find(needle.casefold())
        if at >= 0:
            start, end = max(0, at - 60), min(len(body), at + len(needle) + 60)
            found = body[at : at + len(needle)]
            text = body[start:at] + MARK_OPEN + found + MARK_CLOSE + body[at + len(needle) : end]
            return (
                (ELLIPSIS if start else "") + " ".join(text.split()) + (ELLIPSIS if end < len(body) else "")
            )
    words = body.split()
    return " ".join(words[:SNIPPET_TOKENS]) + (ELLIPSIS if len(words) > SNIPPET_TOKENS else "")


def _score_and_snippet(
    conn: sqlite3.Connection, expr: str, cid: int, tr: Translated, query: str
) -> tuple[float, str]:
    row = conn.execute(_SNIPPET, (expr, cid)).fetchone()
    if row is None:
        return 0.0, ""
    snippet, body = str(row[1] or ""), str(row[2] or "")
    if MARK_OPEN not in snippet:
        snippet = _fallback_snippet(body, tr, query)
    return -float(row[0]), " ".join(snippet.split())


Row = tuple[int, int, str, str, str, int, str | None]  # chunk id, file id, path, title, heading, line, type


def _keep(row: Row, params: dict[str, object]) -> bool:
    kind, exact, folder = params["type"], params["path"], params["dir"]
    if kind is not None and row[6] != kind:
        return False
    return exact is None or row[2] == exact or row[2].startswith(str(folder))


def _best_sections(conn: sqlite3.Connection, expr: str, params: dict[str, object]) -> list[Row]:
    """The best section of each note, best first, page ``offset``/``limit``."""
    need = int(str(params["offset"])) + int(str(params["limit"]))
    filtered = params["type"] is not None or params["path"] is not None
    limit = max(64, need * (16 if filtered else 3))
    while limit <= MAX_CANDIDATES:
        ids = [r[0] for r in conn.execute(_CANDIDATES, (expr, limit))]
        info: dict[int, Row] = {}
        for lo in range(0, len(ids), 900):
            part = ids[lo : lo + 900]
            sql = _CANDIDATE_INFO.format(marks=",".join("?" * len(part)))
            info.update((r[0], r) for r in conn.execute(sql, part))
        rows: list[Row] = []
        seen: set[int] = set()
        for cid in ids:
            row = info.get(cid)
            if row is None or row[1] in seen or not _keep(row, params):
                continue
            seen.add(row[1])
            rows.append(row)
        if len(rows) >= need or len(ids) < limit:
            return rows[need - int(str(params["limit"])) : need]
        limit *= 4
    return conn.execute(_RANKED, {"q": expr, **params}).fetchall()


def _run(
    conn: sqlite3.Connection, expr: str, params: dict[str, object], tr: Translated, query: str
) -> list[SearchHit]:
    hits = []
    for cid, _fid, path, title, heading, line, kind in _best_sections(conn, expr, params):
        score, snippet = _score_and_snippet(conn, expr, cid, tr, query)
        hits.append(
            SearchHit(
                path=path,
                title=title,
                heading=tuple(heading.split("\x1f")) if heading else (),
                snippet=snippet,
                score=score,
                type=kind,
                line=int(line),
            )
        )
    return hits


def _query(
    conn: sqlite3.Connection, tr: Translated, params: dict[str, object], query: str, notices: list[str]
) -> tuple[Match, list[SearchHit]]:
    expr = tr.expression
    if not expr:
        notices.append("the query holds no searchable words")
        return "all", []
    try:
        hits = _run(conn, expr, params, tr, query)
    except sqlite3.OperationalError as exc:
        if not tr.advanced or tr.plain is None:
            raise
        notices.append(f"query syntax not understood ({exc}); searched the words instead")
        tr = translate(query, words_only=True)
        return _query(conn, tr, params, query, notices)
    if hits or tr.fallback is None:
        return "all", hits
    return "any", _run(conn, tr.fallback, params, tr, query)


def search(
    vault: Path,
    query: str,
    *,
    top: int = 10,
    offset: int = 0,
    type: str | None = None,
    path: str | None = None,
    max_age: float | None = None,
) -> SearchResult:
    text = _check(query, top, offset)
    root = resolve_vault(vault)
    db = store.index_path(root)
    notices: list[str] = []
    _refresh_if_stale(root, db, max_age, notices)
    conn = store.open_for_read(db, str(root))
    if conn is None:  # removed or replaced between the refresh and now
        notices.append("the index vanished while searching; run `shardpy index`")
        return SearchResult(query, "all", [], notices)
    exact, folder = _path_filter(path)
    params: dict[str, object] = {"type": type, "path": exact, "dir": folder, "limit": top, "offset": offset}
    try:
        match, hits = _query(conn, translate(text), params, text, notices)
    finally:
        conn.close()
    return SearchResult(query, match, hits, notices)
