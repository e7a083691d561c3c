"""Ranked, section-level answers from the index.

BM25 over six weighted columns (store.WEIGHTS); the best section of each note
is one hit (a note never fills the page with its own sections). Plain words
are ANDed; when that finds nothing the words are ORed and the result says
``match: "any"``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import sqlite3
import time
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.index import store
from shardpy.index.config import IndexConfig
from shardpy.index.model import SearchHit, SearchResult
from shardpy.index.query import MAX_QUERY_CHARS, Translated, any_of, translate
from shardpy.record import replace

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Literal

    from shardpy.index.model import Match

    Words = Literal["always", "weighed", "never"]  # when ranked() ranks by words (its docstring)

MARK_OPEN, MARK_CLOSE, ELLIPSIS = "«", "»", "…"
SNIPPET_TOKENS = 24
MAX_TOP = 1000

# Unfiltered: a ranked LIMIT (the table's rank is bm25 with store.WEIGHTS), so only the candidates are
# joined to their notes; the best section of each note is the hit. Ordered by (rank, rowid), as the
# exact pass: SQLite's sorter then keeps only the LIMIT best, where ``ORDER BY rank`` alone is FTS5's
# sorted path, which sorts every match (a word in 70,689 of 105,376 sections: 70 ms, not 45) and
# leaves ties at the limit in no stated order (tests/index/test_rank_paths.py).
_CANDIDATES = "SELECT rowid, rank FROM fts WHERE fts MATCH ? ORDER BY rank, rowid LIMIT ?"
_CANDIDATE_INFO = (
    "SELECT c.id, f.id, f.path, f.title, c.heading, c.line, f.type FROM chunks AS c "
    "JOIN files AS f ON f.id = c.file_id WHERE c.id IN ({marks})"
)
# Filtered, or candidates that did not fill the page: one exact pass. The filter sits in the join, so
# bm25 (the rank column, computed only when read) is scored for the sections that pass it, not all.
_RANKED = """
SELECT cid, fid, path, title, heading, line, type, score FROM (
    SELECT c.id AS cid, f.id AS fid, f.path AS path, f.title AS title, c.heading AS heading,
           c.line AS line, f.type AS type, fts.rank AS score,
           row_number() OVER (PARTITION BY f.id ORDER BY fts.rank, c.id) AS rn
    FROM fts JOIN chunks AS c ON c.id = fts.rowid JOIN files AS f ON f.id = c.file_id
    WHERE fts MATCH :q AND fts.rowid BETWEEN :lo AND :hi
      AND (:type IS NULL OR f.type = :type)
      AND (:path IS NULL OR f.path = :path OR substr(f.path, 1, length(:dir)) = :dir)
)
WHERE rn = 1
ORDER BY score, cid
LIMIT :limit OFFSET :offset
"""
# The sections of the notes under a --path: a folder's notes are indexed one after the other, so their
# section ids mostly form one run, and FTS5 reads only that stretch of each doclist. The join still
# applies the filter exactly: the range only spares it the sections that cannot pass.
_PATH_RANGE = (
    "SELECT min(c.id), max(c.id) FROM files AS f JOIN chunks AS c ON c.file_id = f.id "
    "WHERE (f.path >= :dir AND f.path < :end) OR f.path = :path"
)
ALL_ROWS = (-(2**63), 2**63 - 1)
CANDIDATE_FACTOR = 3  # candidates per hit wanted: a note's other sections crowd some out
MIN_CANDIDATES = 64
# Snippets for the page only, without rank (bm25 would re-count every term's documents per call).
_SNIPPETS = (
    f"SELECT rowid, snippet(fts, 4, '{MARK_OPEN}', '{MARK_CLOSE}', '{ELLIPSIS}', {SNIPPET_TOKENS}), body "
    "FROM fts WHERE fts MATCH ? AND rowid IN ({marks})"
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


def _stale(conn: sqlite3.Connection, root: Path, max_age: float | None, db: Path) -> bool:
    stamp = store.get_meta(conn, "refreshed_at")
    age = time.time() - float(stamp) if stamp else math.inf
    cfg = None
    if max_age is None:
        cfg = IndexConfig.for_vault(root)
        max_age = cfg.refresh_seconds
    listed = store.get_meta(conn, "folders")
    folders: list[str] | None = json.loads(listed) if listed is not None else None
    if max_age != math.inf and _tree_changed(conn, root, folders):
        return True
    if age <= max_age:
        return False
    started = time.time()
    if not _notes_unchanged(conn, root, cfg or IndexConfig.for_vault(root), folders):
        return True
    # A stamp that cannot be written (a read-only cache) costs the next search this probe again.
    try:
        with store.writer_lock(db, wait=0.0) as got:
            if got:  # else another process is refreshing: its stamp will do
                with contextlib.suppress(sqlite3.Error):
                    store.set_meta(conn, "refreshed_at", repr(started))
    except ShardpyError as exc:
        if exc.code not in UNREFRESHABLE:
            raise
    return False


def _notes_unchanged(
    conn: sqlite3.Connection, root: Path, cfg: IndexConfig, folders: list[str] | None
) -> bool:
    """What a refresh's walk would find, for a stat per indexed note: the admission rules it walked
    with, a complete folder list (none changed: the caller checked), and every note with the size
    and time it was indexed with (an edit in place); ``folders``: the last walk's (meta). The first
    search after ``refresh_seconds`` paid a whole refresh that changed nothing: 0.5 s at 20,000
    notes, five times the search (issue 29; tests/index/test_stat_probe.py)."""
    if store.get_meta(conn, "rules") != cfg.rules_fingerprint():
        return False
    if folders is None or len(folders) >= store.MAX_WATCHED_FOLDERS:
        return False  # a folder past the list could have gained a note
    base, lstat = os.fspath(root), os.lstat
    for rel, mtime_ns, size in conn.execute("SELECT path, mtime_ns, size FROM files"):
        try:
            st = lstat(f"{base}/{rel}")
        except OSError:
            return False
        if st.st_mtime_ns != mtime_ns or st.st_size != size:
            return False
    return True


# A folder's time comes from the file system's clock, which is coarser than time.time() and can stand
# just before it (a jiffy on Linux, 2 s on FAT): a note added right after a walk began gave its folder
# a time before ``walked_at``, and with no walk at the interval any more (the stat probe) it was never
# seen (tests/index/test_refresh.py::test_search_refreshes_a_stale_index, one run in a suite). A folder
# changed this close before the walk counts as changed: at worst one walk more.
MTIME_SLACK = 2.0


def _tree_changed(conn: sqlite3.Connection, root: Path, folders: list[str] | None) -> bool:
    """A note was added, removed or renamed since the last walk: a folder the walk saw changed
    (a stat per folder, ~1 ms for 200; the note files are not read). A note edited in place is
    caught when it is a hit (:func:`_hits_changed`), else at ``refresh_seconds``
    (issue 26 item 8, tests/hardening/test_search_fresh.py). ``folders``: the last walk's (meta)."""
    walked = store.get_meta(conn, "walked_at")
    if walked is None or folders is None:
        return False  # an index from before the check: the age rule alone
    since = float(walked) - MTIME_SLACK
    base = os.fspath(root)
    for rel in folders:
        try:
            if os.stat(f"{base}/{rel}" if rel else base).st_mtime >= since:
                return True
        except OSError:
            return True  # the folder went away
    return False


