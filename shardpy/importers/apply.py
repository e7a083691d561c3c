"""Applying an import plan: journal first, atomic writes, resume and abandon.

Each ``--apply`` run gets ``.shardmind/imports/<run>/`` holding ``plan.json``
(the plan as ``--json`` prints it) and ``journal.sqlite3``: one row per write
with the exact bytes to write, the hash the vault file must have before
(nothing, or the bytes the plan saw) and, when a file is replaced, its
previous bytes. Both are complete before the first note is written.

Every step is idempotent: a step whose target already holds the new bytes is
done; one whose target still holds what the plan saw is written; anything
else was changed by someone else meanwhile and is left alone. So a run killed
at any point is finished by ``--resume`` with exactly the notes an
uninterrupted run writes, and rolled back by ``--abandon``. The import
records (the ledger) are updated in one transaction once every step is done.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import secrets
import sqlite3
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.fsutil import TMP_MARK, atomic_write, prune_empty_dirs, remove_file, safe_target
from shardpy.importers.base import Plan, Step, sha256
from shardpy.importers.ledger import IMPORTS_DIR, SCHEMA, ledger_path

JOURNAL_NAME = "journal.sqlite3"
PLAN_NAME = "plan.json"
RESULT_NAME = "result.json"
STEP_DELAY_ENV = "SHARDPY_TEST_IMPORT_STEP_DELAY"  # test-only: seconds to sleep after each write
COMMIT_EVERY = 256

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
  base BLOB,
  done INTEGER NOT NULL DEFAULT 0,
  outcome TEXT,
  created_dirs TEXT
);
"""


