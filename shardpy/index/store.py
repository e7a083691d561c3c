"""The index database: where it lives, its schema, opening it safely, one writer at a time.

One SQLite file per vault under the user cache folder (never inside the
vault, so git and Obsidian sync never see it), named after the vault folder
plus a hash of its real path. WAL journal: readers never wait for a refresh.
The file carries an application id, a schema version and the vault's real
path; a file that is corrupt, foreign, of another schema or of another vault
is deleted and rebuilt, with a notice, never trusted.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import re
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

from shardpy.cachedir import cache_dir
from shardpy.errors import ShardpyError
from shardpy.fsutil import flock_within, low_space, printable, sha256_bytes

APPLICATION_ID = 0x53485058  # "SHPX"
SCHEMA_VERSION = 2
WEIGHTS = (5.0, 3.0, 2.0, 2.0, 1.0, 1.0)  # title, heading, links, tags, body, cjk
TOKENIZER = "porter unicode61 remove_diacritics 2"
LOCK_WAIT_SECONDS = 30.0
READERS_KEPT = 8  # open read connections kept per process (a server searching a few vaults)
READ_CACHE_KIB = 65_536  # page cache of a kept reader: the hot doclists stay in memory between searches

_SCHEMA = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE files (
    id INTEGER PRIMARY KEY,
    path TEXT NOT NULL UNIQUE,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    hash TEXT NOT NULL,
    title TEXT NOT NULL,
    type TEXT,
    problem TEXT NOT NULL DEFAULT ''
);
CREATE INDEX files_type ON files(type);
CREATE TABLE chunks (
    id INTEGER PRIMARY KEY,
    file_id INTEGER NOT NULL,
    heading TEXT NOT NULL,
    line INTEGER NOT NULL
);
CREATE INDEX chunks_file ON chunks(file_id);
CREATE VIRTUAL TABLE fts USING fts5(
    title, heading, links, tags, body, cjk, tokenize = '{TOKENIZER}'
);
INSERT INTO fts (fts, rank) VALUES ('rank', 'bm25({", ".join(map(str, WEIGHTS))})');
"""


def resolve_vault(vault: Path) -> Path:
    path = Path(vault).expanduser()
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a folder"
        raise ShardpyError(
            "INDEX_NO_VAULT",
            # The path names the vault: the server shows it as "the vault" (serve/redact.py).
            f"{vault} {what}",
            "Give the folder of Markdown notes to index (--vault DIR, or run inside it).",
            path=str(vault),
        )
    return Path(os.path.realpath(path))


def index_path(vault: Path) -> Path:
    """The SQLite file for this vault (keyed by its real path; never inside the vault)."""
    real = os.path.realpath(vault)
    digest = sha256_bytes(real.encode("utf-8", "surrogateescape"))[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(real).name).strip("-.")[:40] or "vault"
    return cache_dir() / "index" / f"{name}-{digest}.sqlite3"


# A search stats at most this many folders (the first walked: the root and the top levels); a vault
# with more is walked at each refresh interval (searcher._notes_unchanged).
MAX_WATCHED_FOLDERS = 5_000