def _hits_changed(conn: sqlite3.Connection, root: Path, hits: list[SearchHit]) -> bool:
    """A hit's note changed on disk since it was indexed (edited in place, or deleted)."""
    for hit in hits:
        row = conn.execute("SELECT mtime_ns, size FROM files WHERE path = ?", (hit.path,)).fetchone()
        try:
            st = os.stat(root / hit.path)
        except OSError:
            return True
        if row is None or (st.st_mtime_ns, st.st_size) != (row[0], row[1]):
            return True
    return False


def refreshed_for(vault: Path, hits: list[SearchHit], max_age: float | None) -> tuple[bool, list[str]]:
    """Refreshes the index when a note of ``hits`` (a page found by meaning) changed on disk since
    it was indexed (an edit in place, which no folder's time shows): whether it was refreshed (the
    page is to be made again) and what the refresh said. Never with ``max_age`` inf. :func:`ranked`
    checks its own hits so; a page whose words were not ranked has none of its own, and an edited
    note was shown with its old text (helper-found, tests/index/test_unweighed.py)."""
    notices: list[str] = []
    if max_age == math.inf or not hits:
        return False, notices
    root = store.resolve_vault(vault)
    with store.reader(store.index_path(root), str(root)) as conn:
        if conn is None or not _hits_changed(conn, root, hits):
            return False, notices
    return _refresh(root, True, notices), notices


