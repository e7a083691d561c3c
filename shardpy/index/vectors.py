"""Section vectors beside FTS5 in the index's SQLite file: stored, refreshed, scanned.

``vectors(chunk_id, digest, vec)``: one int8 blob per section (``chunks.id``):
its vector scaled so the largest magnitude is 127 (a quarter of float32's
bytes; the ranking it gives is measured in docs/SEARCH.md), with the digest of
the text it was embedded from. The
refresh that rewrote FTS rows calls :func:`sync` in the same transaction,
under the same writer lock: sections without a vector get one, re-using the
vector of a section that disappeared with the same text (an edit re-embeds
only the sections whose text changed; a rename re-embeds nothing), and
vectors of sections that are gone are dropped. A table that does not match
the model (another model, another dimension, a damaged row) is rebuilt with a
notice. A search scans the vectors with SimSIMD's ``cdist`` (one C pass over the
rows, no numpy: importing numpy cost a one-shot search more than grep's half,
issue 29); the rows are memory-mapped from a file beside the database and kept
per process while the index's ``vectors_stamp`` is unchanged.

tests/index/test_semantic.py covers each rule.
"""

from __future__ import annotations

import contextlib
import json
import mmap
import os
import sqlite3
import threading
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from pathlib import Path

from shardpy.fsutil import atomic_write
from shardpy.index import embed, store
from shardpy.record import Record

# Triggers keep the work list exact and cheap (no scan of every section on a one-note refresh): a new
# section is queued in vectors_todo; a deleted section's vector moves to the negative id (an orphan,
# kept until the end of the sync so that the same text elsewhere re-uses it: a rename embeds nothing).
# A section id the writer hands out again (after the last note was deleted) so never inherits a vector.
# Every section whose vector a refresh added or dropped, in order: a search maps the vector file
# written at some point of this log and reads only the rows touched since (the first search after the
# write hook read all 93 MB of the table again at 20,000 notes: 0.9 s; issue 29). AUTOINCREMENT: a
# number is never handed out twice within one log; a log made anew gets a new epoch (meta).
_LOG_TABLE = (
    "CREATE TABLE IF NOT EXISTS vectors_log "
    "(seq INTEGER PRIMARY KEY AUTOINCREMENT, chunk_id INTEGER NOT NULL)"
)
LOG_KEEP = 200_000  # entries kept; a vector file older than the oldest is read again whole
_SCHEMA = (
    "CREATE TABLE vectors (chunk_id INTEGER PRIMARY KEY, digest BLOB NOT NULL, vec BLOB NOT NULL)",
    "CREATE TABLE vectors_todo (chunk_id INTEGER PRIMARY KEY)",
    "CREATE TRIGGER vectors_chunk_new AFTER INSERT ON chunks BEGIN "
    "INSERT OR IGNORE INTO vectors_todo VALUES (new.id); END",
    "CREATE TRIGGER vectors_chunk_gone AFTER DELETE ON chunks BEGIN "
    "UPDATE OR REPLACE vectors SET chunk_id = -old.id WHERE chunk_id = old.id; "
    "DELETE FROM vectors_todo WHERE chunk_id = old.id; END",
    _LOG_TABLE,
)
_DROP = (
    "DROP TRIGGER IF EXISTS vectors_chunk_new",
    "DROP TRIGGER IF EXISTS vectors_chunk_gone",
    "DROP TABLE IF EXISTS vectors_todo",
    "DROP TABLE IF EXISTS vectors",
    "DROP TABLE IF EXISTS vectors_log",
)
# CROSS JOIN fixes the loop order (the queue outermost): left to itself SQLite scanned all of fts,
# ~100 ms of a one-note refresh at 91,162 sections.
_MISSING = (
    "SELECT c.id, f.title, c.heading, fts.body FROM vectors_todo AS t CROSS JOIN chunks AS c "
    "CROSS JOIN files AS f CROSS JOIN fts WHERE c.id = t.chunk_id AND f.id = c.file_id AND fts.rowid = c.id"
)
_ORPHANS = "SELECT chunk_id, digest, vec FROM vectors WHERE chunk_id < 0"
EMBED_STEP = 4096  # sections embedded per call (memory stays flat on a large vault)
# Sections from which a refresh embeds in worker processes, in steps of at least MIN_STEP. Measured
# on 2 cores (bench vault sections, cold memos): 1,000 sections 0.48 -> 0.31 s wall, 0.48 -> 0.55 s
# CPU; 2,000: 0.59-0.78 -> 0.46-0.50 s wall, 0.59-0.78 -> 0.84-0.93 s CPU; 8,000: 2.36 -> 1.12 s
# wall. Below the bar the fork and each worker's words merged afresh buy a few tenths at most.
PARALLEL_SECTIONS = 2048
MIN_STEP = 256


