"""Search by meaning and by words, fused: the modes of ``shardpy search``.

- ``lexical``: BM25 over FTS5 (shardpy/index/searcher.py), exactly as before.
- ``semantic``: cosine similarity of the query's vector with every section's
  (shardpy/index/vectors.py), the best section of each note.
- ``hybrid`` (the default once vectors exist): reciprocal-rank fusion of the
  two lists, ``sum(w / (K + rank))``. The lexical list counts fully when
  every word matched; when only FTS5's any-word fallback answered, it is
  weighted down (:data:`ANY_WEIGHT`): that list is flooded by matches of
  "how", "do", "we" and drowned the meaning (measured in
  bench/search_quality.py, docs/SEARCH.md). Words that weigh nothing in
  BM25 (each in at least half of the sections) are not ranked: the notes
  of the list by meaning that hold them stand for the lexical list
  (:func:`_holding`).

A query in FTS5's own language (``"phrase"``, ``NOT``, ``prefix*``,
``column:``) keeps its exact lexical meaning: it is always lexical. Without
the model (removed, or ``SHARDPY_EMBED_MODEL=off``) a search answers
lexically and says why once.
"""

from __future__ import annotations

import itertools
import math
import re
import sqlite3
import sys
from array import array
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.index import embed, store, vectors
from shardpy.index.arrays import int8_vector
from shardpy.index.model import SearchHit, SearchResult
from shardpy.index.query import translate
from shardpy.index.searcher import (
    MAX_TOP,
    UNREFRESHABLE,
    Answered,
    _check,
    fill_snippets,
    ranked,
    refreshed_for,
)
from shardpy.record import replace

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from shardpy.index.model import Match, Mode
    from shardpy.index.searcher import Words

    T = TypeVar("T")
    Fused = list[tuple[T, float, dict[str, int]]]  # item, fused score, 1-based rank in each list

# Reciprocal-rank fusion constant, measured (bench/search_quality.py): 60, the usual, is so flat that a
# 0.1-weighted any-word match lifted a note ranked third by meaning over the first.
K = 10
ANY_WEIGHT = 0.1  # weight of the lexical list when only the any-word fallback answered (measured)
DEPTH = 50  # notes taken from each list before fusing
SNIPPET_WORDS = 24
MODES: tuple[Mode, ...] = ("hybrid", "lexical", "semantic")


def _bad_mode(mode: str) -> ShardpyError:
    return ShardpyError(
        "SEARCH_BAD_MODE",
        f"Unknown search mode {mode!r}",
        "Use --mode hybrid, lexical or semantic.",
    )


Keep = Callable[[str], bool]  # a vault path the caller may be shown (an MCP exposure policy)
PAGES = 5  # lexical pages over-fetched for a filtered caller before its readable hits are taken as all


def search(
    vault: Path,
    query: str,
    *,
    mode: str | None = None,
    top: int = 10,
    offset: int = 0,
    type: str | None = None,
    path: str | None = None,
    max_age: float | None = None,
    keep: Keep | None = None,
) -> SearchResult:
    """``mode`` None: hybrid when the index has vectors and the query is plain words, else lexical.
    ``keep``: only notes it accepts are ranked, on both lists, and ``match`` is decided on them, so
    a note it refuses changes no rank and no answer (the MCP ``search`` tool, issue 24 item 6)."""
    if mode is not None and mode not in MODES:
        raise _bad_mode(mode)
    _check(query, top, offset)  # the lexical search's own checks, before the deeper fetch below
    if mode == "lexical" and keep is None:  # the page itself: its snippets made as it is ranked
        lex, _answered = _lexical_list(vault, query, top, offset, type, path, max_age, keep, True)
        return _lexical(lex, offset, lex.hits, list(lex.notices))
    if mode == "lexical":
        lex, answered = _lexical_list(vault, query, top, offset, type, path, max_age, keep, False)
        result = _lexical(lex, offset, lex.hits, list(lex.notices))
        return replace(result, hits=fill_snippets(vault, answered, result.hits))
    result, answered, unranked = _with_meaning(vault, query, mode, top, offset, type, path, max_age, keep)
    if result.mode != "lexical":
        redone, said = refreshed_for(vault, result.hits, max_age)
        if redone:  # a note shown changed since it was indexed: answered after a refresh
            redo = search(
                vault,
                query,
                mode=mode,
                top=top,
                offset=offset,
                type=type,
                path=path,
                max_age=math.inf,
                keep=keep,
            )
            return replace(redo, notices=[*said, *(n for n in redo.notices if n not in said)])
        result = replace(result, notices=[*result.notices, *(n for n in said if n not in result.notices)])
    if unranked:
        return replace(result, hits=_marked(vault, answered, result.hits))
    return replace(result, hits=fill_snippets(vault, answered, result.hits))