def connect(db: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(db, timeout=10.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 10000")
    return conn


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def check(conn: sqlite3.Connection, vault_real: str) -> str | None:
    """Why the open database cannot be used as this vault's index (None when it can)."""
    try:
        app_id = conn.execute("PRAGMA application_id").fetchone()[0]
        if app_id != APPLICATION_ID:
            return "the file was not a shardpy index"
        meta = _meta(conn)
    except sqlite3.DatabaseError:
        return "the file was corrupt"
    if meta.get("schema") != str(SCHEMA_VERSION):
        return "schema changed"
    if meta.get("vault") != printable(vault_real):
        return "the file belonged to another vault"
    return None


def remove(db: Path) -> None:
    """Delete the index file and its journal (safe: it is only a cache)."""
    for suffix in ("", "-wal", "-shm", ".vectors"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{db}{suffix}")


def _create(db: Path, vault_real: str) -> sqlite3.Connection:
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.executescript(_SCHEMA)
    # Written last: a file interrupted while being created reads as "schema changed" and is rebuilt.
    conn.execute("BEGIN")
    # Printable: a vault below a folder named in bytes that are not UTF-8 could not be stored (the
    # file's own name keeps them: index_path; tests/hardening/test_odd_names.py).
    conn.execute("INSERT INTO meta VALUES ('vault', ?)", (printable(vault_real),))
    conn.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute("COMMIT")
    return conn


def write_failed(db: Path, exc: OSError | sqlite3.Error) -> ShardpyError:
    """Writing the index failed (the one classification): DISK_FULL when its disk is full
    (SQLite's SQLITE_FULL, the system's ENOSPC/EDQUOT, or fsutil.low_space), else
    INDEX_UNWRITABLE (tests/index/test_full_disk.py)."""
    said = getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL or getattr(exc, "errno", None) in (
        errno.ENOSPC,
        errno.EDQUOT,
    )
    if said or low_space(db):  # SQLite says "disk I/O error" when its WAL index cannot grow
        return ShardpyError(
            "DISK_FULL",
            f"Cannot write the search index {db}: the disk is full",
            "Free some space on the disk that holds it, or point SHARDPY_CACHE_DIR at another disk. "
            "The index is a cache: nothing in the vault changed.",
        )
    return ShardpyError(
        "INDEX_UNWRITABLE",
        f"Cannot write the search index {db}: {exc}",
        "Make the cache folder writable, or point SHARDPY_CACHE_DIR at a writable folder.",
    )


def open_for_write(db: Path, vault_real: str) -> tuple[sqlite3.Connection, list[str]]:
    """The index, created or rebuilt as needed (call with the writer lock held)."""
    notices: list[str] = []
    if db.exists():
        try:
            conn = connect(db)
            why = check(conn, vault_real)
        except sqlite3.DatabaseError:
            why = "the file was corrupt"
            conn = None
        if why is None and conn is not None:
            _tune(conn)
            return conn, notices
        if conn is not None:
            conn.close()
        notices.append(f"index rebuilt: {why}")
        remove(db)
    try:
        conn = _create(db, vault_real)
    except (OSError, sqlite3.Error) as exc:
        raise write_failed(db, exc) from None
    _tune(conn)
    return conn, notices


def _tune(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")  # WAL + NORMAL: durable to the last checkpoint
    conn.execute("PRAGMA cache_size = -32000")


def open_for_read(db: Path, vault_real: str) -> sqlite3.Connection | None:
    """The index when it exists and is this vault's, of this schema; else None."""
    if not db.exists():
        return None
    opened: sqlite3.Connection | None
    try:
        conn = connect(db)
    except sqlite3.DatabaseError:
        return None
    try:
        conn.execute("PRAGMA application_id").fetchone()  # a WAL file needs its -shm to be read
    except sqlite3.OperationalError:
        conn.close()
        opened = _read_only_copy(db, vault_real)
    except sqlite3.DatabaseError:
        conn.close()
        return None
    else:
        if check(conn, vault_real) is not None:
            conn.close()
            return None
        opened = conn
    if opened is not None:
        opened.execute(f"PRAGMA cache_size = -{READ_CACHE_KIB}")
    return opened


def _read_only_copy(db: Path, vault_real: str) -> sqlite3.Connection | None:
    """The index in a folder this process may not write, opened as it is. A WAL database needs
    its ``-shm`` file to be read, and a cache left read-only after a clean close has none: every
    search failed with INDEX_UNWRITABLE where a built index should answer, stale, with a notice
    (a helper's probe; tests/hardening/test_read_only_mount.py). Opened immutable: in a folder
    nobody here can write, no writer can change it underneath."""
    if os.access(db.parent, os.W_OK):
        return None  # a writable folder: the failure is another one
    from urllib.parse import quote

    try:
        uri = f"file:{quote(str(db))}?mode=ro&immutable=1"
        conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        if check(conn, vault_real) is not None:
            conn.close()
            return None
    except sqlite3.DatabaseError:
        return None
    return conn


def _file_id(db: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(db)
    except OSError:
        return None
    return st.st_dev, st.st_ino


_Kept = tuple[tuple[int, int], sqlite3.Connection, threading.Lock]  # file id, connection, in use


class _Readers:
    """Read connections kept open between searches of one process (an MCP server, a bench): a
    fresh connection starts with an empty page cache and re-reads the schema. A kept one is
    used again only while the file is the same one (a rebuilt index is a new file) and still
    passes :func:`check`; one thread uses it at a time (another opens its own)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._kept: OrderedDict[str, _Kept] = OrderedDict()

    def _take(self, db: Path, vault_real: str) -> tuple[sqlite3.Connection, threading.Lock] | None:
        key = str(db)
        with self._lock:
            kept = self._kept.get(key)
            if kept is None:
                return None
            self._kept.move_to_end(key)
        same, conn, busy = kept
        if not busy.acquire(blocking=False):
            return None
        try:
            if _file_id(db) == same and check(conn, vault_real) is None:
                return conn, busy
        except sqlite3.Error:
            pass
        self._forget(key, conn)
        busy.release()
        return None

    def _forget(self, key: str, conn: sqlite3.Connection) -> None:
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[1] is conn:
                del self._kept[key]
        conn.close()

    def _keep(self, db: Path, conn: sqlite3.Connection) -> threading.Lock | None:
        same = _file_id(db)
        if same is None:
            return None
        busy = threading.Lock()
        busy.acquire()
        with self._lock:
            if str(db) in self._kept:
                return None  # another thread kept one meanwhile: this one is private
            self._kept[str(db)] = (same, conn, busy)
            while len(self._kept) > READERS_KEPT:
                _key, (_same, old, old_busy) = self._kept.popitem(last=False)
                if old_busy.acquire(blocking=False):
                    old.close()
                    old_busy.release()
        return busy

    @contextlib.contextmanager
    def reader(self, db: Path, vault_real: str) -> Iterator[sqlite3.Connection | None]:
        taken = self._take(db, vault_real)
        if taken is not None:
            try:
                yield taken[0]
            finally:
                taken[1].release()
            return
        conn = open_for_read(db, vault_real)
        if conn is None:
            yield None
            return
        busy = self._keep(db, conn)
        try:
            yield conn
        finally:
            if busy is None:
                conn.close()
            else:
                busy.release()


_READERS = _Readers()


def reader(db: Path, vault_real: str) -> contextlib.AbstractContextManager[sqlite3.Connection | None]:
    """A read connection to the index (kept for the next search of this process), or None when
    there is no usable index."""
    return _READERS.reader(db, vault_real)


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def set_meta(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))


@contextlib.contextmanager
def writer_lock(db: Path, *, wait: float = LOCK_WAIT_SECONDS) -> Iterator[bool]:
    """Hold the index's writer lock (a ``flock`` on ``<db>.lock``); yields False when
    ``wait`` ran out (``wait=0``: do not wait at all)."""
    try:
        db.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(f"{db}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise write_failed(db, exc) from None
    try:
        if not flock_within(fd, wait, poll=0.02):
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def locked_error(db: Path) -> ShardpyError:
    return ShardpyError(
        "INDEX_LOCKED",
        f"Another process is refreshing the search index {db.name}",
        "Wait for it to finish (it holds the index's lock), then run this command again.",
    )