def _digest(text: str) -> bytes:
    import hashlib  # here, not at the top: a search makes no such digest (issue 29)

    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def has_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'vectors'").fetchone()
    return row is not None


# How rows are stored (meta ``vectors_dtype``). Tables from before it hold float32 rows: the next
# refresh quantizes them in place (no section is embedded again) and a search waits for that.
DTYPE = "int8"


def _create(conn: sqlite3.Connection) -> None:
    """Fresh tables and triggers; every existing section queued."""
    for statement in _DROP:
        conn.execute(statement)
    for statement in _SCHEMA:
        conn.execute(statement)
    conn.execute("INSERT OR IGNORE INTO vectors_todo SELECT id FROM chunks")
    _new_log(conn)
    store.set_meta(conn, "vectors_dtype", DTYPE)


def _new_log(conn: sqlite3.Connection) -> None:
    """The log started over under a new epoch: no vector file written before can be patched from it."""
    conn.execute(_LOG_TABLE)
    conn.execute("DELETE FROM vectors_log")
    store.set_meta(conn, "vectors_epoch", os.urandom(8).hex())


def _to_int8(conn: sqlite3.Connection, dim: int) -> None:
    """float32 rows (an index from before :data:`DTYPE`) quantized in place; a row of another size is
    dropped and its section queued (embedded again). The log and the vector files start over."""
    import numpy as np

    from shardpy.index.arrays import int8_rows

    rows = [(int(cid), bytes(vec)) for cid, vec in conn.execute("SELECT chunk_id, vec FROM vectors")]
    good = [(cid, vec) for cid, vec in rows if len(vec) == dim * 4]
    bad = [(cid,) for cid, vec in rows if len(vec) != dim * 4]
    conn.executemany("DELETE FROM vectors WHERE chunk_id = ?", bad)
    conn.executemany("INSERT OR IGNORE INTO vectors_todo SELECT id FROM chunks WHERE id = ?", bad)
    if good:
        packed = int8_rows(np.frombuffer(b"".join(v for _, v in good), dtype=np.float32).reshape(-1, dim))
        conn.executemany(
            "UPDATE vectors SET vec = ? WHERE chunk_id = ?",
            [(packed[i * dim : (i + 1) * dim], cid) for i, (cid, _) in enumerate(good)],
        )
    _new_log(conn)
    store.set_meta(conn, "vectors_stamp", os.urandom(8).hex())
    store.set_meta(conn, "vectors_dtype", DTYPE)


def _ready(conn: sqlite3.Connection, model: embed.Embedder, notices: list[str]) -> bool:
    """The tables exist and hold this model's vectors (else they start over, with a notice). True
    when the log is new: no vector file can be patched from it, so this sync need not fill it."""
    stored = store.get_meta(conn, "embed_model")
    fresh = False
    if not has_table(conn) or stored != model.name:
        _create(conn)
        fresh = True
        if stored and stored != model.name:
            notices.append(f"vectors rebuilt: the embedding model changed ({stored} -> {model.name})")
    elif store.get_meta(conn, "vectors_dtype") != DTYPE:  # float32 rows from before
        _to_int8(conn, model.dim)
        fresh = True
    elif store.get_meta(conn, "vectors_epoch") is None:  # tables from before the log
        _new_log(conn)
        fresh = True
    store.set_meta(conn, "embed_model", model.name)
    return fresh


def pending(conn: sqlite3.Connection) -> bool:
    """Sections to embed or vectors to drop (two indexed look-ups)."""
    todo = conn.execute("SELECT 1 FROM vectors_todo LIMIT 1").fetchone()
    gone = conn.execute("SELECT 1 FROM vectors WHERE chunk_id < 0 LIMIT 1").fetchone()
    return todo is not None or gone is not None


Progress = Callable[[int, int], None]


def stored_text(title: object, heading: object, body: object) -> str:
    """The text a section is embedded from, out of its index row (the note's title, the heading path
    as the index stores it, joined by ``\x1f``, and the section's body): what :func:`sync` embeds,
    and what bench/int8_agreement.py embeds to compare against it."""
    return embed.section_text(str(title), str(heading).replace("\x1f", " / "), str(body or ""))