def _with_meaning(
    vault: Path,
    query: str,
    mode: str | None,
    top: int,
    offset: int,
    type: str | None,
    path: str | None,
    max_age: float | None,
    keep: Keep | None,
) -> tuple[SearchResult, Answered, bool]:
    """The page by meaning and words (hybrid or semantic; lexical when meaning is unavailable), how
    its words were found, and whether they were left unranked (their snippets to be marked).

    Ranked without snippets: only the hits shown get one (searcher.ranked; 50 snippets cost more
    than the rest of the lexical search). Words that weigh nothing are not ranked at all
    (searcher._unweighed), nor are any for a search by meaning alone, unless the answer is by words
    after all (no model, no vectors, FTS5 syntax). They are ranked under a filter: whether a section
    holds every word is decided over the notes that may be shown, which the ranking does (a "match"
    decided over the whole index told an MCP caller that a note it may not read holds them); and
    while some sections wait for their vectors (a refresh whose model could not load), which the
    list by meaning cannot hold but the words find (both helper-found, tests/index/test_unweighed.py)."""
    depth = max(DEPTH, offset + top)
    filtered = type is not None or path is not None or keep is not None
    words = _words(vault, mode, filtered)
    lex, answered = _lexical_list(vault, query, depth, 0, type, path, max_age, keep, False, words)
    notices = list(lex.notices)  # the refresh's (said once, some of them: vectors._unavailable)
    held = answered[0]  # the words' expression, for a list by words that was not ranked
    fused = _ranked(vault, query, held, mode, lex, depth, offset, top, type, path, keep, notices)
    if fused is None and lex.unranked:
        lex, answered = _lexical_list(vault, query, depth, 0, type, path, max_age, keep, False)
        notices += [n for n in lex.notices if n not in notices]
    result = fused or _lexical(lex, offset, lex.hits[offset : offset + top], notices)
    return result, answered, fused is not None and lex.unranked


def _words(vault: Path, mode: str | None, filtered: bool) -> Words:
    """When the words are ranked (searcher.ranked's ``words``), decided once, before they are
    looked up: sections a refresh inside the lookup leaves without vectors are those of a model
    that could not load, and then the answer is by words anyway."""
    if mode == "semantic":
        return "never"
    return "always" if filtered or _unembedded(vault) else "weighed"


def _unembedded(vault: Path) -> bool:
    """Some sections have no vector yet, or vectors of gone sections wait to be dropped."""
    root = store.resolve_vault(vault)
    with store.reader(store.index_path(root), str(root)) as conn:
        return conn is not None and vectors.has_table(conn) and vectors.pending(conn)


def _marked(vault: Path, answered: Answered, hits: list[SearchHit]) -> list[SearchHit]:
    """``hits`` found by meaning with the words marked in the snippet of each section holding them,
    as a ranking by words would have shown them (tests/index/test_semantic.py); the start of the
    section for the others."""
    marked = fill_snippets(vault, answered, [replace(h, snippet="") for h in hits])
    return [m if m.snippet else h for m, h in zip(marked, hits, strict=True)]


def _ranked(
    vault: Path,
    query: str,
    held: str,
    mode: str | None,
    lex: SearchResult,
    depth: int,
    offset: int,
    top: int,
    type: str | None,
    path: str | None,
    keep: Keep | None,
    notices: list[str],
) -> SearchResult | None:
    """The page of ``lex`` (BM25's ``depth`` notes) fused with the list by meaning; None when the
    answer is by words alone (said in ``notices`` where the caller asked for meaning). ``lex``
    unranked (words that weigh nothing): the notes of the list by meaning that ``held`` matches
    stand for it (:func:`_holding`)."""
    if translate(query.strip()).advanced:
        if mode is not None:
            notices.append("the query uses FTS5 syntax, so it was searched by words only")
        return None
    root = store.resolve_vault(vault)
    model = _model(root, notices, explicit=mode is not None)
    if model is None:
        return None
    meaning = _meaning_list(root, model, query, type, path, depth, notices, keep)
    if meaning is None:
        return None
    if lex.unranked and mode != "semantic":
        notices.append(UNWEIGHED)
        lex = replace(lex, hits=_holding(root, held, meaning))
    chosen: Mode = "semantic" if mode == "semantic" else "hybrid"
    return _fused(lex, meaning, chosen, offset, top, notices)


