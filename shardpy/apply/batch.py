"""The transaction's batched, resumable mode: one run journal, batched durability, resume, abandon.

``Transaction`` (transaction.py) applies a small plan all-or-nothing. A plan
of thousands of notes (an import) runs here instead: it cannot be held in
memory nor backed up file by file first, and a run killed half-way should be
finished, not thrown away. The two modes share the journal rules
(journalcheck.py), fsutil's one atomic writer and the durability rule (a
batch is on disk before it is recorded as done); only this package writes.

This module is the mode's entry point: callers (the import flow, status)
import from here. Each concept lives in a module of its own (issue 27):

- rundir.py: a run's folder ``.shardmind/imports/<run>/``, its id, which
  runs are unfinished, discarding unsealed ones, setting aside unreadable ones;
- runjournal.py: the journal's schema, ``JournalStep``, ``Journal`` (add,
  seal: plan and steps durable before the first write; open and check);
- folders.py: the descriptors of the folders a run writes into;
- executor.py: ``execute``, the threaded writers and the batch flush;
- finish.py: ``complete`` (the caller's records and the state in one
  transaction) and ``abandon`` (roll the run back).

Every step is idempotent, so a run killed at any point is finished by
``execute(..., resuming=True)`` with exactly the files an uninterrupted run
writes, and rolled back by ``abandon``.
"""

from __future__ import annotations

from shardpy.apply.executor import ApplyResult, execute
from shardpy.apply.finish import AbandonResult, Recorder, abandon, complete, existing_prefix
from shardpy.apply.rundir import (
    JOURNAL_NAME,
    PLAN_NAME,
    RESULT_NAME,
    discard_unsealed,
    incomplete_runs,
    new_run_id,
    runs_dir,
    set_aside,
)
from shardpy.apply.runjournal import JOURNAL_SCHEMA, Journal, JournalStep

__all__ = [
    "JOURNAL_NAME",
    "JOURNAL_SCHEMA",
    "PLAN_NAME",
    "RESULT_NAME",
    "AbandonResult",
    "ApplyResult",
    "Journal",
    "JournalStep",
    "Recorder",
    "abandon",
    "complete",
    "discard_unsealed",
    "execute",
    "existing_prefix",
    "incomplete_runs",
    "new_run_id",
    "runs_dir",
    "set_aside",
]