# A refresh that could not write: an index that exists still answers (tests/index/test_full_disk.py).
UNREFRESHABLE = ("DISK_FULL", "INDEX_UNWRITABLE")


def _refresh(root: Path, built: bool, notices: list[str]) -> bool:
    """Refreshes the index; False when it could not be, and the index as it is answers (said)."""
    from shardpy.index.build import refresh  # issue 29: the walker and parser load only to refresh

    try:
        # An index exists: never wait for another writer (its refresh will do). None yet: wait for it.
        report = refresh(root, lock_wait=0.0 if built else store.LOCK_WAIT_SECONDS)
    except ShardpyError as exc:
        if not built or exc.code not in ("INDEX_LOCKED", *UNREFRESHABLE):
            raise
        if exc.code == "INDEX_LOCKED":
            notices.append("index is being refreshed by another process; results may be slightly stale")
        else:  # the answer from the index as it is: a full cache disk must not stop a search
            notices.append(f"the index could not be refreshed ({exc.message}); results may be stale")
        return False
    notices.extend(report.notices)
    if report.degraded:
        notices.append(f"{len(report.degraded)} notes could not be fully parsed (indexed as plain text)")
    if report.skipped:
        notices.append(f"{len(report.skipped)} files skipped (run `shardpy index` for the list)")
    return True


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


def _snippets(
    conn: sqlite3.Connection, expr: str, ids: list[int], tr: Translated, query: str
) -> dict[int, str]:
    """The snippet of each section in ``ids`` (one statement for the page)."""
    if not ids:
        return {}
    sql = _SNIPPETS.format(marks=",".join("?" * len(ids)))
    out: dict[int, str] = {}
    for cid, snippet, body in conn.execute(sql, (expr, *ids)):
        text = str(snippet or "")
        if MARK_OPEN not in text:
            text = _fallback_snippet(str(body or ""), tr, query)
        out[int(cid)] = " ".join(text.split())
    return out


# chunk id, file id, path, title, heading, line, type, rank (bm25: lower is better)
Row = tuple[int, int, str, str, str, int, str | None, float]


def _candidates(conn: sqlite3.Connection, expr: str, limit: int) -> list[Row]:
    """The ``limit`` best sections, ties in id order, joined to their notes, best first."""
    ranked = conn.execute(_CANDIDATES, (expr, limit)).fetchall()
    info: dict[int, tuple[int, int, str, str, str, int, str | None]] = {}
    for lo in range(0, len(ranked), 900):
        part = [r[0] for r in ranked[lo : lo + 900]]
        sql = _CANDIDATE_INFO.format(marks=",".join("?" * len(part)))
        info.update((r[0], r) for r in conn.execute(sql, part))
    return [(*info[cid], float(rank)) for cid, rank in ranked if cid in info]


def _best_sections(conn: sqlite3.Connection, expr: str, params: dict[str, object]) -> list[Row]:
    """The best section of each note, best first, page ``offset``/``limit``."""
    offset, limit = int(str(params["offset"])), int(str(params["limit"]))
    if params["type"] is None and params["path"] is None:
        want = max(MIN_CANDIDATES, (offset + limit) * CANDIDATE_FACTOR)
        rows = _candidates(conn, expr, want)
        best: list[Row] = []
        seen: set[int] = set()
        for row in rows:
            if row[1] not in seen:
                seen.add(row[1])
                best.append(row)
        if len(best) >= offset + limit or len(rows) < want:  # filled, or every match was a candidate
            return best[offset : offset + limit]
    lo, hi = _section_range(conn, params)
    if lo is None:
        return []  # no note under that path
    bound = {"q": expr, **params, "lo": lo, "hi": hi}
    return [(*r[:7], float(r[7])) for r in conn.execute(_RANKED, bound)]