UNWEIGHED = (
    "no word of the query weighs anything in a ranking by words (each is in at least half of the "
    "sections, or in none): ranked by meaning, the notes holding them raised"
)


def _holding(root: Path, expr: str, meaning: list[SearchHit]) -> list[SearchHit]:
    """The notes of ``meaning`` with a section ``expr`` matches, in their order by meaning, each at
    such a section (the one found by meaning when it matches, else the note's first): the list by
    words for words that weigh nothing. BM25 scores every match of such words at its clamp (1e-6
    times at most 11), so which notes hold them is all it has to say; their order by how often a
    short section repeats them was noise that cost a one-shot search most of its time
    (searcher._unweighed). Fused as a list by words, it raises the notes that hold the words, as
    the ranked list did (tests/index/test_unweighed.py)."""
    if not expr or not meaning:
        return []
    with store.reader(store.index_path(root), str(root)) as conn:
        if conn is None:
            return []
        notes = _note_sections(conn, [h.path for h in meaning])
        # The section found by meaning first (FTS5 checks each id apart, 10-60 us, and such words
        # are in most sections), the others only of the notes where that one holds none.
        best = {h.path: _section_at(notes.get(h.path, []), h.line) for h in meaning}
        matched = _matching(conn, expr, [c for c in best.values() if c is not None])
        rest = [c for p, b in best.items() if b not in matched for c, _ in notes.get(p, []) if c != b]
        matched |= _matching(conn, expr, rest)
        chosen = [_held(best[h.path], notes.get(h.path, []), matched) for h in meaning]
        ids = [c for c in chosen if c is not None]
        info = _sections(conn, ids)
    return [info[c] for c in ids if c in info]


def _section_at(sections: list[tuple[int, int]], line: int) -> int | None:
    return next((cid for cid, at in sections if at == line), None)


def _held(best: int | None, sections: list[tuple[int, int]], matched: set[int]) -> int | None:
    """The section that stands for a note: the one found by meaning when it holds the words, else
    the note's first that does (None: none does)."""
    if best in matched:
        return best
    return next((cid for cid, _line in sections if cid in matched), None)


def _matching(conn: sqlite3.Connection, expr: str, ids: list[int]) -> set[int]:
    """The sections of ``ids`` that ``expr`` matches."""
    out: set[int] = set()
    for lo in range(0, len(ids), 900):
        part = ids[lo : lo + 900]
        sql = f"SELECT rowid FROM fts WHERE fts MATCH ? AND rowid IN ({','.join('?' * len(part))})"
        out.update(int(r[0]) for r in conn.execute(sql, (expr, *part)))
    return out


def _note_sections(conn: sqlite3.Connection, paths: list[str]) -> dict[str, list[tuple[int, int]]]:
    """The sections (id, line) of each note at ``paths``, in id order."""
    out: dict[str, list[tuple[int, int]]] = {}
    for lo in range(0, len(paths), 900):
        part = paths[lo : lo + 900]
        sql = (
            "SELECT c.id, c.line, f.path FROM chunks AS c JOIN files AS f ON f.id = c.file_id "
            f"WHERE f.path IN ({','.join('?' * len(part))}) ORDER BY c.id"
        )
        for cid, line, path in conn.execute(sql, part):
            out.setdefault(str(path), []).append((int(cid), int(line)))
    return out