def sync(conn: sqlite3.Connection, model: embed.Embedder, notices: list[str]) -> int:
    """Give every section a vector of ``model`` and drop the vectors of gone sections (inside the
    caller's transaction). Returns how many sections were embedded."""
    fresh_log = _ready(conn, model, notices)
    missing = conn.execute(_MISSING).fetchall()
    orphans = conn.execute(_ORPHANS).fetchall()
    spare: dict[bytes, bytes] = {bytes(d): bytes(v) for _cid, d, v in orphans}
    conn.execute("DELETE FROM vectors WHERE chunk_id < 0")
    conn.execute("DELETE FROM vectors_todo")
    todo: list[tuple[int, bytes, str]] = []
    reused: list[tuple[int, bytes, bytes]] = []
    for cid, title, heading, body in missing:
        text = stored_text(title, heading, body)
        digest = _digest(text)
        vec = spare.get(digest)
        if vec is not None:
            reused.append((int(cid), digest, vec))
        else:
            todo.append((int(cid), digest, text))
    conn.executemany("INSERT OR REPLACE INTO vectors (chunk_id, digest, vec) VALUES (?,?,?)", reused)
    size = model.dim  # bytes of an int8 row
    for (lo, hi), rows in _embedded(model, [t[2] for t in todo]):
        part = todo[lo:hi]
        conn.executemany(
            "INSERT OR REPLACE INTO vectors (chunk_id, digest, vec) VALUES (?,?,?)",
            [(cid, digest, rows[k * size : (k + 1) * size]) for k, (cid, digest, _) in enumerate(part)],
        )
    if (missing or orphans) and not fresh_log:  # a cold index logs nothing (91,162 rows for naught)
        touched = [(-int(cid),) for cid, _d, _v in orphans] + [(int(row[0]),) for row in missing]
        conn.executemany("INSERT INTO vectors_log (chunk_id) VALUES (?)", touched)
        conn.execute(
            "DELETE FROM vectors_log WHERE seq <= (SELECT max(seq) FROM vectors_log) - ?", (LOG_KEEP,)
        )
    if missing or orphans:
        # Unique, never a counter: a rebuilt table (or a rebuilt index file) starts again, and a vector
        # file beside the database written for an earlier table must never match it.
        store.set_meta(conn, "vectors_stamp", os.urandom(8).hex())
    return len(todo)


Step = tuple[int, int]