def _section_range(conn: sqlite3.Connection, params: dict[str, object]) -> tuple[int | None, int | None]:
    """The lowest and highest section id of the notes the path filter keeps (every id without one)."""
    if params["path"] is None:
        return ALL_ROWS
    folder = str(params["dir"])
    end = folder[:-1] + chr(ord("/") + 1)  # every path starting with "dir/" sorts below "dir0"
    row = conn.execute(_PATH_RANGE, {"dir": folder, "end": end, "path": params["path"]}).fetchone()
    return (None, None) if row is None or row[0] is None else (int(row[0]), int(row[1]))


# How an answer was found: the MATCH expression that gave it ("" when none ran), the query as
# translated and as checked, for :func:`fill_snippets` to mark the same words later.
Answered = tuple[str, Translated, str]


def _run(
    conn: sqlite3.Connection,
    expr: str,
    params: dict[str, object],
    tr: Translated,
    query: str,
    snippets: bool,
) -> list[SearchHit]:
    rows = _best_sections(conn, expr, params)
    made = _snippets(conn, expr, [r[0] for r in rows], tr, query) if snippets else {}
    return [
        SearchHit(
            path=path,
            title=title,
            heading=tuple(heading.split("\x1f")) if heading else (),
            snippet=made.get(cid, ""),
            score=-rank,
            type=kind,
            line=int(line),
        )
        for cid, _fid, path, title, heading, line, kind, rank in rows
    ]


def _query(
    conn: sqlite3.Connection,
    tr: Translated,
    params: dict[str, object],
    query: str,
    notices: list[str],
    snippets: bool,
) -> tuple[Match, list[SearchHit], Answered]:
    expr = tr.expression
    if not expr:
        notices.append("the query holds no searchable words")
        return "all", [], ("", tr, query)
    try:
        hits = _run(conn, expr, params, tr, query, snippets)
    except sqlite3.OperationalError as exc:
        if not tr.advanced:
            raise _query_failed(query, exc) from None
        if tr.plain is None:
            # '"', '*', 500 '(' : FTS5 syntax holding no word to fall back to (issue 24 item 12,
            # tests/security/test_search_inputs.py).
            notices.append(f"query syntax not understood ({exc}) and it holds no searchable words")
            return "all", [], ("", tr, query)
        notices.append(f"query syntax not understood ({exc}); searched the words instead")
        tr = translate(query, words_only=True)
        return _query(conn, tr, params, query, notices, snippets)
    if not hits and tr.narrow:
        notices.append(
            "a word of a script written without spaces (Chinese, Japanese, Thai...) beside another word, "
            "in NEAR(...), after a column filter, ^ or + matches only a whole run of it; search it alone "
            "or joined with AND"
        )
    if hits or tr.fallback is None or _paged_past(conn, expr, params):
        return "all", hits, (expr, tr, query)
    fallback = _weighed_fallback(conn, tr)
    return "any", _run(conn, fallback, params, tr, query, snippets), (fallback, tr, query)


_MATCHES_UP_TO = "SELECT count(*) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)"


def _half(conn: sqlite3.Connection) -> int:
    """Half of the sections, rounded up: BM25 gives a word in at least that many no weight (FTS5
    clamps an IDF at or below zero to 1e-6; the IDF, log((N - n + 0.5) / (n + 0.5)), is at or below
    zero exactly when n >= N / 2)."""
    return (int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0]) + 1) // 2


def _count(conn: sqlite3.Connection, term: str, half: int) -> int:
    """The sections ``term`` is in, counted up to ``half``, by FTS5 itself (its tokenizer and
    stemmer decide what the word is)."""
    return int(conn.execute(_MATCHES_UP_TO, (term, half)).fetchone()[0])


