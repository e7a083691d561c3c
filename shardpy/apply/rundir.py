"""The batched apply's run directories: their names, which are unfinished, and their end.

Each import run gets ``.shardmind/imports/<run>/`` holding ``plan.json``
(``PLAN_NAME``), the run journal (``JOURNAL_NAME``, runjournal.py) and, once
it is finished or abandoned, ``result.json`` (``RESULT_NAME``). This module
owns that layout: a run's id, listing the runs that neither finished nor were
abandoned, discarding those killed before their plan was sealed (they wrote
nothing), and setting aside a run whose journal cannot be read.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import re
import secrets
import sqlite3
from pathlib import Path

from shardpy import fsutil
from shardpy.apply import journalcheck as jc
from shardpy.vault.layout import IMPORTS as IMPORTS_DIR

JOURNAL_NAME = "journal.sqlite3"
PLAN_NAME = "plan.json"
RESULT_NAME = "result.json"

RUN_ID = re.compile(r"\d{8}T\d{6}Z-[0-9a-f]{6}")


def new_run_id(now: _dt.datetime) -> str:
    return now.strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def runs_dir(vault: Path) -> Path:
    return vault / IMPORTS_DIR


def incomplete_runs(vault: Path) -> list[tuple[str, str]]:
    """(run id, state) of runs that started and neither finished nor were abandoned.

    A run without its plan.json never wrote a note (``seal``): it counts as
    "planning" whatever its journal says, even when the journal cannot be
    read (killed mid-commit, a rollback journal beside it). (The state's name
    is older than issue 27: planning itself writes nothing now; "planning" is
    a journal being filled from a whole plan, not yet sealed.)
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
    """Remove runs killed before they were sealed (nothing was written yet); return the rest."""
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
