"""The import ledger's schema is made in one transaction, and a ledger a kill left half made is
still read and completed (CI once saw `test_resume.py` refuse its own ledger: a kill between the
table and its index left "it lacks the index 'records_target'")."""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from shardpy.vault.ledger import SCHEMA, Ledger, ledger_path


def _objects(path: Path) -> set[str]:
    with contextlib.closing(sqlite3.connect(path)) as conn:
        return {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}


def test_the_schema_is_all_or_nothing(tmp_path: Path) -> None:
    """The index's statement fails (its name is taken); the table made before it is undone too.
    Without the one transaction each statement commits alone and the table stays."""
    path = tmp_path / "ledger.sqlite3"
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TABLE records_target (x)")
        conn.commit()
        with pytest.raises(sqlite3.OperationalError):
            conn.executescript(SCHEMA)
    assert _objects(path) == {"records_target"}


def test_a_ledger_without_its_index_is_read_and_the_next_record_makes_it(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    path = ledger_path(vault)
    path.parent.mkdir(parents=True)
    table = SCHEMA.split("CREATE INDEX")[0].replace("BEGIN;", "")
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript(table)
    assert _objects(path) == {"records", "sqlite_autoindex_records_1"}
    ledger = Ledger.open_readonly(vault)
    assert ledger.targets() == set()
    ledger.close()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript(SCHEMA)
    assert "records_target" in _objects(path)