def _weighed_fallback(conn: sqlite3.Connection, tr: Translated) -> str:
    """The any-word expression without the words found in at least half of the sections, when a
    word it keeps is found at all. BM25 gives such a word no weight (FTS5 clamps an IDF at or
    below zero to 1e-6), so it only adds sections that rank below every other match, and ranking
    them cost a question most of its time ("how do we roll back a bad deploy": "do" in 59,423 of
    91,162 sections, 220 of 225 ms). A query of such words alone keeps them all
    (tests/index/test_search_common_words.py)."""
    assert tr.fallback is not None
    half = _half(conn)
    counts = {t: _count(conn, t, half) for t in tr.terms}
    kept = [t for t in tr.terms if counts[t] < half]
    if not half or len(kept) == len(tr.terms) or not any(counts[t] for t in kept):
        return tr.fallback
    return any_of(kept)


# A plain word's term: one quoted phrase (query._phrase). A term of two spellings or of a run of an
# unsegmented script holds several phrases, each weighed by BM25 on its own: never taken as weightless.
_ONE_PHRASE = re.compile(r'"[^"]*"')


def _unweighed(conn: sqlite3.Connection, tr: Translated) -> tuple[Match, str] | None:
    """How the words would have matched ("all" or "any"), and the expression of the sections that
    hold them, when ranking them says nothing: the sections holding every word are at least half
    of them (then each word is in at least half: :func:`_half`), or none holds every word and each
    word found is in at least half (their any-word expression). Their ranking would only order the
    sections by how often a short one repeats them, and it cost a search over notes that all hold
    the word most of its time ("vendor" in 70,689 of 105,376 sections: 46 ms of 53; issue 29,
    docs/SEARCH.md); which notes hold them is what is left to say (hybrid._holding). A narrower
    AND is ranked: which sections hold every word is news, and ranking fewer than half of them
    is cheaper (three notes holding two common words were lost; helper-found,
    tests/index/test_unweighed.py). None too for FTS5 syntax (it keeps its exact meaning)."""
    terms = dict.fromkeys(tr.terms or (tr.expression,))  # a word said twice is counted once
    if tr.advanced or not all(_ONE_PHRASE.fullmatch(t) for t in terms):
        return None
    half = _half(conn)
    every = _count(conn, tr.expression, half) if half else 0
    if every >= half:
        return ("all", tr.expression) if every else None
    if every:
        return None
    found = []
    for term in terms:  # no section holds every word: the first found word that weighs ends it
        n = _count(conn, term, half)
        if n >= half:
            found.append(term)
        elif n:
            return None
    return ("any", any_of(found)) if found else None


def _query_failed(query: str, exc: sqlite3.Error) -> ShardpyError:
    """Plain words are quoted terms FTS5 always parses; a failure there is the index's, not the
    query's syntax: typed, never a traceback."""
    return ShardpyError(
        "SEARCH_QUERY_FAILED",
        f"The index could not run the query {query[:80]!r}: {exc}",
        "Search for fewer words; if it persists, rebuild the index with `shardpy index --full`.",
    )


def _paged_past(conn: sqlite3.Connection, expr: str, params: dict[str, object]) -> bool:
    """An empty page past the end of a non-empty AND result: the end of it, not a reason to answer
    with the OR fallback (page 2 would otherwise mix in notes missing a word, as "any")."""
    return bool(params["offset"]) and bool(_best_sections(conn, expr, {**params, "offset": 0, "limit": 1}))


