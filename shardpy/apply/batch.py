"""The transaction's batched, resumable mode: one run journal, batched durability, resume, abandon.

``Transaction`` (transaction.py) applies a small plan all-or-nothing. A plan
of thousands of notes (an import) runs here instead: it cannot be held in
memory nor backed up file by file first, and a run killed half-way should be
finished, not thrown away. The two modes share the journal rules
(journalcheck.py), fsutil's atomic primitives and the durability rule (a
batch is on disk before it is recorded as done); only this package writes.

Each run gets ``.shardmind/imports/<run>/`` holding ``plan.json`` (the plan
as ``--json`` prints it) and ``journal.sqlite3``: one row per write with the
exact bytes to write, the hash the vault file must have before (nothing, or
the bytes the plan saw), when a file is replaced its previous bytes, and the
step's provenance (source record, render key, merge base) for the caller's
records. Both are complete before the first file is written (``seal``).

Every step is idempotent: a step whose target already holds the new bytes is
done; one whose target still holds what the plan saw is written; anything
else was changed by someone else meanwhile and is left alone. So a run killed
at any point is finished by ``resume`` with exactly the files an
uninterrupted run writes, and rolled back by ``abandon``. The caller's
records (the import ledger) are updated in one transaction once every step
is done (``complete``).
"""

from __future__ import annotations

import collections
import contextlib
import datetime as _dt
import errno
import json
import os
import re
import resource
import secrets
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from shardpy import fsutil
from shardpy.apply import journalcheck as jc
from shardpy.errors import ShardpyError
from shardpy.fsutil import (
    SYNCFS_MIN,
    TMP_MARK,
    fsync_path,
    make_parents,
    prune_empty_dirs,
    remove_file,
    safe_target,
    syncfs_all,
)
from shardpy.fsutil import sha256_bytes as sha256
from shardpy.plan.actions import WRITE_KINDS, PlannedAction, WriteKind
from shardpy.vault.layout import IMPORTS as IMPORTS_DIR

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

JOURNAL_NAME = "journal.sqlite3"
PLAN_NAME = "plan.json"
RESULT_NAME = "result.json"
STEP_DELAY_ENV = "SHARDPY_TEST_IMPORT_STEP_DELAY"  # test-only: seconds to sleep after each write
ADD_BATCH = 256  # planned steps inserted into the journal at once
SYNC_EVERY = 1024  # steps made durable and marked done together (see execute)
WRITERS = 2  # note-writing threads (see execute)

