"""The batched apply's run journal: its schema, what a step is, and how a run is sealed.

One SQLite file per run (``.shardmind/imports/<run>/journal.sqlite3``, see
rundir.py): one row per write with the exact bytes to write, the hash the
vault file must have before (nothing, or the bytes the plan saw), when a
file is replaced its previous bytes, and the step's provenance (source
record, render key, merge base) for the caller's records. A step is done
when it has a ``progress`` row. The steps and ``plan.json`` are complete
and durable before the first file is written (``Journal.seal``); a journal
opened to resume or abandon is checked whole first (``Journal.open``,
``Journal.check``: the journal rules of journalcheck.py).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shardpy import fsutil
from shardpy.apply import journalcheck as jc
from shardpy.apply.rundir import JOURNAL_NAME, PLAN_NAME, runs_dir
from shardpy.errors import ShardpyError
from shardpy.fsutil import safe_target
from shardpy.plan.actions import WRITE_KINDS
from shardpy.plan.importplan import Step
from shardpy.vault.layout import IMPORTS as IMPORTS_DIR

ADD_BATCH = 256  # planned steps inserted into the journal at once

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
NOT_DONE = "NOT EXISTS (SELECT 1 FROM progress p WHERE p.idx = steps.idx)"


# A run's journal records the import plan's steps (plan/importplan.py ``Step``: a file action with
# its expected hashes and provenance). The step type lives in plan/ since import planning moved
# there (issue 27), so apply/ names it instead of mirroring its fields in a Protocol.
JournalStep = Step


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
    """One run's journal: filled with a whole plan's steps (``add``) and sealed, then the apply log."""

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
        d = runs_dir(vault) / run_id
        d.mkdir(parents=True, exist_ok=False)
        conn = sqlite3.connect(d / JOURNAL_NAME)
        conn.executescript(JOURNAL_SCHEMA)
        rows = [*meta.items(), ("state", "planning")]
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
        # The run names its vault (a copied run is not replayed). The id is machine-local and made
        # here, not at create: a plan refused while planning leaves .shardmind/ as it found it
        # (tests/security/test_pulled_ledger.py, the refused import writes nothing).
        vault_id = jc.ensure_vault_id(self.vault)[0]
        self.conn.executemany(
            "INSERT OR REPLACE INTO meta VALUES (?, ?)", [("steps", str(total)), ("vault_id", vault_id)]
        )
        self.conn.commit()
        _write_stream(self.vault, f"{IMPORTS_DIR}/{self.run_id}/{PLAN_NAME}", plan_json)
        self.set_meta("state", "applying")

    def pending_sources(self) -> list[tuple[str, str]]:
        """(source path, source hash) of every step not yet done."""
        return self.conn.execute(f"SELECT source_path, source_hash FROM steps WHERE {NOT_DONE}").fetchall()

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
    """Write text chunk by chunk to ``vault/rel``, atomically and durably (fsutil's one writer)."""
    fsutil.atomic_write(vault, rel, _blocks(chunks))


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
