"""The end of a batched run: ``complete`` records it, ``abandon`` rolls it back.

``complete`` commits the caller's records (the import ledger) and the run's
"complete" state in one SQLite transaction once every step is done;
``abandon`` puts back what each step replaced and removes what it created,
leaving alone any file changed since the run wrote it. Either writes
``result.json`` and removes the journal (rundir.py's layout).
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.apply.executor import read_current, truncated
from shardpy.apply.rundir import JOURNAL_NAME, RESULT_NAME
from shardpy.apply.runjournal import Journal
from shardpy.fsutil import atomic_write, prune_empty_dirs, remove_file, remove_stale_temps
from shardpy.fsutil import sha256_bytes as sha256
from shardpy.vault.layout import IMPORTS as IMPORTS_DIR


def _truncated_step(conn: sqlite3.Connection, idx: int, data: bytes) -> bool:
    (new,) = conn.execute("SELECT new FROM steps WHERE idx=?", (idx,)).fetchone()
    return truncated(data, bytes(new))


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
        data, problem = read_current(vault, target)
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