def _embedded(model: embed.Embedder, texts: list[str]) -> Iterator[tuple[Step, bytes]]:
    """The int8 rows of each :data:`EMBED_STEP` texts, in order. A large refresh (a cold index)
    embeds in forked workers while this process writes the rows: on 2 cores the vectors of a cold
    index at 20,000 notes took half the wall time (docs/SEARCH.md, bench/search_bench.py)."""
    workers = 1
    if len(texts) >= PARALLEL_SECTIONS and getattr(model, "forkable", False):
        from shardpy.workers import available_workers

        workers = available_workers()
    # Four steps a worker at least, so none waits long for the last one (a text's vector does not
    # depend on the step it is embedded in).
    step = min(EMBED_STEP, max(MIN_STEP, -(-len(texts) // (workers * 4)))) if workers > 1 else EMBED_STEP
    steps = [(lo, min(lo + step, len(texts))) for lo in range(0, len(texts), step)]
    if workers <= 1:
        for lo, hi in steps:
            yield (lo, hi), _rows((model, texts), lo, hi)
        return
    prepare = getattr(model, "for_many", None)
    if callable(prepare):
        prepare()  # built once here and shared by the forked workers, not once in each
    from shardpy.workers import run_chunks

    yield from zip(steps, run_chunks((model, texts), steps, workers, _rows), strict=True)


def _rows(work: tuple[embed.Embedder, list[str]], lo: int, hi: int) -> bytes:
    from shardpy.index.arrays import int8_rows

    model, texts = work
    return int8_rows(model.encode(texts[lo:hi]))


def drop(conn: sqlite3.Connection) -> None:
    """Forget every vector (the next refresh re-embeds)."""
    for statement in _DROP:
        conn.execute(statement)
    conn.execute(
        "DELETE FROM meta WHERE key IN ('embed_model', 'vectors_stamp', 'vectors_epoch', 'vectors_dtype')"
    )


class Damaged(Exception):
    """The vector table cannot be read as this model's vectors."""


class Matrix(Record):
    """The stored vectors as buffers (numpy is an indexing import, not a search one)."""

    ids: memoryview  # chunk ids (format "q"), ascending
    files: memoryview  # the file id of each row ("q")
    vecs: memoryview[int] | None  # int8 ("b", shape rows x dim); None when there are no rows
    hidden: frozenset[int] = frozenset()  # rows whose section changed or went since the file
    extra: Matrix | None = None  # the rows changed since the file, read from the table

    @property
    def rows(self) -> int:
        return len(self.ids)

    def file_at(self, i: int) -> int:
        """The file id of row ``i`` of this matrix followed by its extra rows."""
        return (
            int(self.files[i]) if i < self.rows or self.extra is None else self.extra.file_at(i - self.rows)
        )

    def id_at(self, i: int) -> int:
        return int(self.ids[i]) if i < self.rows or self.extra is None else self.extra.id_at(i - self.rows)


_CACHE_LOCK = threading.Lock()
_CACHE: dict[str, tuple[tuple[object, ...], Matrix]] = {}


def matrix(conn: sqlite3.Connection, key: str, model: embed.QueryModel) -> Matrix | None:
    """Every stored vector (None when the index has none of this model); kept per process, and in a
    file beside the database (``key`` is its path) that later processes map instead of reading the
    table (a one-shot search read 93 MB of blobs at 20,000 notes: ~1.3 s; issue 29). A file written
    before the latest refreshes is mapped too, with the rows they touched read from the table."""
    if store.get_meta(conn, "embed_model") != model.name or not has_table(conn):
        return None
    if store.get_meta(conn, "vectors_dtype") != DTYPE:
        return None  # float32 rows from before: the refresh the caller runs quantizes them
    stamp = (store.get_meta(conn, "vectors_stamp"), store.get_meta(conn, "vault"), model.name)
    with _CACHE_LOCK:
        kept = _CACHE.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    side = Path(f"{key}.vectors")
    got = _from_file(conn, side, stamp, model.dim) if stamp[0] else None
    if got is None:
        got, epoch, seq = _read_table(conn, model.dim)
        if stamp[0]:
            _write_file(side, _label(stamp, model.dim, epoch, seq), got)
    with _CACHE_LOCK:
        _CACHE[key] = (stamp, got)
    return got


def _label(stamp: tuple[str | None, ...], dim: int, epoch: str | None, seq: int) -> bytes:
    return json.dumps({"format": 3, "stamp": list(stamp), "dim": dim, "epoch": epoch, "log": seq}).encode()


def _from_file(
    conn: sqlite3.Connection, side: Path, stamp: tuple[str | None, ...], dim: int
) -> Matrix | None:
    found = _mapped(side, dim)
    if found is None:
        return None
    label, base = found
    if label.get("stamp") == list(stamp):
        return base
    # The same vault, model and log (a dropped or rebuilt table has a new epoch), at an earlier point.
    was = label.get("stamp")
    epoch = store.get_meta(conn, "vectors_epoch")
    seq = label.get("log")
    same_log = isinstance(was, list) and was[1:] == list(stamp[1:]) and epoch and label.get("epoch") == epoch
    if not same_log or not isinstance(seq, int) or isinstance(seq, bool):
        return None
    return _patched(conn, base, seq, dim)


PATCH_MIN = 4096  # rows a search reads from the table rather than the whole table (or 1/8 of it)


@contextlib.contextmanager
def _snapshot(conn: sqlite3.Connection) -> Iterator[None]:
    """One read transaction for every read inside (unless the caller holds one); what fails to
    read as this model's vectors is a :class:`Damaged` table."""
    began = not conn.in_transaction
    if began:
        conn.execute("BEGIN")
    try:
        yield
    except (sqlite3.DatabaseError, ValueError, TypeError, OverflowError) as exc:
        raise Damaged(str(exc)) from None
    finally:
        if began:
            conn.execute("ROLLBACK")


def _patched(conn: sqlite3.Connection, base: Matrix, seq: int, dim: int) -> Matrix | None:
    """``base`` (the file, at log entry ``seq``) with the sections the log touched since hidden and
    their current rows added; None when the log no longer reaches back to ``seq`` or touched too
    many (the table is read whole and the file written again)."""
    with _snapshot(conn):
        first = conn.execute("SELECT min(seq) FROM vectors_log").fetchone()[0]
        if first is None or first > seq + 1:
            return None
        touched = [
            int(r[0]) for r in conn.execute("SELECT DISTINCT chunk_id FROM vectors_log WHERE seq > ?", (seq,))
        ]
        if len(touched) > max(PATCH_MIN, base.rows // 8):
            return None
        rows = conn.execute(
            "SELECT v.chunk_id, c.file_id, v.vec FROM vectors AS v JOIN chunks AS c ON c.id = v.chunk_id "
            "WHERE v.chunk_id IN (SELECT value FROM json_each(?)) ORDER BY v.chunk_id",
            (json.dumps(touched),),
        ).fetchall()
        extra = _matrix_of(rows, dim)
    hidden = frozenset(
        i for cid in touched if (i := bisect_left(base.ids, cid)) < base.rows and base.ids[i] == cid
    )
    return Matrix(base.ids, base.files, base.vecs, hidden, extra if extra.rows else None)


def _read_table(conn: sqlite3.Connection, dim: int) -> tuple[Matrix, str | None, int]:
    """Every row in chunk id order, with the log's epoch and last entry of the same snapshot."""
    with _snapshot(conn):
        rows = conn.execute(
            "SELECT v.chunk_id, c.file_id, v.vec FROM vectors AS v JOIN chunks AS c ON c.id = v.chunk_id "
            "ORDER BY v.chunk_id"
        ).fetchall()
        epoch = store.get_meta(conn, "vectors_epoch")
        seq = 0
        if epoch is not None:
            seq = int(conn.execute("SELECT coalesce(max(seq), 0) FROM vectors_log").fetchone()[0])
        got = _matrix_of(rows, dim)
    return got, epoch, seq


def _matrix_of(rows: list[tuple[int, int, bytes]], dim: int) -> Matrix:
    if any(len(r[2]) != dim for r in rows):
        raise ValueError("a vector of the wrong size")
    ids, files = array("q", (r[0] for r in rows)), array("q", (r[1] for r in rows))
    blob = memoryview(b"".join(r[2] for r in rows))
    return Matrix(memoryview(ids), memoryview(files), blob.cast("b", [len(rows), dim]) if rows else None)


# The vector file: a label line (format, the table's stamp, the dimension), a count line, then the
# chunk ids and file ids (int64) and the vectors (int8), each at an 8-aligned offset.
def _layout(label: bytes, rows: int, dim: int) -> tuple[int, int, int, int]:
    head = len(label) + 1 + 21
    start = (head + 7) // 8 * 8
    return start, start + 8 * rows, start + 16 * rows, start + 16 * rows + rows * dim


def _mapped(side: Path, dim: int) -> tuple[dict[str, object], Matrix] | None:
    """The vector file (its label and rows, memory-mapped) when it is whole and of this dimension."""
    try:
        with open(side, "rb") as fh:
            raw_label = fh.readline().rstrip(b"\n")
            label = json.loads(raw_label)
            if not isinstance(label, dict) or label.get("format") != 3 or label.get("dim") != dim:
                return None
            rows = int(fh.readline())
            ids_at, files_at, vecs_at, end = _layout(raw_label, rows, dim)
            if os.fstat(fh.fileno()).st_size != end or rows <= 0:
                return None
            raw = memoryview(mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ))
    except (OSError, ValueError, RecursionError):  # a damaged label (nested past the parser) included
        return None
    return label, Matrix(
        raw[ids_at:files_at].cast("q"),
        raw[files_at:vecs_at].cast("q"),
        raw[vecs_at:end].cast("b", [rows, dim]),
    )


def _write_file(side: Path, label: bytes, got: Matrix) -> None:
    """Written by the one atomic writer (a reader maps the old file or the new, never half of one)."""
    rows = got.rows
    if not rows or got.vecs is None:
        return
    start = _layout(label, rows, got.vecs.shape[1] if got.vecs.shape else 0)[0]
    head = label + b"\n" + f"{rows:<20}\n".encode()
    with contextlib.suppress(OSError):  # a cache: a lost file is written again by the next search
        atomic_write(
            side.parent,
            side.name,
            [head + b"\0" * (start - len(head)), got.ids.tobytes(), got.files.tobytes(), got.vecs.tobytes()],
            durable=False,
        )


def after_refresh(conn: sqlite3.Connection, changed: bool, notices: list[str]) -> None:
    """The vector half of a refresh (same transaction and lock as the FTS rows). Loads the model
    only when there is something to embed: a refresh that changed nothing stays cheap."""
    name = embed.expected_name()
    if name is None and not embed.enabled():
        if has_table(conn):
            drop(conn)
        return
    current = (
        name is not None
        and has_table(conn)
        and store.get_meta(conn, "embed_model") == name
        and store.get_meta(conn, "vectors_dtype") == DTYPE
    )
    if current and not (changed and pending(conn)):
        return
    try:
        model = embed.load()
    except embed.Unavailable as exc:
        _unavailable(conn, str(exc), notices)
        return
    store.set_meta(conn, "embed_unavailable", "")
    sync(conn, model, notices)


def _unavailable(conn: sqlite3.Connection, why: str, notices: list[str]) -> None:
    """Said once (stored in meta): every later refresh and search stays quiet until it changes."""
    if store.get_meta(conn, "embed_unavailable") != why:
        store.set_meta(conn, "embed_unavailable", why)
        notices.append(f"search by meaning unavailable ({why}); searching by words only")
