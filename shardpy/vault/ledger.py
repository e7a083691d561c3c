"""The import records: what each source record last became in the vault.

One SQLite file, ``.shardmind/imports/ledger.sqlite3``, keyed by (format,
into, source_path). Per record it keeps the source hash, the vault path, a
render key (source hash + link decisions: equal keys mean the import would
write the same note again), the exact bytes the import last rendered (the
three-way merge base) and the hash of what was actually written (the two
differ only after a merge or conflict markers).

A dry run opens it read-only and never creates it.

The file is synced between machines by git (``shardpy git setup``), so what
is on disk may come from another machine: it is untrusted input, read like a
journal (docs/SECURITY.md). :func:`open_untrusted` is the one way any
command (the importer, the git merge driver) opens it: read-only, its schema
exactly ours (a view or trigger would run SQL of the file's choosing; a
recursive view hung the merge driver), its work bounded. :meth:`Ledger.keys`
(the records an import writes again) checks each record it returns: a
target is a plain path inside the record's own import folder, never ``..``,
absolute or in a dot-folder (a pulled record aimed at ``../outside/pwned.md``
made ``import --apply`` overwrite that file). A record breaking a rule
refuses the ledger as a whole, naming the records, before the plan is made
and so before anything is written: a silently dropped record would let the
run claim that note afresh and hide that the file was tampered with.
Links on the way are refused where the vault is touched, note by note (the
planner's parent check, the writer's no-follow folder walk).
(tests/security/test_pulled_ledger.py)
"""

from __future__ import annotations

import functools
import os
import sqlite3
import stat
import urllib.parse
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.vault.layout import IMPORTS as IMPORTS_DIR

LEDGER_NAME = "ledger.sqlite3"

# One transaction: executescript runs each statement in its own otherwise, and a kill between the two
# left a table without its index (tests/importers/test_ledger_schema.py).
SCHEMA = """
BEGIN;
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
COMMIT;
"""
# Objects a ledger may lack: only a lookup is slower without them, and a ledger made before SCHEMA
# was one transaction may lack the index if its making was killed; the next record makes it.
OPTIONAL = frozenset({"records_target"})


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


LEDGER_REL = f"{IMPORTS_DIR}/{LEDGER_NAME}"
# Bounds on reading an untrusted ledger: SQLite virtual-machine steps (counted by the progress
# handler every PROGRESS_EVERY steps; a real ledger needs a few dozen per record, so this allows
# well over MAX_RECORDS records read several times over) and records.
PROGRESS_EVERY = 1000
MAX_STEPS = 2_000_000_000
MAX_RECORDS = 5_000_000


def ledger_corrupt() -> ShardpyError:
    rel = LEDGER_REL
    return ShardpyError(
        "IMPORT_LEDGER_CORRUPT",
        f"The import records ({rel}) cannot be read: the file is damaged or not a database",
        f"Restore it from a backup, or move it aside (mv {rel} {rel}.damaged): the next import then "
        "treats every record as new and never overwrites a note that differs from what it would write.",
        path=rel,
    )


def ledger_invalid(problems: list[str]) -> ShardpyError:
    """The ledger breaks a rule (its schema, a record): refused as a whole, nothing written."""
    rel = LEDGER_REL
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return ShardpyError(
        "IMPORT_LEDGER_INVALID",
        f"Refusing the import records ({rel}): " + "; ".join(problems[:3]) + more + ". Nothing was changed",
        "shardpy did not write this (it came with a pull, a copy or an edit). Restore the file from a "
        f"commit before it changed (git log -- {rel}), or move it aside (mv {rel} {rel}.refused): the "
        "next import then treats every record as new and never overwrites a note that differs.",
        path=rel,
        details={"problems": problems[:20]},
    )