def new_run_id(now: _dt.datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def runs_dir(vault: Path) -> Path:
    return vault / IMPORTS_DIR


class Journal:
    """One run's journal (a StepSink while planning, then the apply log)."""

    def __init__(self, vault: Path, run_id: str, conn: sqlite3.Connection) -> None:
        self.vault = vault
        self.run_id = run_id
        self.conn = conn
        self._pending = 0

    @property
    def dir(self) -> Path:
        return runs_dir(self.vault) / self.run_id

    @classmethod
    def create(cls, vault: Path, run_id: str, meta: dict[str, str]) -> Journal:
        safe_target(vault, f"{IMPORTS_DIR}/{run_id}/{JOURNAL_NAME}")
        d = runs_dir(vault) / run_id
        d.mkdir(parents=True, exist_ok=False)
        conn = sqlite3.connect(d / JOURNAL_NAME)
        conn.executescript(JOURNAL_SCHEMA)
        conn.executemany("INSERT INTO meta VALUES (?, ?)", [*meta.items(), ("state", "planning")])
        conn.commit()
        return cls(vault, run_id, conn)

    @classmethod
    def open(cls, vault: Path, run_id: str) -> Journal:
        conn = sqlite3.connect(runs_dir(vault) / run_id / JOURNAL_NAME)
        return cls(vault, run_id, conn)

    def meta(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT key, value FROM meta").fetchall())

    def set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
        self.conn.commit()

    def add(self, step: Step, new: bytes, pre: bytes | None, base: bytes | None) -> None:
        self.conn.execute(
            "INSERT INTO steps (idx, action, kind, source_path, target, pre_sha, new_sha, source_hash,"
            " render_key, base_sha, new, pre, base) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
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
            ),
        )

    def seal(self, plan: Plan) -> None:
        """Make the plan and every step durable; from here on the run is resumable."""
        self.conn.commit()
        data = json.dumps(plan.to_dict(), ensure_ascii=False, indent=1).encode("utf-8")
        atomic_write(self.vault, f"{IMPORTS_DIR}/{self.run_id}/{PLAN_NAME}", data)
        self.set_meta("state", "applying")

    def close(self) -> None:
        self.conn.close()

    def counts(self) -> tuple[int, int]:
        total, done = self.conn.execute("SELECT COUNT(*), COALESCE(SUM(done), 0) FROM steps").fetchone()
        return int(total), int(done)


def incomplete_runs(vault: Path) -> list[tuple[str, str]]:
    """(run id, state) of runs that started writing and neither finished nor were abandoned."""
    root = runs_dir(vault)
    out: list[tuple[str, str]] = []
    if not root.is_dir():
        return out
    for d in sorted(root.iterdir()):
        jpath = d / JOURNAL_NAME
        if not jpath.is_file():
            continue
        try:
            conn = sqlite3.connect(f"file:{jpath}?mode=ro", uri=True)
            try:
                row = conn.execute("SELECT value FROM meta WHERE key='state'").fetchone()
            finally:
                conn.close()
        except sqlite3.Error:
            row = ("applying",)
        state = row[0] if row else "planning"
        if state in ("applying", "complete-pending") or state == "planning":
            out.append((d.name, state))
    return out


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


def _current_sha(vault: Path, rel: str) -> tuple[str | None, str]:
    """(sha of the file or None when absent, problem) without following links."""
    path = vault / rel
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None, ""
    if stat.S_ISLNK(st.st_mode) or not stat.S_ISREG(st.st_mode):
        return None, "the vault path is not a regular file"
    with open(path, "rb") as fh:
        return sha256(fh.read()), ""


def remove_stale_temps(vault: Path, targets: list[str]) -> int:
    """Delete temporary files a killed ``atomic_write`` left beside ``targets``; return how many."""
    by_dir: dict[str, set[str]] = {}
    for t in targets:
        folder, _, name = t.rpartition("/")
        by_dir.setdefault(folder, set()).add(name)
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


def execute(
    journal: Journal, progress: Callable[[int, int], None] | None = None, *, resuming: bool = False
) -> ApplyResult:
    """Perform every step not yet done; safe to call again after a crash."""
    vault = journal.vault
    conn = journal.conn
    delay = float(os.environ.get(STEP_DELAY_ENV, "0") or 0)
    total, done = journal.counts()
    todo = [r[0] for r in conn.execute("SELECT idx FROM steps WHERE done=0 ORDER BY idx")]
    if resuming:
        # a write killed between its temporary file and the rename left the former behind.
        remove_stale_temps(vault, [r[0] for r in conn.execute("SELECT target FROM steps WHERE done=0")])
    result = ApplyResult()
    last_commit = time.monotonic()
    pending = 0
    try:
        for n, idx in enumerate(todo, 1):
            action, target, pre_sha, new_sha, new, pre = conn.execute(
                "SELECT action, target, pre_sha, new_sha, new, pre FROM steps WHERE idx=?", (idx,)
            ).fetchone()
            outcome, created = _do_step(vault, journal.run_id, action, target, pre_sha, new_sha, new, pre)
            if outcome == "written":
                result.written += 1
            elif outcome == "already":
                result.already += 1
            elif outcome == "changed":
                result.changed.append(target)
            else:
                result.errors.append((target, outcome))
            conn.execute(
                "UPDATE steps SET done=1, outcome=?, created_dirs=? WHERE idx=?",
                (outcome, json.dumps(created) if created else None, idx),
            )
            pending += 1
            if delay:
                time.sleep(delay)
            if pending >= COMMIT_EVERY or time.monotonic() - last_commit > 0.5:
                conn.commit()
                pending = 0
                last_commit = time.monotonic()
            if progress is not None:
                progress(done + n, total)
    finally:
        conn.commit()
    return result


def _do_step(
    vault: Path,
    run_id: str,
    action: str,
    target: str,
    pre_sha: str | None,
    new_sha: str,
    new: bytes,
    pre: bytes | None,
) -> tuple[str, list[str]]:
    try:
        current, problem = _current_sha(vault, target)
        if problem:
            return f"error: {problem}", []
        if current == new_sha:
            return "already", []
        if current != pre_sha:
            return "changed", []
        if action == "conflict" and pre is not None:
            atomic_write(vault, f"{IMPORTS_DIR}/{run_id}/backups/{target}", pre)
        created = atomic_write(vault, target, new)
        return "written", created
    except ShardpyError as exc:
        return f"error: [{exc.code}] {exc.message}", []
    except OSError as exc:
        return f"error: {exc.strerror or exc}", []


def complete(journal: Journal, fmt: str, into: str, now: str) -> dict[str, Any]:
    """Record every written step in the ledger (one transaction), then close the run."""
    vault = journal.vault
    lpath = ledger_path(vault)
    lpath.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.closing(sqlite3.connect(lpath)) as lconn:
        lconn.executescript(SCHEMA)
        lconn.commit()
    conn = journal.conn
    conn.create_function("casefold", 1, str.casefold, deterministic=True)
    conn.execute("ATTACH DATABASE ? AS ledger", (str(lpath),))
    try:
        conn.execute(
            "INSERT OR REPLACE INTO ledger.records (format, into_dir, source_path, kind, target, target_cf,"
            " source_hash, render_key, base_sha, base, written_sha, written, run_id, updated_at)"
            " SELECT ?, ?, source_path, kind, target, casefold(target), source_hash, render_key, base_sha,"
            " CASE WHEN kind = 'note' THEN COALESCE(base, new) END, new_sha,"
            " CASE WHEN base IS NOT NULL THEN new END, ?, ?"
            " FROM steps WHERE outcome IN ('written', 'already')",
            (fmt, into, journal.run_id, now),
        )
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('state', 'complete')")
        conn.commit()
    finally:
        conn.execute("DETACH DATABASE ledger")
    outcomes = dict(
        conn.execute("SELECT COALESCE(outcome, 'pending'), COUNT(*) FROM steps GROUP BY 1").fetchall()
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
        "SELECT idx, target, pre_sha, new_sha, created_dirs FROM steps ORDER BY idx DESC"
    ).fetchall()
    remove_stale_temps(vault, [r[1] for r in rows])
    # Folders of --into that existed before the run are never removed.
    keep = journal.meta().get("into_existed", into)
    for idx, target, pre_sha, new_sha, created in rows:
        current, problem = _current_sha(vault, target)
        if problem or current == pre_sha:
            result.untouched += 1
        elif current == new_sha:
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