def _lexical_list(
    vault: Path,
    query: str,
    top: int,
    offset: int,
    kind: str | None,
    path: str | None,
    max_age: float | None,
    keep: Keep | None,
    snippets: bool,
    words: Words = "always",
) -> tuple[SearchResult, Answered]:
    """BM25's page and how it was found; with ``keep``, the first ``offset + top`` accepted hits,
    AND decided on them. Without ``snippets`` the hits have none (searcher.fill_snippets);
    ``words``: searcher.ranked's."""
    if keep is None:
        return ranked(
            vault,
            query,
            top=top,
            offset=offset,
            type=kind,
            path=path,
            max_age=max_age,
            snippets=snippets,
            words=words,
        )
    notices: list[str] = []
    want = offset + top
    pages = _kept_pages(vault, query, want, kind, path, max_age, keep, notices, True, snippets, words)
    hits, answered, unranked = pages
    if unranked is not None:
        return unranked, answered
    match: Match = "all"
    if not hits:
        # The index's own OR fallback is decided over every note, refused ones included: it is
        # redone here over the accepted ones (tests/security/test_serve_exposure.py).
        fallback = translate(query.strip()).fallback
        if fallback is not None:
            hits, answered, _ = _kept_pages(
                vault, fallback, want, kind, path, max_age, keep, notices, False, snippets
            )
            match = "any"
    return SearchResult(query, match, hits[offset:], notices), answered


def _kept_pages(
    vault: Path,
    query: str,
    want: int,
    kind: str | None,
    path: str | None,
    max_age: float | None,
    keep: Keep,
    notices: list[str],
    all_words: bool,
    snippets: bool,
    words: Words = "always",
) -> tuple[list[SearchHit], Answered, SearchResult | None]:
    """Up to ``want`` hits ``keep`` accepts, over-fetching pages of the whole index. ``all_words``:
    only the index's AND answer counts (its OR fallback is dropped here and redone by the caller).
    The result the first page gave when ``words`` left it unranked, else None."""
    page = min(max(want * 2, 20), MAX_TOP)  # a page past the index's limit was SEARCH_BAD_LIMIT
    hits: list[SearchHit] = []
    answered: Answered = ("", translate(query.strip()), query.strip())
    for n in range(PAGES):
        at = n * page
        result, got = ranked(
            vault,
            query,
            top=page,
            offset=at,
            type=kind,
            path=path,
            max_age=max_age,
            snippets=snippets,
            words=words if n == 0 else "always",  # the same words: decided on the first page
        )
        notices += [x for x in result.notices if x not in notices]
        if result.unranked:
            return [], got, result
        if all_words and result.match != "all":
            break
        answered = got  # how the hits taken were found (the snippets' words)
        for hit in result.hits:
            if len(hits) >= want:
                break  # filled: the hits below it are neither served nor examined
            if keep(hit.path):
                hits.append(hit)
        if len(hits) >= want or len(result.hits) < page:
            break
    return hits, answered, None


def _lexical(lex: SearchResult, offset: int, page: list[SearchHit], notices: list[str]) -> SearchResult:
    hits = [replace(h, mode="lexical", ranks={"lexical": offset + i + 1}) for i, h in enumerate(page)]
    return SearchResult(lex.query, lex.match, hits, notices, mode="lexical")


def _model(root: Path, notices: list[str], *, explicit: bool) -> embed.QueryModel | None:
    try:
        return embed.query_model()
    except embed.Unavailable as exc:
        why = str(exc)
    db = store.index_path(root)
    with store.reader(db, str(root)) as conn:
        said = conn is not None and store.get_meta(conn, "embed_unavailable") == why
    if explicit or not said:
        notices.append(f"search by meaning unavailable ({why}); searching by words only")
    return None


# (file id, chunk id, similarity) of the best section of each note, best first
Ranked = list[tuple[int, int, float]]


def _semantic(
    root: Path,
    model: embed.QueryModel,
    query: str,
    kind: str | None,
    path: str | None,
    depth: int,
    notices: list[str],
) -> Ranked | None:
    db = store.index_path(root)
    for attempt in range(2):
        with store.reader(db, str(root)) as conn:
            if conn is None:
                return None
            try:
                mat = vectors.matrix(conn, str(db), model)
            except vectors.Damaged:
                mat = None
                if attempt == 0:
                    notices.append("vectors rebuilt: the vector table was damaged")
                    _rebuild(root, db)
                    continue
            if mat is None:
                if attempt == 0 and _embed_now(root, notices):
                    continue
                return None
            allowed = _allowed_files(conn, kind, path)
        return _rank(mat, model.vector(query.strip()), allowed, depth)
    return None