def ranked(
    vault: Path,
    query: str,
    *,
    top: int = 10,
    offset: int = 0,
    type: str | None = None,
    path: str | None = None,
    max_age: float | None = None,
    snippets: bool = True,
    words: Words = "always",
) -> tuple[SearchResult, Answered]:
    """BM25's answer (``index.search`` without a mode) and how it was found. Without
    ``snippets`` the hits have none: a hybrid search ranks 50 notes by words to show 10, and FTS5's
    snippet() for the 50 was 4-9 ms of a 20,000-note vault's search; :func:`fill_snippets` makes
    those of the hits shown. ``words``: "weighed", a query of plain words none of which weighs
    anything (:func:`_unweighed`) is not ranked; "never", no query is (a search by meaning alone):
    the result is then ``unranked``, without hits, for a caller that ranks by meaning (the index is
    refreshed and the query checked all the same)."""
    text = _check(query, top, offset)
    root = store.resolve_vault(vault)
    db = store.index_path(root)
    notices: list[str] = []
    with store.reader(db, str(root)) as conn:
        # Built: refreshed once at least (a file whose first refresh failed holds nothing to answer).
        built = conn is not None and store.get_meta(conn, "refreshed_at") is not None
        if conn is not None and not _stale(conn, root, max_age, db):
            answer = _answer(conn, text, query, (type, path, top, offset), notices, snippets, words)
            if max_age == math.inf or not _hits_changed(conn, root, answer[0].hits):
                return answer
            notices.clear()  # answered again below, after the refresh
    _refresh(root, built, notices)
    with store.reader(db, str(root)) as conn:
        if conn is None:  # removed or replaced between the refresh and now
            notices.append("the index vanished while searching; run `shardpy index`")
            return SearchResult(query, "all", [], notices), ("", translate(text), text)
        return _answer(conn, text, query, (type, path, top, offset), notices, snippets, words)


# (type, path, top, offset): what a search asks for beside its words
Page = tuple[str | None, str | None, int, int]


def _answer(
    conn: sqlite3.Connection,
    text: str,
    query: str,
    page: Page,
    notices: list[str],
    snippets: bool,
    words: Words,
) -> tuple[SearchResult, Answered]:
    kind, path, top, offset = page
    exact, folder = _path_filter(path)
    params: dict[str, object] = {"type": kind, "path": exact, "dir": folder, "limit": top, "offset": offset}
    tr = translate(text)
    conn.execute("BEGIN")  # one snapshot for the ranking and the snippets
    try:
        unranked = _not_ranked(conn, tr, words)
        if unranked is None:
            match, hits, answered = _query(conn, tr, params, text, notices, snippets)
        else:
            match, hits, answered = unranked[0], [], (unranked[1], tr, text)
        if kind is not None and not hits and offset == 0:
            _unknown_type(conn, kind, notices)
    finally:
        conn.execute("ROLLBACK")
    return SearchResult(query, match, hits, notices, unranked=unranked is not None), answered


def _not_ranked(conn: sqlite3.Connection, tr: Translated, words: Words) -> tuple[Match, str] | None:
    """How the words match and the expression of the sections that hold them when ``words`` says
    they are not to be ranked, else None (also for a query holding no word: :func:`_query` says so)."""
    if not tr.expression or words == "always":
        return None
    return ("all", tr.expression) if words == "never" else _unweighed(conn, tr)


_SECTION_AT = (
    "SELECT c.id FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
    "WHERE f.path = ? AND c.line = ? AND c.heading = ? ORDER BY c.id LIMIT 1"
)


def fill_snippets(vault: Path, answered: Answered, hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` with a snippet made for each that has none, marked as ``answered`` found it. A
    section gone since (a refresh between the ranking and now) keeps none."""
    expr, tr, query = answered
    wanted = [h for h in hits if not h.snippet]
    if not wanted or not expr:
        return hits
    root = store.resolve_vault(vault)
    ids: dict[tuple[str, int], int] = {}
    with store.reader(store.index_path(root), str(root)) as conn:
        if conn is None:
            return hits
        for h in wanted:
            row = conn.execute(_SECTION_AT, (h.path, h.line, "\x1f".join(h.heading))).fetchone()
            if row is not None:
                ids[(h.path, h.line)] = int(row[0])
        made = _snippets(conn, expr, list(ids.values()), tr, query)
    return [h if h.snippet else replace(h, snippet=made.get(ids.get((h.path, h.line), -1), "")) for h in hits]


def _unknown_type(conn: sqlite3.Connection, kind: str, notices: list[str]) -> None:
    """A --type no note has is said, with the types the vault does have (it answered only
    "No notes match", issue 26 item 17, tests/hardening/test_search_types.py)."""
    known = [
        row[0] for row in conn.execute("SELECT DISTINCT type FROM files WHERE type IS NOT NULL ORDER BY 1")
    ]
    if kind not in known:
        listed = ", ".join(known[:30]) + (" …" if len(known) > 30 else "")
        notices.append(f"no note has the type {kind!r}; the types in this vault: {listed or 'none'}")
