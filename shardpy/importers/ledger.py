"""The import records: what each source record last became in the vault.

One SQLite file, ``.shardmind/imports/ledger.sqlite3``, keyed by (format,
into, source_path). Per record it keeps the source hash, the vault path, a
render key (source hash + link decisions: equal keys mean the import would
write the same note again), the exact bytes the import last rendered (the
three-way merge base) and the hash of what was actually written (the two
differ only after a merge or conflict markers).

A dry run opens it read-only and never creates it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.vault.layout import IMPORTS as IMPORTS_DIR

LEDGER_NAME = "ledger.sqlite3"

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
  format TEXT NOT NULL,
  into_dir TEXT NOT NULL,
  source_path TEXT NOT NULL,
  kind TEXT NOT NULL,
  target TEXT NOT NULL,
  target_cf TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  render_key TEXT NOT NULL,
  base_sha TEXT NOT NULL,
  base BLOB,
  written_sha TEXT NOT NULL,
  written BLOB,
  run_id TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (format, into_dir, source_path)
);
CREATE INDEX IF NOT EXISTS records_target ON records (target_cf);
"""


@dataclass(frozen=True, slots=True)
class Entry:
    kind: str
    target: str
    source_hash: str
    render_key: str
    base_sha: str
    written_sha: str


def ledger_path(vault: Path) -> Path:
    return vault / IMPORTS_DIR / LEDGER_NAME


def ledger_corrupt() -> ShardpyError:
    rel = f"{IMPORTS_DIR}/{LEDGER_NAME}"
    return ShardpyError(
        "IMPORT_LEDGER_CORRUPT",
        f"The import records ({rel}) cannot be read: the file is damaged or not a database",
        f"Restore it from a backup, or move it aside (mv {rel} {rel}.damaged): the next import then "
        "treats every record as new and never overwrites a note that differs from what it would write.",
        path=rel,
    )


def check_ledger(conn: sqlite3.Connection) -> None:
    """Read the whole file once (a damaged page fails here, with a typed error, not mid-import)."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
        conn.execute("SELECT COUNT(*) FROM records").fetchone()
    except sqlite3.Error:
        raise ledger_corrupt() from None
    if rows != [("ok",)]:
        raise ledger_corrupt()


class Ledger:
    """Read access (and, for apply, the final upsert) to the import records."""

    def __init__(self, conn: sqlite3.Connection | None) -> None:
        self._conn = conn

    @classmethod
    def open_readonly(cls, vault: Path) -> Ledger:
        path = ledger_path(vault)
        if not path.is_file():
            return cls(None)
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            check_ledger(conn)
        except ShardpyError:
            conn.close()
            raise
        return cls(conn)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def get(self, fmt: str, into: str, source_path: str) -> Entry | None:
        if self._conn is None:
            return None
        row = self._conn.execute(
            "SELECT kind, target, source_hash, render_key, base_sha, written_sha FROM records"
            " WHERE format=? AND into_dir=? AND source_path=?",
            (fmt, into, source_path),
        ).fetchone()
        return None if row is None else Entry(*row)

    def base(self, fmt: str, into: str, source_path: str) -> bytes | None:
        if self._conn is None:
            return None
        row = self._conn.execute(
            "SELECT base FROM records WHERE format=? AND into_dir=? AND source_path=?",
            (fmt, into, source_path),
        ).fetchone()
        return None if row is None else row[0]

    def owners(self, target: str) -> list[tuple[str, str, str]]:
        """(format, into, source_path) of every record whose note is ``target`` (case-insensitively)."""
        if self._conn is None:
            return []
        rows = self._conn.execute(
            "SELECT format, into_dir, source_path FROM records WHERE target_cf=?", (target.casefold(),)
        ).fetchall()
        return [(r[0], r[1], r[2]) for r in rows]

    def targets(self) -> set[str]:
        if self._conn is None:
            return set()
        return {r[0] for r in self._conn.execute("SELECT target FROM records")}

    def keys(self, fmt: str, into: str) -> Iterator[tuple[str, str]]:
        if self._conn is None:
            return
        yield from self._conn.execute(
            "SELECT source_path, target FROM records WHERE format=? AND into_dir=? ORDER BY source_path",
            (fmt, into),
        )


@contextmanager
def recording(
    conn: sqlite3.Connection, vault: Path, *, fmt: str, into: str, run_id: str, now: str
) -> Iterator[None]:
    """Stage a finished run's records in the ledger (``apply.batch.complete``'s recorder).

    The ledger is attached to the run journal's connection and every step
    written (or found already written) becomes the record of its source; the
    caller's commit inside the block makes records and run state durable
    together. A damaged ledger is a typed error: the notes are written and
    the run stays resumable, recording them once the ledger is fixed.
    """
    lpath = ledger_path(vault)
    try:
        with closing(sqlite3.connect(lpath)) as lconn:
            lconn.executescript(SCHEMA)
            lconn.commit()
        conn.create_function("casefold", 1, str.casefold, deterministic=True)
        conn.execute("ATTACH DATABASE ? AS ledger", (str(lpath),))
        try:
            conn.execute(
                "INSERT OR REPLACE INTO ledger.records (format, into_dir, source_path, kind, target,"
                " target_cf, source_hash, render_key, base_sha, base, written_sha, written, run_id,"
                " updated_at)"
                " SELECT ?, ?, source_path, kind, target, casefold(target), source_hash, render_key,"
                " base_sha, CASE WHEN kind = 'note' THEN COALESCE(base, new) END, new_sha,"
                " CASE WHEN base IS NOT NULL THEN new END, ?, ?"
                " FROM steps JOIN progress p USING (idx) WHERE p.outcome IN ('written', 'already')",
                (fmt, into, run_id, now),
            )
            yield
        finally:
            conn.execute("DETACH DATABASE ledger")
    except sqlite3.DatabaseError:
        raise ledger_corrupt() from None