def _meaning_list(
    root: Path,
    model: embed.QueryModel,
    query: str,
    kind: str | None,
    path: str | None,
    depth: int,
    notices: list[str],
    keep: Keep | None,
) -> list[SearchHit] | None:
    """The ``depth`` notes nearest the query (best section each, accepted by ``keep``), best first;
    None without vectors. A filtered caller's list is ranked deeper until it holds ``depth``
    accepted notes or every note was ranked."""
    want = depth
    while True:
        sem = _semantic(root, model, query, kind, path, want, notices)
        if sem is None:
            return None
        hits = _hits(root, sem)
        if keep is None:
            return hits
        kept = [h for h in hits if keep(h.path)]
        if len(kept) >= depth or len(sem) < want:
            return kept[:depth]
        want *= 4


def _embed_now(root: Path, notices: list[str]) -> bool:
    """An index without this model's vectors (built before the model was there, or with another
    one) gets them now; False when another process holds the lock (the answer is lexical then)."""
    from shardpy.index.build import refresh  # issue 29: the walker and parser load only to refresh

    try:
        report = refresh(root, lock_wait=0.0)
    except ShardpyError as exc:
        if exc.code == "INDEX_LOCKED":
            notices.append("vectors are being built by another process; searching by words only")
            return False
        if exc.code in UNREFRESHABLE:
            notices.append(f"vectors could not be built ({exc.message}); searching by words only")
            return False
        raise
    notices.extend(n for n in report.notices if n not in notices)
    return True


def _rebuild(root: Path, db: Path) -> None:
    from shardpy.index.build import refresh

    with store.writer_lock(db, wait=store.LOCK_WAIT_SECONDS) as got:
        if not got:
            return
        conn, _ = store.open_for_write(db, str(root))
        try:
            conn.execute("BEGIN")
            vectors.drop(conn)
            conn.execute("COMMIT")
        finally:
            conn.close()
    refresh(root, lock_wait=0.0)


def _allowed_files(conn: sqlite3.Connection, kind: str | None, path: str | None) -> set[int] | None:
    if kind is None and path is None:
        return None
    from shardpy.index.searcher import _path_filter

    exact, folder = _path_filter(path)
    rows = conn.execute(
        "SELECT id FROM files WHERE (:type IS NULL OR type = :type) AND "
        "(:path IS NULL OR path = :path OR substr(path, 1, length(:dir)) = :dir)",
        {"type": kind, "path": exact, "dir": folder},
    )
    return {int(r[0]) for r in rows}


def _rank(mat: vectors.Matrix, query: list[float], allowed: set[int] | None, depth: int) -> Ranked:
    if depth <= 0:
        return []
    scanned = _scan(mat.vecs, query) if mat.vecs is not None else None
    if scanned is not None:
        for i in mat.hidden:  # changed or gone since the vector file: their rows are in ``extra``, if any
            scanned[i] = _UNRANKED
    if scanned is not None and allowed is None and (mat.extra is None or mat.extra.vecs is None):
        # The usual one-shot search: every row the file's, no filter. Picked without a Python float
        # per row (tolist and the threshold pass cost a search 4.5-9 ms at 91,162 rows, issue 29).
        head = min(len(scanned), depth * 40)
        rows = _coded_nearest(scanned, head)
        if rows is not None:
            out = _best_per_note(mat, scanned, rows, depth)
            if len(out) >= depth:
                return out
    dist = _floats(scanned) if scanned is not None else []
    files: Iterable[int] = mat.files
    if mat.extra is not None and mat.extra.vecs is not None:
        dist += _distances(mat.extra.vecs, query)
        files = itertools.chain(mat.files, mat.extra.files)
    if not dist:
        return []
    if allowed is not None:
        dist = [x if f in allowed else _UNRANKED for x, f in zip(dist, files, strict=True)]
    # The nearest sections first: the few thousand nearest (a note has a handful of sections), all
    # of them only when those do not hold ``depth`` notes.
    head = min(len(dist), depth * 40)
    out = _best_per_note(mat, dist, _nearest_rows(dist, head), depth)
    if len(out) < depth and head < len(dist):
        out = _best_per_note(mat, dist, _nearest_rows(dist, len(dist)), depth)
    return out


_UNRANKED = math.inf  # the distance of a row the caller may not see
SAMPLE_STEP = 16  # every 16th distance picks the threshold of the nearest rows
SORT_ALL_BELOW = 8192  # rows sorted whole (a few ms) rather than through a threshold


def _distances(vecs: memoryview[int], query: list[float]) -> list[float]:
    """:func:`_scan`'s distances as a list."""
    return _floats(_scan(vecs, query))


