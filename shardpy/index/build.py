"""Build or incrementally refresh a vault's index.

Per note, the cheapest test that settles it: same mtime and size as stored →
not even read; same content hash → only the stat is updated; otherwise parsed
and its chunks replaced. Notes that disappeared (deleted, renamed, now
excluded, turned into a symlink) are pruned. One writer at a time holds the
index's lock; readers keep reading the last committed state (WAL).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from shardpy.fsutil import open_regular_stat, printable, utf8_name
from shardpy.index import store, vectors
from shardpy.index.chunk import Note, parse_note
from shardpy.index.config import MAX_NOTE_BYTES, IndexConfig
from shardpy.index.model import RefreshReport
from shardpy.index.script import cjk_column
from shardpy.index.store import resolve_vault
from shardpy.index.walk import LINK_REASON, Stat, check_one, walk
from shardpy.notes.visibility import DELETED_REASON, NAME_REASON, deleted

Progress = Callable[[int, int], None]
COMMIT_EVERY = 2000  # notes per transaction: readers see progress, the WAL stays small
BATCH = 200  # notes per worker task
PARALLEL_MIN = 1000  # fewer notes to read are not worth starting workers for
_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class _Known:
    id: int
    stat: Stat
    hash: str


@dataclass
class _Counts:
    indexed: int = 0
    unchanged: int = 0
    pruned: int = 0
    chunks: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    degraded: list[tuple[str, str]] = field(default_factory=list)


def _read(path: Path) -> bytes:
    """The file's bytes, refusing a link and anything not a regular file (fsutil.open_regular: a
    FIFO never blocks)."""
    fd, st = open_regular_stat(path)
    try:
        if st.st_size > MAX_NOTE_BYTES:
            raise ValueError(f"larger than {MAX_NOTE_BYTES // (1024 * 1024)} MB")
        chunks = []
        while block := os.read(fd, 1 << 20):
            chunks.append(block)
        return b"".join(chunks)
    finally:
        os.close(fd)


def decode(data: bytes) -> tuple[str | None, str]:
    """(text, problem): None text for a binary file; replacement characters for bad UTF-8."""
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    if b"\x00" in data:
        return None, "binary file (NUL bytes)"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        problem = f"invalid UTF-8 at byte {exc.start}: indexed with replacement characters"
        return data.decode("utf-8", "replace"), problem


class _Writer:
    def __init__(self, conn: sqlite3.Connection, root: Path, cfg: IndexConfig) -> None:
        self.conn, self.root, self.cfg = conn, root, cfg
        self.counts = _Counts()
        row = conn.execute("SELECT max(id) FROM chunks").fetchone()
        self.next_id = int(row[0] or 0) + 1

    def known(self) -> dict[str, _Known]:
        rows = self.conn.execute("SELECT path, id, mtime_ns, size, hash FROM files")
        return {p: _Known(i, (m, s), h) for p, i, m, s, h in rows}  # ~0.1 s per 100,000 notes

    def known_one(self, rel: str) -> _Known | None:
        row = self.conn.execute(
            "SELECT id, mtime_ns, size, hash FROM files WHERE path = ?", (rel,)
        ).fetchone()
        return None if row is None else _Known(row[0], (row[1], row[2]), row[3])

    def prune(self, known: _Known | None) -> None:
        if known is None:
            return
        self._drop_chunks(known.id)
        self.conn.execute("DELETE FROM files WHERE id = ?", (known.id,))
        self.counts.pruned += 1

    def _drop_chunks(self, file_id: int) -> None:
        self.conn.execute(
            "DELETE FROM fts WHERE rowid IN (SELECT id FROM chunks WHERE file_id = ?)", (file_id,)
        )
        self.conn.execute("DELETE FROM chunks WHERE file_id = ?", (file_id,))

    def process(self, rel: str, st: Stat, known: _Known | None, force: bool) -> None:
        if not force and known is not None and known.stat == st:
            self.counts.unchanged += 1
            return
        self.apply(examine(self.root, rel, st, None if known is None else known.hash, force), known)

    def apply(self, seen: Examined, known: _Known | None) -> None:
        """Record what ``examine`` found about one note."""
        if seen.kind == "same" and known is not None:
            self.conn.execute("UPDATE files SET mtime_ns = ?, size = ? WHERE id = ?", (*seen.stat, known.id))
            self.counts.unchanged += 1
        elif seen.kind == "note" and seen.rows is not None:
            if seen.problem:
                self.counts.degraded.append((seen.rel, seen.problem))
            self._store(seen, known)
        else:
            self.counts.skipped.append((seen.rel, seen.problem))
            self.prune(known)

    def _store(self, seen: Examined, known: _Known | None) -> None:
        assert seen.rows is not None
        kind = seen.type or self.cfg.type_of(seen.rel)
        values = (*seen.stat, seen.digest, seen.title, kind, seen.problem)
        if known is None:
            cur = self.conn.execute(
                "INSERT INTO files (mtime_ns, size, hash, title, type, problem, path) VALUES (?,?,?,?,?,?,?)",
                (*values, seen.rel),
            )
            file_id = int(cur.lastrowid or 0)
        else:
            file_id = known.id
            self._drop_chunks(file_id)
            self.conn.execute(
                "UPDATE files SET mtime_ns=?, size=?, hash=?, title=?, type=?, problem=? WHERE id=?",
                (*values, file_id),
            )
        first = self.next_id
        self.next_id += len(seen.rows)
        self.conn.executemany(
            "INSERT INTO chunks (id, file_id, heading, line) VALUES (?,?,?,?)",
            [(first + k, file_id, r[0], r[1]) for k, r in enumerate(seen.rows)],
        )
        self.conn.executemany(
            "INSERT INTO fts (rowid, title, heading, links, tags, body, cjk) VALUES (?,?,?,?,?,?,?)",
            [(first + k, *r[2:]) for k, r in enumerate(seen.rows)],
        )
        self.counts.chunks += len(seen.rows)
        self.counts.indexed += 1


@dataclass(slots=True)
class Examined:
    rel: str
    stat: Stat
    kind: Literal["same", "note", "skip"]
    digest: str = ""
    title: str = ""
    type: str | None = None  # from the frontmatter
    rows: list[ChunkRow] | None = None
    problem: str = ""  # the skip reason, or what was wrong with a note indexed anyway


def examine(root: Path, rel: str, st: Stat, known_hash: str | None, force: bool) -> Examined:
    """Read, hash and parse one note (pure: no database; runs in worker processes too)."""
    try:
        data = _read(root / rel)
    except (OSError, ValueError) as exc:
        reason = LINK_REASON if getattr(exc, "errno", None) == errno.ELOOP else _why(exc)
        return Examined(rel, st, "skip", problem=reason)
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    if not force and known_hash == digest:
        return Examined(rel, st, "same", digest)
    text, problem = decode(data)
    if text is None:
        return Examined(rel, st, "skip", problem=problem)
    if deleted(text):  # issue 30: a soft-deleted note is no reader's (shardpy.notes.visibility)
        return Examined(rel, st, "skip", problem=DELETED_REASON)
    note = parse_note(rel.rsplit("/", 1)[-1].rsplit(".", 1)[0], text)
    return Examined(rel, st, "note", digest, note.title, note.type, chunk_rows(note), problem or note.problem)


ChunkRow = tuple[str, int, str, str, str, str, str, str]  # heading key, line, then the six FTS columns


def chunk_rows(note: Note) -> list[ChunkRow]:
    """What the index stores for each chunk of a note (built where the note was parsed)."""
    base_tags = " ".join([*note.tags, *note.aliases])
    rows = []
    for seq, chunk in enumerate(note.chunks):
        heading = " / ".join(chunk.heading)
        tags = " ".join(filter(None, [base_tags, *chunk.tags, note.description if seq == 0 else ""]))
        cjk = cjk_column(note.title, heading, chunk.text, tags)
        key = "\x1f".join(chunk.heading)
        rows.append(
            (
                key,
                note.first_line + chunk.start,
                note.title,
                heading,
                " ".join(chunk.links),
                tags,
                chunk.text,
                cjk,
            )
        )
    return rows


Batch = list[tuple[str, Stat, "str | None"]]


def _examine_batch(work: tuple[Path, bool], batch: Batch) -> list[Examined]:
    root, force = work
    return [examine(root, rel, st, known_hash, force) for rel, st, known_hash in batch]


def _why(exc: OSError | ValueError) -> str:
    if isinstance(exc, OSError):
        return f"not readable: {exc.strerror or exc}"
    return f"too large: {exc}"


def _normalise(rel: str, root: Path) -> str:
    """A vault-relative POSIX path from what a caller passed (absolute paths inside the vault too)."""
    if os.path.isabs(rel):
        real = os.path.realpath(os.path.dirname(rel))
        inside = os.path.relpath(os.path.join(real, os.path.basename(rel)), root)
        rel = inside if not inside.startswith("..") else rel
    rel = rel.replace(os.sep, "/")
    while rel.startswith("./"):
        rel = rel[2:]
    return rel


def _refresh_only(w: _Writer, only: Sequence[str], force: bool) -> None:
    for raw in only:
        rel = _normalise(raw, w.root)
        if not utf8_name(rel):
            # SQLite cannot bind the name (a traceback from the write hook's `index --only`;
            # helper-found): skipped with the reason a whole refresh gives it.
            w.counts.skipped.append((printable(rel), NAME_REASON))
            continue
        st, reason = check_one(w.root, rel, w.cfg)
        known = w.known_one(rel)
        if st is None:
            w.prune(known)
            if reason:
                w.counts.skipped.append((rel, reason))
            continue
        w.process(rel, st, known, force)


def _refresh_all(w: _Writer, force: bool, progress: Progress | None) -> None:
    walked_at = time.time()  # before the walk: a folder changed while walking is stale next time
    folders: list[str] = []
    found, skipped = walk(w.root, w.cfg, folders)
    # What a search stats to see notes added, removed or renamed since (searcher._tree_changed).
    store.set_meta(w.conn, "walked_at", repr(walked_at))
    store.set_meta(w.conn, "folders", json.dumps(folders[: store.MAX_WATCHED_FOLDERS]))
    w.counts.skipped.extend(skipped)
    known = {} if force else w.known()  # a full refresh starts from a fresh, empty file
    for rel in known.keys() - found.keys():
        w.prune(known[rel])
    todo = [rel for rel, st in found.items() if force or rel not in known or known[rel].stat != st]
    w.counts.unchanged += len(found) - len(todo)
    done = 0
    for results in _examined(w.root, todo, found, known, force):
        for seen in results:
            w.apply(seen, known.get(seen.rel))
        done += len(results)
        if done // COMMIT_EVERY != (done - len(results)) // COMMIT_EVERY:
            w.conn.execute("COMMIT")
            w.conn.execute("BEGIN")
        if progress is not None:
            progress(done, len(todo))


def _examined(
    root: Path, todo: list[str], found: dict[str, Stat], known: dict[str, _Known], force: bool
) -> Iterator[list[Examined]]:
    """``examine`` of every note in ``todo``, batch by batch, in order; in worker processes
    (reading and parsing beside this process's inserts) when there are many."""

    def batches() -> Iterator[Batch]:
        for lo in range(0, len(todo), BATCH):
            yield [
                (rel, found[rel], known[rel].hash if rel in known else None) for rel in todo[lo : lo + BATCH]
            ]

    workers = 1
    if len(todo) >= PARALLEL_MIN:
        from shardpy.workers import available_workers

        workers = available_workers()
    if workers <= 1:
        for batch in batches():
            yield _examine_batch((root, force), batch)
        return
    from shardpy.workers import run_stream

    yield from run_stream((root, force), batches(), workers, _examine_batch)


def refresh(
    vault: Path,
    *,
    full: bool = False,
    only: Sequence[str] | None = None,
    progress: Progress | None = None,
    lock_wait: float = store.LOCK_WAIT_SECONDS,
) -> RefreshReport:
    started = time.perf_counter()
    root = resolve_vault(vault)
    db = store.index_path(root)
    cfg = IndexConfig.for_vault(root)
    with store.writer_lock(db, wait=lock_wait) as got:
        if not got:
            raise store.locked_error(db)
        conn, notices = store.open_for_write(db, str(root))
        if only is None and not full and _types_changed(conn, cfg):
            full = True  # a folder convention changed: every stored note type may be stale
            notices.append("index rebuilt: the vault manifest's note types changed")
        if only is None and full:
            # A fresh file is much faster than deleting every row (readers keep the old one open).
            conn.close()
            store.remove(db)
            conn, _ = store.open_for_write(db, str(root))
        try:
            return _run(conn, root, cfg, full, only, progress, notices, db, started)
        except sqlite3.OperationalError as exc:  # the disk full, the file unwritable: typed
            raise store.write_failed(db, exc) from None
        except OSError as exc:  # the vector file beside it
            if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            raise store.write_failed(db, exc) from None
        finally:
            conn.close()


def _types_changed(conn: sqlite3.Connection, cfg: IndexConfig) -> bool:
    built = store.get_meta(conn, "refreshed_at") is not None
    return built and store.get_meta(conn, "config") != cfg.fingerprint()


def _run(
    conn: sqlite3.Connection,
    root: Path,
    cfg: IndexConfig,
    full: bool,
    only: Sequence[str] | None,
    progress: Progress | None,
    notices: list[str],
    db: Path,
    started: float,
) -> RefreshReport:
    w = _Writer(conn, root, cfg)
    conn.execute("BEGIN")
    try:
        if only is not None:
            _refresh_only(w, only, full)
        else:
            _refresh_all(w, full, progress)
            store.set_meta(conn, "refreshed_at", repr(time.time()))
            store.set_meta(conn, "config", cfg.fingerprint())
            store.set_meta(conn, "rules", cfg.rules_fingerprint())
        # Vectors in the same transaction and under the same lock as the FTS rows (docs/SEARCH.md).
        vectors.after_refresh(conn, bool(w.counts.indexed or w.counts.pruned), notices)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:  # SQLite rolled back itself on some errors (SQLITE_FULL)
            conn.execute("ROLLBACK")
        raise
    notes, chunks = conn.execute(
        "SELECT (SELECT count(*) FROM files), (SELECT count(*) FROM chunks)"
    ).fetchone()
    c = w.counts
    return RefreshReport(
        indexed=c.indexed,
        unchanged=c.unchanged,
        pruned=c.pruned,
        chunks=c.chunks,
        seconds=time.perf_counter() - started,
        skipped=c.skipped,
        degraded=c.degraded,
        notices=notices,
        total_notes=notes,
        total_chunks=chunks,
        db=str(db),
    )