@functools.cache
def _our_schema() -> tuple[tuple[str, str, str, str | None], ...]:
    """sqlite_master as SCHEMA makes it: (type, name, table, sql) of every object."""
    with closing(sqlite3.connect(":memory:")) as conn:
        conn.executescript(SCHEMA)
        return tuple(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"))


class _Budget:
    """The progress handler bounding one connection's work: a non-zero answer interrupts the query."""

    def __init__(self, steps: int) -> None:
        self.left = steps // PROGRESS_EVERY

    def __call__(self) -> int:
        self.left -= 1
        return 1 if self.left < 0 else 0


def _regular(path: Path) -> None:
    """``path`` is a regular file: a link there is refused, never followed."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise ledger_corrupt() from exc
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        raise ledger_invalid([f"{path.name} is not a regular file (a link or a folder)"])


def _settle(path: Path) -> None:
    """Roll back what a recording killed half-way left (a hot ``-journal`` beside the ledger, never
    synced by git), which a read-only connection cannot: before a run records again."""
    _regular(path)
    try:
        with closing(sqlite3.connect(path)) as conn:
            conn.execute("PRAGMA trusted_schema = OFF")
            conn.execute("PRAGMA schema_version").fetchone()
    except sqlite3.Error:
        raise ledger_corrupt() from None


def _connect_ro(path: Path, *, immutable: bool) -> sqlite3.Connection:
    """A read-only connection to the regular file ``path`` (a link there is refused, never followed)."""
    _regular(path)
    mode = "?mode=ro&immutable=1" if immutable else "?mode=ro"
    uri = "file:" + urllib.parse.quote(os.fspath(path)) + mode
    try:
        conn = sqlite3.connect(uri, uri=True)
    except sqlite3.Error:
        raise ledger_corrupt() from None
    # Nothing of the file's choosing runs: no function named in its schema, no writes, no extension.
    conn.execute("PRAGMA trusted_schema = OFF")
    conn.execute("PRAGMA query_only = ON")
    conn.set_progress_handler(_Budget(MAX_STEPS), PROGRESS_EVERY)
    return conn


def open_untrusted(path: Path, *, immutable: bool = False) -> sqlite3.Connection | None:
    """A read-only connection to a ledger that may come from anywhere (a pull, a merge), or None
    when it holds no table at all (an empty ledger).

    The one gate (the importer and the git merge driver both open ledgers here): the file is a
    regular file, undamaged, its schema exactly :data:`SCHEMA` (no view, trigger or other table: a
    pulled view recursing forever hung the merge driver), at most :data:`MAX_RECORDS` records, and
    every query on the connection is bounded (:data:`MAX_STEPS`). ``immutable``: the file cannot
    change while read (git's temporary copies), so SQLite takes no lock and makes no file beside it.
    Raises ``IMPORT_LEDGER_CORRUPT`` or ``IMPORT_LEDGER_INVALID``.
    """
    conn = _connect_ro(path, immutable=immutable)
    try:
        found = _schema_of(conn)
        if not found:
            conn.close()
            return None
        problems = _schema_problems(found)
        if problems:
            raise ledger_invalid(problems)
        count = _count(conn)
        if count > MAX_RECORDS:
            raise ledger_invalid([f"it holds {count} records (at most {MAX_RECORDS})"])
    except BaseException:
        conn.close()
        raise
    return conn


def _schema_of(conn: sqlite3.Connection) -> tuple[tuple[str, str, str, str | None], ...]:
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
        if rows != [("ok",)]:
            raise ledger_corrupt()
        return tuple(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY name"))
    except sqlite3.Error:
        raise ledger_corrupt() from None


def _schema_problems(found: tuple[tuple[str, str, str, str | None], ...]) -> list[str]:
    ours = {row[1]: row for row in _our_schema()}
    problems = [
        f"it has a {kind} {name!r} shardpy never makes"
        if name not in ours
        else f"{name!r} is a {kind}, not shardpy's {ours[name][0]}"
        if kind != ours[name][0]
        else f"its {kind} {name!r} is not shardpy's"
        for kind, name, table, sql in found
        if ours.get(name) != (kind, name, table, sql)
    ]
    have = {row[1] for row in found}
    problems += [
        f"it lacks the {kind} {name!r}"
        for kind, name, _, _ in ours.values()
        if name not in have and name not in OPTIONAL
    ]
    return problems


def _count(conn: sqlite3.Connection) -> int:
    try:
        return int(conn.execute("SELECT COUNT(*) FROM records").fetchone()[0])
    except sqlite3.OperationalError as exc:
        if "interrupted" in str(exc):
            raise ledger_invalid(["reading it took more work than any ledger needs"]) from None
        raise ledger_corrupt() from None
    except sqlite3.Error:
        raise ledger_corrupt() from None


def record_problem(into_dir: object, target: object) -> str:
    """Why a record's (import folder, vault path) breaks the ledger's rules, or ''.

    The folder is what ``--into`` accepts (plain, relative, no dot-folder) and the target a
    normalised path strictly inside it: an import writes only there.
    """
    if not isinstance(into_dir, str) or not isinstance(target, str):
        return "its folder or target is not text"
    for value in (into_dir, target):
        if not _plain(value):
            return f"{value!r} is not a plain, normalised path inside the vault outside hidden folders"
    if not target.startswith(into_dir + "/"):
        return f"its target {target!r} is outside its import folder {into_dir!r}"
    return ""


def _plain(rel: str) -> bool:
    """Relative, normalised, no ``..``, backslash or NUL, no part starting with a dot (``.git``,
    ``.shardmind``, ``.``): fsutil.rel_parts' rules and more, in C-speed string tests (the
    records an import writes again are checked at every run: 100,000 of them at a large vault)."""
    return (
        bool(rel)
        and not rel.startswith(("/", "."))
        and not rel.endswith("/")
        and "//" not in rel
        and "/." not in rel
        and "\\" not in rel
        and "\0" not in rel
    )


class Ledger:
    """Read access (and, for apply, the final upsert) to the import records."""

    def __init__(self, conn: sqlite3.Connection | None) -> None:
        self._conn = conn

    @classmethod
    def open_readonly(cls, vault: Path) -> Ledger:
        """The ledger through :func:`open_untrusted`; none when there is no file."""
        path = ledger_path(vault)
        if not os.path.lexists(path):
            return cls(None)
        if os.path.isfile(f"{path}-journal"):
            # A run killed while recording left a hot journal the read-only gate cannot roll back
            # (it read as damaged: tests/importers/test_resume.py::test_kill_at_random_points_then_resume);
            # rolled back first, as recovery comes before planning.
            _settle(path)
        return cls(open_untrusted(path))

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

    def keys(self, fmt: str, into: str) -> list[tuple[str, str]]:
        """(source path, vault path) of this format and folder's records: the paths an import
        writes again, so each is checked here (:func:`record_problem`), all before the first is
        used; one breaking a rule refuses the ledger (``IMPORT_LEDGER_INVALID``)."""
        if self._conn is None:
            return []
        rows: list[tuple[str, str]] = self._conn.execute(
            "SELECT source_path, target FROM records WHERE format=? AND into_dir=? ORDER BY source_path",
            (fmt, into),
        ).fetchall()
        prefix = into + "/" if _plain(into) else "\0"  # an unsafe folder: every record is refused
        problems = [
            f"record ({fmt}, {into}, {source_path}): {record_problem(into, target)}"
            for source_path, target in rows
            if not (isinstance(target, str) and target.startswith(prefix) and _plain(target))
        ]
        if problems:
            raise ledger_invalid(problems)
        return rows


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
    if os.path.lexists(lpath):
        # The file written into must be ours (no trigger, no view) and a file, not a link: a resumed
        # run records into whatever a pull left there since it started.
        _settle(lpath)
        found = open_untrusted(lpath)
        if found is not None:
            found.close()
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
