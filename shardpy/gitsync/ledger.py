"""Merging two machines' import ledgers (``.shardmind/imports/ledger.sqlite3``) record by record.

The ledger is tracked in git as a binary file with this driver. A record is
keyed by (format, into, source path); two machines that imported different
batches hold different keys, and the merged ledger holds every record of
both, so a later import on either machine sees every note both imported as
its own (``unchanged``, never a second copy, never a "collision").

Per key, against the common ancestor: a record only one side added, changed
or removed takes that side; a record both sides changed differently (the
same source imported on both machines) keeps the later import (by
``updated_at``, then run id) and is reported — the notes themselves were
merged by the note rules, and the next import merges against the kept base.

The three ledgers are read in key order, one record at a time, and the
result is written fresh in key order, so its bytes do not depend on which
side is ours (with the same SQLite library).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.gitsync.result import FileKind, FileMerge

_KEY = ("format", "into_dir", "source_path")
Row = tuple[Any, ...]


class LedgerUnreadable(Exception):
    pass


def _columns(conn: sqlite3.Connection) -> list[str]:
    return [r[1] for r in conn.execute("PRAGMA table_info(records)")]


def _rows(path: Path | None, columns: list[str]) -> Iterator[Row]:
    """Every record of one ledger in key order (none for a missing or empty file).

    The file comes from git (ours, or a pulled commit): it is opened by the importer's one gate for
    untrusted ledgers (read-only, schema exactly ours, bounded work; a pulled view recursing
    forever hung the driver: tests/security/test_pulled_ledger.py).
    """
    if path is None or not path.is_file() or path.stat().st_size == 0:
        return
    from shardpy.vault.ledger import open_untrusted

    try:
        conn = open_untrusted(path, immutable=True)
    except ShardpyError as exc:
        problems = exc.details.get("problems") or [exc.message]
        raise LedgerUnreadable(f"{path.name}: [{exc.code}] " + "; ".join(map(str, problems[:3]))) from None
    if conn is None:
        return
    with contextlib.closing(conn):
        try:
            cols = ", ".join(columns)
            yield from conn.execute(f"SELECT {cols} FROM records ORDER BY {', '.join(_KEY)}")
        except sqlite3.DatabaseError as exc:
            raise LedgerUnreadable(f"{path.name}: {exc}") from None


def _pick(b: Row | None, o: Row | None, t: Row | None, order: tuple[int, int]) -> tuple[Row | None, bool]:
    """(the kept record, whether both sides changed it differently)."""
    if o == t or t == b:
        return o, False
    if o == b:
        return t, False
    if o is None or t is None:
        # One side removed a record the other changed: keep the changed one.
        return (o or t), True
    return max((o, t), key=lambda r: (str(r[order[0]]), str(r[order[1]]), repr(r))), True


def _walk(
    base: Path | None, ours: Path, theirs: Path, columns: list[str]
) -> Iterator[tuple[Row | None, Row | None, Row | None]]:
    """The three ledgers side by side, key by key (a three-way sorted merge)."""
    n = len(_KEY)
    its = [_rows(p, columns) for p in (base, ours, theirs)]
    heads: list[Row | None] = [next(it, None) for it in its]
    while any(h is not None for h in heads):
        key = min(h[:n] for h in heads if h is not None)
        out: list[Row | None] = []
        for i, h in enumerate(heads):
            if h is not None and h[:n] == key:
                out.append(h)
                heads[i] = next(its[i], None)
            else:
                out.append(None)
        yield out[0], out[1], out[2]


def merge_ledger(base: Path | None, ours: Path, theirs: Path) -> tuple[FileMerge, Path | None]:
    """Merge the three ledgers into a new file beside ``ours``; (outcome, that file or None)."""
    from shardpy.vault.ledger import SCHEMA

    fd, name = tempfile.mkstemp(prefix=".shardpy-ledger-", dir=ours.parent)
    os.close(fd)
    out_path = Path(name)
    try:
        out = sqlite3.connect(out_path)
        with contextlib.closing(out):
            out.executescript(SCHEMA)
            columns = _columns(out)
            order = (columns.index("updated_at"), columns.index("run_id"))
            marks = ", ".join("?" * len(columns))
            both: list[str] = []
            for b, o, t in _walk(base, ours, theirs, columns):
                row, disputed = _pick(b, o, t, order)
                if disputed:
                    both.append("/".join(str(x) for x in (row or o or t or ())[: len(_KEY)]))
                if row is not None:
                    out.execute(f"INSERT INTO records VALUES ({marks})", row)
            out.commit()
    except (LedgerUnreadable, sqlite3.Error) as exc:
        out_path.unlink(missing_ok=True)
        return FileMerge(FileKind.LEDGER, b"", False, [f"import ledger not merged ({exc}); kept ours"]), None
    except BaseException:
        out_path.unlink(missing_ok=True)  # interrupted: no temporary file left beside the ledger
        raise
    messages = [
        f"import ledger: {len(both)} record(s) imported on both machines; kept the later import"
        + (f" (e.g. {both[0]})" if both else "")
    ]
    return FileMerge(FileKind.LEDGER, b"", True, messages if both else []), out_path