JOURNAL_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS steps (
  idx INTEGER PRIMARY KEY,
  action TEXT NOT NULL,
  kind TEXT NOT NULL,
  source_path TEXT NOT NULL,
  target TEXT NOT NULL,
  pre_sha TEXT,
  new_sha TEXT NOT NULL,
  source_hash TEXT NOT NULL,
  render_key TEXT NOT NULL,
  base_sha TEXT NOT NULL,
  new BLOB NOT NULL,
  pre BLOB,
  base BLOB
);
CREATE TABLE IF NOT EXISTS progress (
  idx INTEGER PRIMARY KEY,
  outcome TEXT NOT NULL,
  created_dirs TEXT
);
"""
# A step is done when it has a ``progress`` row. It is a table of its own because SQLite re-encodes
# a whole row on UPDATE: marking 20,000 steps done in ``steps`` copied every note's bytes again in
# memory (~0.2 s); a row of its own is a small insert.
# Older journals kept it in columns ``steps.done``/``outcome``/``created_dirs``; ``open`` carries
# their progress over into the table.
_CARRY_OVER = (
    "INSERT OR IGNORE INTO progress SELECT idx, COALESCE(outcome, 'written'), created_dirs FROM steps"
    " WHERE done=1"
)
_NOT_DONE = "NOT EXISTS (SELECT 1 FROM progress p WHERE p.idx = steps.idx)"


class JournalStep(PlannedAction, Protocol):
    """One write of a run: a file action (``action``, ``target``; the plan's vocabulary,
    ``plan.actions``) with its expected hashes and its provenance (the import's ``Step`` is one)."""

    index: int
    action: WriteKind
    kind: str
    source_path: str
    target: str
    pre_sha: str | None  # what must be at ``target`` before writing (None: nothing)
    new_sha: str
    source_hash: str
    render_key: str
    base_sha: str


RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")


def new_run_id(now: _dt.datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def runs_dir(vault: Path) -> Path:
    return vault / IMPORTS_DIR


def run_corrupt(run_id: str) -> ShardpyError:
    return ShardpyError(
        "IMPORT_RUN_JOURNAL_CORRUPT",
        f"The journal of the interrupted import run {run_id} is unreadable (truncated or damaged)",
        "It cannot be resumed. Run `shardpy import --abandon` to set it aside: the notes it already "
        "wrote stay as they are, and new imports can run again.",
        path=f"{IMPORTS_DIR}/{run_id}/{JOURNAL_NAME}",
    )


def run_refused(run_id: str, problems: list[str]) -> ShardpyError:
    shown = jc.summary(problems)
    return ShardpyError(
        "IMPORT_RUN_JOURNAL_INVALID",
        f"Refusing to replay import run {run_id}: {shown}. Nothing was changed",
        f"shardpy did not write this run in this vault (it was copied, planted or edited). Delete "
        f"{IMPORTS_DIR}/{run_id}/ if you did not interrupt an import here.",
        path=f"{IMPORTS_DIR}/{run_id}/{JOURNAL_NAME}",
        details={"problems": problems},
    )


def _step_problems(vault: Path, row: tuple[Any, ...]) -> list[str]:
    """The journal rules (shardpy/apply/journalcheck.py) for one step of a run."""
    idx, action, target, pre_sha, new_sha, created = row
    what = f"step {idx}"
    problems: list[str] = []
    try:
        rel = jc.vault_path(vault, target, f"{what} target")
        try:
            jc.planned_write(rel)  # the rule every planned write passes (a run's steps, Journal.add)
        except ShardpyError:
            problems.append(f"{what} targets .git/ or the engine's own folder ({rel})")
        if action not in WRITE_KINDS:  # what a step may do (an import plan's writes)
            problems.append(f"{what} has an unknown action")
        jc.digest(pre_sha, f"{what} pre_sha")
        jc.digest(new_sha, f"{what} new_sha", optional=False)
        dirs = json.loads(created) if created else []
        if not isinstance(dirs, list):
            raise jc.Untrusted(f"{what} created_dirs is not a list")
        for d in dirs:
            jc.vault_path(vault, d, f"{what} created folder")
    except (jc.Untrusted, ValueError, RecursionError) as exc:
        problems.append(str(exc))
    return problems


class Journal:
    """One run's journal (a StepSink while planning, then the apply log)."""

    def __init__(self, vault: Path, run_id: str, conn: sqlite3.Connection) -> None:
        self.vault = vault
        self.run_id = run_id
        self.conn = conn
        self._rows: list[tuple[Any, ...]] = []  # steps added, not yet inserted (see ``add``)

    @property
    def dir(self) -> Path:
        return runs_dir(self.vault) / self.run_id

    @classmethod
    def create(cls, vault: Path, run_id: str, meta: dict[str, str]) -> Journal:
        safe_target(vault, f"{IMPORTS_DIR}/{run_id}/{JOURNAL_NAME}")
        jc.engine_folder(vault, IMPORTS_DIR)
        vault_id = jc.ensure_vault_id(vault)[0]  # the run names its vault: a copied run is not replayed
        d = runs_dir(vault) / run_id
        d.mkdir(parents=True, exist_ok=False)
        conn = sqlite3.connect(d / JOURNAL_NAME)
        conn.executescript(JOURNAL_SCHEMA)
        rows = [*meta.items(), ("vault_id", vault_id), ("state", "planning")]
        conn.executemany("INSERT INTO meta VALUES (?, ?)", rows)
        conn.commit()
        return cls(vault, run_id, conn)

    @classmethod
    def open(cls, vault: Path, run_id: str) -> Journal:
        """An interrupted run's journal, checked whole: damaged pages are a typed error, not a crash."""
        path = runs_dir(vault) / run_id / JOURNAL_NAME
        try:
            conn = sqlite3.connect(f"file:{path}?mode=rw", uri=True)
        except sqlite3.Error:
            raise run_corrupt(run_id) from None
        try:
            rows = conn.execute("PRAGMA quick_check").fetchall()
            if rows != [("ok",)]:
                raise sqlite3.DatabaseError(str(rows[:3]))
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name='progress'").fetchone() is None:
                conn.executescript(JOURNAL_SCHEMA)  # a journal from before the progress table
                conn.execute(_CARRY_OVER)
                conn.commit()
            journal = cls(vault, run_id, conn)
            journal.meta()
            journal.counts()
        except sqlite3.Error:
            conn.close()
            raise run_corrupt(run_id) from None
        return journal

    def check(self) -> None:
        """Before resume or abandon act: bound to this vault, every step within the journal rules."""
        meta = self.meta()
        problems: list[str] = []
        if not jc.bound_to(self.vault, meta.get("vault_id")):
            problems.append("it names another vault than this one (.shardmind/vault-id)")
        for key in ("format", "into"):
            if not isinstance(meta.get(key), str):
                problems.append(f"its {key} is missing")
        rows = self.conn.execute(
            "SELECT s.idx, s.action, s.target, s.pre_sha, s.new_sha, p.created_dirs"
            " FROM steps s LEFT JOIN progress p USING (idx) ORDER BY s.idx"
        )
        for row in rows:
            problems.extend(_step_problems(self.vault, tuple(row)))
            if len(problems) > 20:
                break
        if problems:
            raise run_refused(self.run_id, problems)

    def sealed(self) -> bool:
        """The plan was complete and durable before any note was written (see ``seal``)."""
        meta = self.meta()
        total, _ = self.counts()
        plan = self.dir / PLAN_NAME
        return (
            meta.get("state") == "applying"
            and meta.get("steps") == str(total)
            and plan.is_file()
            and not plan.is_symlink()
        )

    def meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        self.conn.commit()

    def add(self, step: JournalStep, new: bytes, pre: bytes | None, base: bytes | None) -> None:
        """Stage one step; rows go to SQLite ``ADD_BATCH`` at a time (committed by ``seal``).

        Its target is vault content, never in .git/ or .shardmind/ (``jc.planned_write``): refused
        here, before the first write of the run."""
        jc.planned_write(step.target)
        self._rows.append(
            (
                step.index,
                step.action,
                step.kind,
                step.source_path,
                step.target,
                step.pre_sha,
                step.new_sha,
                step.source_hash,
                step.render_key,
                step.base_sha,
                new,
                pre,
                base,
            )
        )
        if len(self._rows) >= ADD_BATCH:
            self._insert_staged()

    def _insert_staged(self) -> None:
        if self._rows:
            self.conn.executemany(
                "INSERT INTO steps (idx, action, kind, source_path, target, pre_sha, new_sha, source_hash,"
                " render_key, base_sha, new, pre, base) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                self._rows,
            )
            self._rows.clear()

    def seal(self, plan_json: Iterator[str]) -> None:
        """Make the plan and every step durable; from here on the run is resumable.

        Order matters: the steps and their count commit first, then plan.json
        is written (atomically), then the state says "applying". A run killed
        before that last commit wrote no note and is discarded, never resumed.
        """
        total, _ = self.counts()
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('steps', ?)", (str(total),))
        self.conn.commit()
        _write_stream(self.vault, f"{IMPORTS_DIR}/{self.run_id}/{PLAN_NAME}", plan_json)
        self.set_meta("state", "applying")

    def pending_sources(self) -> list[tuple[str, str]]:
        """(source path, source hash) of every step not yet done."""
        return self.conn.execute(f"SELECT source_path, source_hash FROM steps WHERE {_NOT_DONE}").fetchall()

    def close(self) -> None:
        self.conn.close()

    def discard(self) -> None:
        """Close and remove a run that wrote nothing (an empty or failed plan)."""
        import shutil

        self.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    def counts(self) -> tuple[int, int]:
        self._insert_staged()
        total, done = self.conn.execute(
            "SELECT COUNT(*), COUNT(p.idx) FROM steps s LEFT JOIN progress p USING (idx)"
        ).fetchone()
        return int(total), int(done)


def _write_stream(vault: Path, rel: str, chunks: Iterator[str]) -> None:
    """Write text chunk by chunk to ``vault/rel``, atomically and durably (temporary file, fsync, rename)."""
    target = safe_target(vault, rel)
    fsutil.replace_with(os.fspath(target), _blocks(chunks), mode=None, durable=True)
    fsync_path(target.parent)


def _blocks(chunks: Iterator[str], size: int = 1 << 16) -> Iterator[bytes]:
    """The chunks as UTF-8, gathered into blocks of about ``size`` bytes (one write each)."""
    pending: list[bytes] = []
    held = 0
    for chunk in chunks:
        data = chunk.encode("utf-8")
        pending.append(data)
        held += len(data)
        if held >= size:
            yield b"".join(pending)
            pending, held = [], 0
    if pending:
        yield b"".join(pending)


def incomplete_runs(vault: Path) -> list[tuple[str, str]]:
    """(run id, state) of runs that started and neither finished nor were abandoned.

    A run without its plan.json never wrote a note (``seal``): it counts as
    "planning" whatever its journal says, even when the journal cannot be
    read (killed mid-commit, a rollback journal beside it).
    """
    root = jc.engine_folder(vault, IMPORTS_DIR)
    out: list[tuple[str, str]] = []
    if root is None:
        return out
    with os.scandir(root) as it:
        names = sorted(e.name for e in it if e.is_dir(follow_symlinks=False) and RUN_ID.fullmatch(e.name))
    for name in names:
        d = root / name
        jpath = d / JOURNAL_NAME
        if not jpath.is_file() or jpath.is_symlink():
            continue
        if not (d / PLAN_NAME).is_file():
            out.append((name, "planning"))
            continue
        state = _state_of(jpath)
        if state in ("applying", "planning"):
            out.append((name, state))
    return out


def _state_of(jpath: Path) -> str:
    # A kill mid-commit leaves SQLite's hot rollback journal, which a read-only
    # connection cannot roll back: then read it read-write, which rolls the
    # unfinished commit back and shows the state that was durable (a run killed
    # while sealing is still "planning", not "applying").
    for uri in (f"file:{jpath}?mode=ro", f"file:{jpath}?mode=rw"):
        try:
            conn = sqlite3.connect(uri, uri=True)
            try:
                row = conn.execute("SELECT value FROM meta WHERE key='state'").fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            continue
        return str(row[0]) if row else "planning"
    return "applying"  # unreadable after its plan was sealed: resume or abandon say what is wrong


def discard_unsealed(vault: Path, runs: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Remove runs killed while planning (nothing was written yet); return the rest."""
    import shutil

    kept: list[tuple[str, str]] = []
    for run_id, state in runs:
        if state == "planning":
            shutil.rmtree(runs_dir(vault) / run_id, ignore_errors=True)
        else:
            kept.append((run_id, state))
    return kept


def set_aside(vault: Path, run_id: str, now: str) -> None:
    """Close a run whose journal cannot be read: keep the file (renamed) for inspection, record it."""
    d = runs_dir(vault) / run_id
    with contextlib.suppress(FileNotFoundError):
        os.replace(d / JOURNAL_NAME, d / f"{JOURNAL_NAME}.unreadable")
    result = {"run_id": run_id, "state": "abandoned", "finished_at": now, "journal": "unreadable"}
    fsutil.atomic_write(vault, f"{IMPORTS_DIR}/{run_id}/{RESULT_NAME}", json.dumps(result).encode())


def _current(vault: Path, rel: str, folder_fd: int | None = None) -> tuple[bytes | None, str]:
    """(the file's bytes or None when absent, problem) without following links."""
    if folder_fd is None:
        path: str | Path = vault / rel
    else:
        path = rel.rpartition("/")[2]
    try:
        st = os.lstat(path, dir_fd=folder_fd)
    except (FileNotFoundError, NotADirectoryError):
        return None, ""
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        return None, "the vault path is not a regular file"
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=folder_fd)
    with open(fd, "rb") as fh:
        return fh.read(), ""


def remove_stale_temps(vault: Path, targets: list[str]) -> int:
    """Delete temporary files a killed ``atomic_write`` left beside ``targets``; return how many."""
    by_dir: dict[str, set[str]] = {}
    for t in targets:
        folder, _, name = t.rpartition("/")
        by_dir.setdefault(folder, set()).add(fsutil.temp_tail(name))
    removed = 0
    for folder, names in by_dir.items():
        try:
            with os.scandir(vault / folder if folder else vault) as it:
                stale = [
                    e.name
                    for e in it
                    if e.name.startswith(TMP_MARK) and e.name[len(TMP_MARK) + 9 :] in names and e.is_file()
                ]
        except OSError:
            continue
        for name in stale:
            with contextlib.suppress(OSError):
                os.unlink(vault / folder / name if folder else vault / name)
                removed += 1
    return removed


@dataclass(slots=True)
class ApplyResult:
    written: int = 0
    already: int = 0
    changed: list[str] = field(default_factory=list)  # targets left alone: changed meanwhile
    errors: list[tuple[str, str]] = field(default_factory=list)

    def count(self, target: str, outcome: str) -> None:
        if outcome == "written":
            self.written += 1
        elif outcome == "already":
            self.already += 1
        elif outcome == "changed":
            self.changed.append(target)
        else:
            self.errors.append((target, outcome))


class _Folders:
    """Descriptors of the vault folders a run writes into, opened once each, never through a link.

    Each folder is reached from the vault root one component at a time with
    ``O_NOFOLLOW``, so a symbolic link on the way is refused (as
    ``fsutil.safe_target`` does) and later writes cannot be redirected by a
    folder swapped for a link. Missing folders are created (and reported, for
    abandon). Only the applying thread opens folders; writer threads use the
    descriptors, which stay open until ``close``.
    """

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.fds: dict[str, int] = {"": os.open(vault, os.O_RDONLY | os.O_DIRECTORY)}
        self.devices: dict[int, int] = {}  # descriptor -> st_dev (which filesystem rules its renames)
        try:
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        except (OSError, ValueError):
            soft = 1024
        # Leave room for the writers' files, sqlite and the rest; beyond it, writes take the path way.
        self.limit = max(0, (soft if soft > 0 else 1024) - 256)

    def fd(self, folder: str) -> tuple[int | None, list[str]]:
        """(descriptor of ``folder`` or None when too many are open, folders created on the way)."""
        found = self.fds.get(folder)
        if found is not None:
            return found, []
        if len(self.fds) >= self.limit:
            return None, make_parents(self.vault, f"{folder}/x") if folder else []
        parent, _, name = folder.rpartition("/")
        parent_fd, made = self.fd(parent)
        if parent_fd is None:
            return None, [*made, *make_parents(self.vault, f"{folder}/x")]
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
        except FileNotFoundError:
            os.mkdir(name, dir_fd=parent_fd)
            made.append(folder)
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise fsutil.symlink_refused(folder) from None
            if exc.errno == errno.ENOTDIR:
                raise fsutil.not_a_directory(
                    folder, f"Cannot write into {folder}: it is not a directory"
                ) from None
            raise
        self.fds[folder] = fd
        return fd, made

    def device(self, fd: int) -> int:
        found = self.devices.get(fd)
        if found is None:
            found = self.devices[fd] = os.fstat(fd).st_dev
        return found

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


def atomic_write(
    root: Path,
    rel: str,
    data: bytes,
    *,
    durable: bool = True,
    folder_fd: int | None = None,
    device: int = 0,
    exclusive: bool = False,
) -> list[str]:
    """Write a vault file atomically: ``fsutil.atomic_write``, or the same contract on ``folder_fd``.

    With the descriptor of the file's folder (from ``_Folders``) no path is
    resolved again: the target is checked (a link or a read-only file is
    refused, the permission bits are kept), written to a temporary file with
    the same name pattern (``remove_stale_temps`` finds it) and renamed.
    ``durable=False`` leaves the fsync to the caller (see ``execute``).
    ``exclusive`` (with ``folder_fd``): the file must not exist yet;
    FileExistsError, with nothing changed, when it does. Where the
    filesystem can, the rename itself refuses to replace (``fsutil.create_new``),
    so a file that appears meanwhile is never overwritten.
    """
    if folder_fd is None:
        return fsutil.atomic_write(root, rel, data, durable=durable)
    name = rel.rpartition("/")[2]
    if exclusive:
        created = fsutil.create_new(name, data, dir_fd=folder_fd, device=device)
        if created is False:
            raise FileExistsError(errno.EEXIST, "exists", rel)
        if created:
            if durable:
                os.fsync(folder_fd)
            return []
    mode = fsutil.replaced_mode(name, rel, dir_fd=folder_fd)
    if exclusive and mode is not None:
        raise FileExistsError(errno.EEXIST, "exists", rel)
    fsutil.replace_with(name, (data,), mode=mode, durable=durable, dir_fd=folder_fd)
    if durable:
        os.fsync(folder_fd)
    return []


def execute(
    journal: Journal, progress: Callable[[int, int], None] | None = None, *, resuming: bool = False
) -> ApplyResult:
    """Perform every step not yet done; safe to call again after a crash.

    Notes are written by ``WRITERS`` threads (file creation in different
    folders overlaps in the kernel), each atomically: temporary file, then
    rename. Instead of two fsync calls per note, each batch of steps is made
    durable at once (``_flush``: one ``syncfs`` per filesystem) and only then
    marked done in the journal, so a step recorded as done is on disk. A step
    not yet recorded is re-checked when the run is resumed or abandoned;
    there a file holding a truncated copy of the step's bytes (a rename that
    reached the disk before its data, after a power cut) counts as the step's
    own unfinished write. Folders are made here, before a write is handed
    out, so two threads never race to create one folder.
    """
    conn = journal.conn
    if resuming:
        # a write killed between its temporary file and the rename left the former behind.
        remove_stale_temps(
            journal.vault, [r[0] for r in conn.execute(f"SELECT target FROM steps WHERE {_NOT_DONE}")]
        )
    from concurrent.futures import ThreadPoolExecutor  # only an apply writes (~5 ms to load)

    run = _Run(
        journal,
        progress,
        resuming,
        ThreadPoolExecutor(WRITERS, thread_name_prefix="shardpy-import-write"),
        ThreadPoolExecutor(1, thread_name_prefix="shardpy-import-flush"),
    )
    # A test's per-step delay needs per-step progress; otherwise a writer takes a chunk at a time
    # (one future per chunk, not per note: the per-note hand-over cost more than the write), never
    # more than a batch, so each batch is flushed and recorded as soon as it is written.
    chunk = 1 if run.delay else min(WRITE_CHUNK, SYNC_EVERY)
    try:
        for rows in _pending_chunks(conn, chunk):
            run.submit(rows)
            if len(run.window) > WRITERS:
                run.finish_one()
        while run.window:
            run.finish_one()
        if run.unsynced:
            run.mark_done()
        run.record_flushed()
    except BaseException:
        for _, fut in run.window:
            fut.cancel()
        raise
    finally:
        # Writes and a flush already running finish before the caller rolls back or exits; a
        # batch whose flush was not seen to finish is not recorded (resume re-checks it).
        run.pool.shutdown(wait=True, cancel_futures=True)
        run.flusher.shutdown(wait=True, cancel_futures=True)
        run.folders.close()
        conn.commit()
    return run.result


PENDING_CHUNK = 256  # steps read from the journal at once
WRITE_CHUNK = 256  # steps one writer thread takes at a time


def _pending_chunks(conn: sqlite3.Connection, size: int) -> Iterator[list[tuple[Any, ...]]]:
    """The steps not yet done, in order, ``size`` at a time.

    Each read from the journal is fetched whole before any of it is written:
    the run marks steps done on the same connection, and SQLite leaves a
    query undefined while the rows it walks are updated.
    """
    last = -1
    while True:
        rows = conn.execute(
            "SELECT idx, action, target, pre_sha, new_sha, new, pre FROM steps"
            f" WHERE idx>? AND {_NOT_DONE} ORDER BY idx LIMIT ?",
            (last, max(PENDING_CHUNK, size)),
        ).fetchall()
        if not rows:
            return
        for lo in range(0, len(rows), size):
            yield rows[lo : lo + size]
        last = rows[-1][0]


# One step handed to a writer: (action, target, pre_sha, new_sha, new, pre, folder descriptor, device).
_Task = tuple[str, str, str | None, str, bytes, bytes | None, int | None, int]


class _Run:
    """One ``execute``: the writes in flight, those finished but not yet durable, the tally."""

    def __init__(
        self,
        journal: Journal,
        progress: Callable[[int, int], None] | None,
        resuming: bool,
        pool: ThreadPoolExecutor,
        flusher: ThreadPoolExecutor,
    ) -> None:
        self.journal = journal
        self.progress = progress
        self.resuming = resuming
        self.pool = pool
        self.flusher = flusher
        # The batch being made durable by the flusher thread while the writers go on, and its steps.
        self.flushing: tuple[Future[None] | None, list[tuple[int, str, str, list[str]]]] | None = None
        self.folders = _Folders(journal.vault)
        self.delay = float(os.environ.get(STEP_DELAY_ENV, "0") or 0)
        self.total, self.done = journal.counts()
        self.result = ApplyResult()
        # Chunks in flight: (idx, target, folders made for it) of each step, and the chunk's future.
        self.window: collections.deque[
            tuple[list[tuple[int, str, list[str]]], Future[list[tuple[str, list[str]]]]]
        ] = collections.deque()
        self.unsynced: list[tuple[int, str, str, list[str]]] = []  # finished, not yet durable nor marked
        self.finished = 0
        self.last_sync = time.monotonic()

    def submit(self, rows: list[tuple[Any, ...]]) -> None:
        """Hand a chunk of steps to a writer thread, their folders made first (here, by one thread)."""
        steps: list[tuple[int, str, list[str]]] = []
        tasks: list[_Task] = []
        for idx, action, target, pre_sha, new_sha, new, pre in rows:
            folder_fd, device, made = _folder(self.folders, target)
            steps.append((idx, target, made))
            tasks.append((action, target, pre_sha, new_sha, new, pre, folder_fd, device))
        fut = self.pool.submit(_do_steps, self.journal.vault, self.journal.run_id, tasks, self.resuming)
        self.window.append((steps, fut))

    def finish_one(self) -> None:
        """Wait for the oldest chunk in flight; flush and mark a batch once it is full or old."""
        steps, fut = self.window.popleft()
        for (idx, target, made), (outcome, created) in zip(steps, fut.result(), strict=True):
            self.result.count(target, outcome)
            self.unsynced.append((idx, target, outcome, made + created))
            self.finished += 1
            if self.delay:
                time.sleep(self.delay)
        if len(self.unsynced) >= SYNC_EVERY or time.monotonic() - self.last_sync > 1.0:
            self.mark_done()
        if self.progress is not None:
            self.progress(self.done + self.finished, self.total)

    def mark_done(self) -> None:
        """Make the finished writes durable, then record them as done (never the other way round).

        The flush (a syncfs, ~10 ms per batch) runs in the flusher thread while the writers go
        on with the next batch; the batch is recorded by the next call (or ``record_flushed``)
        once its flush has returned.
        """
        batch, self.unsynced = self.unsynced, []
        written = [t for _, t, outcome, _ in batch if outcome == "written"]
        fut = self.flusher.submit(_flush, self.journal.vault, written, self.pool) if written else None
        self.record_flushed()
        self.flushing = (fut, batch)
        self.last_sync = time.monotonic()

    def record_flushed(self) -> None:
        """Wait for the batch being flushed, then mark its steps done in the journal."""
        if self.flushing is None:
            return
        fut, batch = self.flushing
        self.flushing = None
        if fut is not None:
            fut.result()
        conn = self.journal.conn
        conn.executemany(
            "INSERT OR REPLACE INTO progress (idx, outcome, created_dirs) VALUES (?, ?, ?)",
            [(i, o, json.dumps(d) if d else None) for i, _, o, d in batch],
        )
        conn.commit()


def _flush(vault: Path, written: list[str], pool: ThreadPoolExecutor) -> None:
    """Make the written notes (bytes and renames) durable before they are recorded as done.

    A large batch: one syncfs per filesystem (one journal commit instead of two
    per note). A small one: fsync each note and folder, which does not wait
    for other programs' unwritten data on the same filesystem.
    """
    if len(written) < SYNCFS_MIN:
        _fsync_each(vault, written, pool)
        return
    folders = {t.rpartition("/")[0] for t in written}
    if syncfs_all(vault / f if f else vault for f in folders):
        return
    _fsync_each(vault, written, pool)  # no syncfs (not Linux, or it failed)


def _fsync_each(vault: Path, written: list[str], pool: ThreadPoolExecutor) -> None:
    list(pool.map(fsync_path, [vault / t for t in written]))
    folders = {t.rpartition("/")[0] for t in written}
    list(pool.map(fsync_path, [vault / f if f else vault for f in folders]))


def _folder(folders: _Folders, target: str) -> tuple[int | None, int, list[str]]:
    """(descriptor of ``target``'s folder, its device, folders created for it), made before its write
    is handed out."""
    folder = target.rpartition("/")[0]
    try:
        fd, made = folders.fd(folder)
    except (ShardpyError, OSError):
        return None, 0, []  # the write itself reports the problem
    return fd, (folders.device(fd) if fd is not None else 0), made


def _do_steps(vault: Path, run_id: str, tasks: list[_Task], resuming: bool) -> list[tuple[str, list[str]]]:
    """A writer thread's chunk: each step in order (a step's failure is its outcome, not the chunk's)."""
    return [
        _do_step(vault, run_id, action, target, pre_sha, new_sha, new, pre, resuming, fd, device)
        for action, target, pre_sha, new_sha, new, pre, fd, device in tasks
    ]


def _do_step(
    vault: Path,
    run_id: str,
    action: str,
    target: str,
    pre_sha: str | None,
    new_sha: str,
    new: bytes,
    pre: bytes | None,
    resuming: bool = False,
    folder_fd: int | None = None,
    device: int = 0,
) -> tuple[str, list[str]]:
    try:
        if pre_sha is None and folder_fd is not None:
            # A new note (the common case) is written without reading first: created exclusively,
            # so whatever appeared at the target since the plan looked is never replaced; only
            # then is it read and compared below (written already, or changed meanwhile).
            with contextlib.suppress(FileExistsError):
                made = atomic_write(
                    vault, target, new, durable=False, folder_fd=folder_fd, device=device, exclusive=True
                )
                return "written", made
        data, problem = _current(vault, target, folder_fd)
        if problem:
            return f"error: {problem}", []
        current = None if data is None else sha256(data)
        if current == new_sha:
            return "already", []
        if current != pre_sha and not (resuming and data is not None and _truncated(data, new)):
            return "changed", []
        if action == "conflict" and pre is not None:
            with _BACKUPS:  # backup folders are made here, by whichever writer thread comes first
                fsutil.atomic_write(vault, f"{IMPORTS_DIR}/{run_id}/backups/{target}", pre)
        # Not durable yet: execute() flushes the batch before marking the step done.
        created = atomic_write(vault, target, new, durable=False, folder_fd=folder_fd)
        return "written", created
    except ShardpyError as exc:
        return f"error: [{exc.code}] {exc.message}", []
    except OSError as exc:
        return f"error: {exc.strerror or exc}", []


_BACKUPS = threading.Lock()


def _truncated_step(conn: sqlite3.Connection, idx: int, data: bytes) -> bool:
    (new,) = conn.execute("SELECT new FROM steps WHERE idx=?", (idx,)).fetchone()
    return _truncated(data, bytes(new))


def _truncated(data: bytes, new: bytes) -> bool:
    """``data`` is a strict prefix of ``new``: this step's own write, cut short by a crash."""
    return len(data) < len(new) and new.startswith(data)


Recorder = Callable[[sqlite3.Connection], contextlib.AbstractContextManager[None]]


def complete(journal: Journal, now: str, record: Recorder) -> dict[str, Any]:
    """Record the run's written steps with the caller's ``record``, then close the run.

    ``record(conn)`` stages the caller's records on the journal's connection
    (the import attaches its ledger and copies the steps' provenance); the
    run's "complete" state commits in the same SQLite transaction, so the
    records and the state change together or not at all.
    """
    conn = journal.conn
    with record(conn):
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('state', 'complete')")
        conn.commit()
    outcomes = dict(
        conn.execute(
            "SELECT COALESCE(p.outcome, 'pending'), COUNT(*) FROM steps s LEFT JOIN progress p USING (idx)"
            " GROUP BY 1"
        ).fetchall()
    )
    result = {"run_id": journal.run_id, "state": "complete", "finished_at": now, "outcomes": outcomes}
    _finish(journal, result)
    return result


def _finish(journal: Journal, result: dict[str, Any]) -> None:
    atomic_write(
        journal.vault,
        f"{IMPORTS_DIR}/{journal.run_id}/{RESULT_NAME}",
        json.dumps(result, ensure_ascii=False, indent=1).encode("utf-8"),
    )
    journal.close()
    # The bytes live on in the ledger (bases) and the vault; the journal is no longer needed.
    with contextlib.suppress(OSError):
        os.unlink(journal.dir / JOURNAL_NAME)


@dataclass(slots=True)
class AbandonResult:
    restored: int = 0
    removed: int = 0
    untouched: int = 0
    left: list[str] = field(default_factory=list)  # changed since the run wrote them: left as they are
    unreadable: bool = False  # the journal could not be read: set aside, nothing rolled back


def existing_prefix(vault: Path, into: str) -> str:
    """The longest leading part of ``into`` that exists as a folder now ('' when none)."""
    parts = into.split("/") if into else []
    found = ""
    for i in range(1, len(parts) + 1):
        candidate = "/".join(parts[:i])
        if not (vault / candidate).is_dir():
            break
        found = candidate
    return found


def abandon(journal: Journal, now: str, into: str = "") -> AbandonResult:
    """Roll the run back: put back what each step replaced, remove what it created."""
    vault = journal.vault
    conn = journal.conn
    result = AbandonResult()
    dirs: list[str] = []
    rows = conn.execute(
        "SELECT s.idx, s.target, s.pre_sha, s.new_sha, p.created_dirs, p.idx IS NOT NULL"
        " FROM steps s LEFT JOIN progress p USING (idx) ORDER BY s.idx DESC"
    ).fetchall()
    remove_stale_temps(vault, [r[1] for r in rows])
    # Folders of --into that existed before the run are never removed.
    keep = journal.meta().get("into_existed", into)
    for idx, target, pre_sha, new_sha, created, done in rows:
        data, problem = _current(vault, target)
        current = None if data is None else sha256(data)
        if problem or current == pre_sha:
            result.untouched += 1
        elif current == new_sha or (not done and data is not None and _truncated_step(conn, idx, data)):
            if pre_sha is None:
                remove_file(vault, target)
                result.removed += 1
            else:
                (pre,) = conn.execute("SELECT pre FROM steps WHERE idx=?", (idx,)).fetchone()
                atomic_write(vault, target, pre)
                result.restored += 1
        else:
            result.left.append(target)
        if created:
            dirs.extend(json.loads(created))
        if pre_sha is None:
            # A step killed before it was marked done did not record the folders it made.
            parent = target.rsplit("/", 1)[0] if "/" in target else ""
            while parent and parent != keep and (not keep or parent.startswith(keep + "/")):
                dirs.append(parent)
                parent = parent.rsplit("/", 1)[0] if "/" in parent else ""
    prune_empty_dirs(vault, dirs)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('state', 'abandoned')")
    conn.commit()
    _finish(
        journal,
        {
            "run_id": journal.run_id,
            "state": "abandoned",
            "finished_at": now,
            "restored": result.restored,
            "removed": result.removed,
            "left_as_is": result.left,
        },
    )
    return result
