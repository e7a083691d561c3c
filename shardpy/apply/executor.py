"""The batched apply's executor: performs a sealed run's steps, threaded, durable by batch.

Every step is idempotent: a step whose target already holds the new bytes is
done; one whose target still holds what the plan saw is written; anything
else was changed by someone else meanwhile and is left alone. So a run
killed at any point is finished by calling ``execute`` again (``resuming``)
with exactly the files an uninterrupted run writes. Notes are written by
``WRITERS`` threads through fsutil's one atomic writer, on the folder
descriptors of folders.py; each batch is made durable at once (``_flush``)
and only then marked done in the run journal (runjournal.py).
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shardpy import fsutil
from shardpy.apply.folders import Folders
from shardpy.apply.runjournal import NOT_DONE, Journal
from shardpy.errors import ShardpyError
from shardpy.fsutil import SYNCFS_MIN, atomic_write, fsync_path, open_regular, remove_stale_temps, syncfs_all
from shardpy.fsutil import sha256_bytes as sha256
from shardpy.vault.layout import IMPORTS as IMPORTS_DIR

if TYPE_CHECKING:
    from concurrent.futures import Future, ThreadPoolExecutor

STEP_DELAY_ENV = "SHARDPY_TEST_IMPORT_STEP_DELAY"  # test-only: seconds to sleep after each write

SYNC_EVERY = 1024  # steps made durable and marked done together (see execute)
WRITERS = 2  # note-writing threads (see execute)
PENDING_CHUNK = 256  # steps read from the journal at once
WRITE_CHUNK = 256  # steps one writer thread takes at a time


def read_current(vault: Path, rel: str, folder_fd: int | None = None) -> tuple[bytes | None, str]:
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
    fd = open_regular(path, dir_fd=folder_fd)
    with open(fd, "rb") as fh:
        return fh.read(), ""


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
            journal.vault, [r[0] for r in conn.execute(f"SELECT target FROM steps WHERE {NOT_DONE}")]
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
            f" WHERE idx>? AND {NOT_DONE} ORDER BY idx LIMIT ?",
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
        self.folders = Folders(journal.vault)
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


def _folder(folders: Folders, target: str) -> tuple[int | None, int, list[str]]:
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
        data, problem = read_current(vault, target, folder_fd)
        if problem:
            return f"error: {problem}", []
        current = None if data is None else sha256(data)
        if current == new_sha:
            return "already", []
        if current != pre_sha and not (resuming and data is not None and truncated(data, new)):
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


def truncated(data: bytes, new: bytes) -> bool:
    """``data`` is a strict prefix of ``new``: this step's own write, cut short by a crash."""
    return len(data) < len(new) and new.startswith(data)