def _floats(buffer: memoryview[float]) -> list[float]:
    got: list[float] = buffer.tolist()  # type: ignore[assignment]  # typeshed says ints, whatever the format
    return got


def _scan(vecs: memoryview[int], query: list[float]) -> memoryview[float]:
    """The cosine distance (1 - cosine) of the query to each int8 row, both quantized alike
    (``arrays.int8_vector``), as a writable float32 buffer: SimSIMD's C scan over the mapped rows,
    without numpy (importing numpy alone cost a one-shot search more than half of ``grep -ril``'s
    whole run; issue 29, docs/SEARCH.md). A quarter of float32's bytes to scan: 91,162 rows in ~4 ms,
    not ~12. Distances, not similarities: turning 91,162 of them around would cost more than half
    of that again. SimSIMD computes an int8 cosine in float32: a float32 result loses nothing."""
    import simsimd

    q8 = int8_vector(query)
    if q8 is None:  # a query with no vector (nothing the model knows): cosine 0
        return memoryview(array("f", [1.0]) * len(vecs))
    q = memoryview(q8).cast("B").cast("b", [1, len(q8)])
    # Two matrices give a (1, rows) tensor (a zero row is at distance 1; int8 has no NaN).
    out: Any = simsimd.cdist(q, vecs, metric="cosine", out_dtype="float32")
    flat: memoryview[float] = memoryview(out).cast("B").cast("f")
    return flat


# The high byte of a float32 in [0.5, 2): sign 0, the exponent's top seven bits 0111111. Below it,
# or with the sign bit set (-0.0; SimSIMD gives no negative distance, but a sort would put one
# first): nearer than 0.5. In [0.5, 2) the next byte (the exponent's last bit, then the mantissa's
# top seven) is a code that never decreases as the distance grows; any other high byte is 2.0 or
# more, inf or NaN (tests/index/test_rank_rows.py).
_HALF_TO_TWO = 0x3F
_NEARER_THAN_HALF = re.compile(b"[\x00-\x3e\x80-\xff]")


def _coded_nearest(dist: memoryview[float], head: int) -> list[int] | None:
    """:func:`_nearest_rows` of a float32 buffer, or None when only a sort of every row answers.
    The threshold is a byte code (above), found by C: ``re`` finds the rows at or below it in the
    buffer's bytes, and only those become Python floats. No row left out is nearer than one kept
    (the code never decreases with the distance), so the kept rows sorted begin with the ``head``
    nearest, ties in row order (tests/index/test_rank_rows.py compares with a stable sort)."""
    n = len(dist)
    if n < SORT_ALL_BELOW or head >= n or sys.byteorder != "little":  # the high byte is the fourth
        return None
    raw = dist.cast("B")
    high, code = raw[3::4].tobytes(), raw[2::4].tobytes()
    nearest = [m.start() for m in _NEARER_THAN_HALF.finditer(high)]
    sample = sorted(code[::SAMPLE_STEP])
    r = max(0, head - len(nearest)) // SAMPLE_STEP + 8
    while r < len(sample):
        at_most = re.compile(b"[\x00-" + re.escape(bytes([sample[r]])) + b"]")
        rows = [i for m in at_most.finditer(code) if high[i := m.start()] == _HALF_TO_TWO]
        if len(rows) + len(nearest) >= head:
            rows = sorted(rows + nearest)
            rows.sort(key=dist.__getitem__)  # stable: equal distances keep row order
            return rows[:head]
        r *= 2
    return None


def _nearest_rows(dist: list[float], head: int) -> list[int]:
    """The ``head`` rows of least distance, nearest first, ties in row order: what a stable sort
    of every row gives, in one pass over them. Rows at or below a threshold taken from a sample are
    sorted; a threshold that let fewer than ``head`` through is raised (tests/index/test_rank_rows.py)."""
    n = len(dist)
    rows: list[int] | None = None
    if n >= SORT_ALL_BELOW and head < n:
        sample = sorted(dist[::SAMPLE_STEP])
        r = head // SAMPLE_STEP + 8
        while r < len(sample):
            cut = sample[r]
            rows = [i for i, x in enumerate(dist) if x <= cut]
            if len(rows) >= head:
                break
            rows, r = None, r * 2
    if rows is None:
        rows = list(range(n))
    rows.sort(key=dist.__getitem__)  # stable: equal distances keep row order
    return rows[:head]


def _best_per_note(mat: vectors.Matrix, dist: Sequence[float], order: list[int], depth: int) -> Ranked:
    out: Ranked = []
    seen: set[int] = set()
    for i in order:
        if dist[i] == _UNRANKED:
            break
        fid = mat.file_at(i)
        if fid in seen:
            continue
        seen.add(fid)
        out.append((fid, mat.id_at(i), 1.0 - dist[i]))
        if len(out) >= depth:
            break
    return out


def fuse(
    lexical: Sequence[T], all_words: bool, meaning: Sequence[T], path_of: Callable[[T], str]
) -> Fused[T]:
    """Reciprocal-rank fusion of two best-first lists, one item per note, best first. The item kept
    for a note is the lexical one when every word matched (its section, its marked snippet), else
    the one by meaning. The one fusion of the CLI, the MCP ``search`` tool and ``recall``."""
    item: dict[str, T] = {}
    score: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    for r, hit in enumerate(meaning, 1):
        p = path_of(hit)
        item[p], score[p], ranks[p] = hit, 1.0 / (K + r), {"semantic": r}
    weight = 1.0 if all_words else ANY_WEIGHT
    for r, hit in enumerate(lexical, 1):
        p = path_of(hit)
        score[p] = score.get(p, 0.0) + weight / (K + r)
        ranks.setdefault(p, {})["lexical"] = r
        if all_words or p not in item:
            item[p] = hit
    order = sorted(score, key=lambda p: (-score[p], p))
    return [(item[p], score[p] * K, ranks[p]) for p in order]


def _fused(
    lex: SearchResult, meaning: list[SearchHit], mode: Mode, offset: int, top: int, notices: list[str]
) -> SearchResult:
    lexical = lex.hits if mode == "hybrid" else []
    fused = fuse(lexical, lex.match == "all", meaning, lambda h: h.path)[offset : offset + top]
    hits = [replace(hit, score=score, mode=mode, ranks=ranks) for hit, score, ranks in fused]
    return SearchResult(lex.query, lex.match if mode == "hybrid" else "all", hits, notices, mode=mode)


def _hits(root: Path, sem: Ranked) -> list[SearchHit]:
    with store.reader(store.index_path(root), str(root)) as conn:
        if conn is None:
            return []
        info = _sections(conn, [cid for _f, cid, _s in sem])
    return [info[cid] for _f, cid, _s in sem if cid in info]


def order_by_meaning(items: Sequence[T], text_of: Callable[[T], str], query: str) -> list[T] | None:
    """``items`` (in their given order) re-ranked by meaning against ``query`` fused with that order;
    None without a model. For memories: the caller keeps its groups (recall never lifts a
    superseded memory above a live one) and calls this inside each."""
    if len(items) < 2 or not query.strip():
        return list(items)
    try:
        model = embed.load()
    except embed.Unavailable:
        return None
    import numpy as np

    vecs = model.encode([text_of(x) for x in items])
    sims = vecs @ model.encode([query.strip()])[0]
    by_meaning = [items[i] for i in np.argsort(-sims, kind="stable")]
    return [x for x, _s, _r in fuse(list(items), True, by_meaning, lambda x: str(id(x)))]


def _sections(conn: sqlite3.Connection, ids: list[int]) -> dict[int, SearchHit]:
    """A hit for each section id (its note, heading, line and the start of its text as snippet)."""
    out: dict[int, SearchHit] = {}
    if not ids:
        return out
    marks = ",".join("?" * len(ids))
    sql = (
        "SELECT c.id, f.path, f.title, c.heading, c.line, f.type, fts.body FROM chunks AS c "
        f"JOIN files AS f ON f.id = c.file_id JOIN fts ON fts.rowid = c.id WHERE c.id IN ({marks})"
    )
    for cid, path, title, heading, line, kind, body in conn.execute(sql, ids):
        words = str(body or "").split()
        snippet = " ".join(words[:SNIPPET_WORDS]) + ("…" if len(words) > SNIPPET_WORDS else "")
        out[int(cid)] = SearchHit(
            path=str(path),
            title=str(title),
            heading=tuple(str(heading).split("\x1f")) if heading else (),
            snippet=snippet,
            score=0.0,
            type=kind,
            line=int(line),
        )
    return out
