"""Re-runs decide unchanged records from the stored link recipe exactly as from the note itself."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shardpy.importers import base
from shardpy.importers.ledger import SCHEMA, ledger_path
from shardpy.importers.service import utc_now
from tests.importers.fixtures import basic_memory_project, generated_project
from tests.importers.helpers import do_import

INTO = "memories/basic-memory"


def _source(tmp_path: Path) -> Path:
    src = generated_project(tmp_path / "src", 40)
    basic_memory_project(src / "fixture")
    return src


def _both(src: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, Any], dict[str, Any]]:
    """(plan with the recipe shortcut, plan reading every note) of a dry run."""
    calls = {"n": 0}
    real = base._unchanged_by_recipe

    def counting(*a: Any) -> Any:
        got = real(*a)
        calls["n"] += got is not None
        return got

    now = utc_now()
    monkeypatch.setattr(base, "_unchanged_by_recipe", counting)
    fast = do_import("basic-memory", src, vault, now=now).plan.to_dict()
    assert calls["n"] > 0
    monkeypatch.setattr(base, "_unchanged_by_recipe", lambda *a: None)
    slow = do_import("basic-memory", src, vault, now=now).plan.to_dict()
    monkeypatch.undo()
    return fast, slow


def test_shortcut_plans_like_reading_every_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    do_import("basic-memory", src, vault, apply=True)
    fast, slow = _both(src, vault, monkeypatch)
    assert fast == slow
    assert fast["summary"]["unchanged"] == fast["summary"]["records"] - fast["summary"]["collision"]

    notes = sorted((vault / INTO).rglob("Generated Note 1*.md"))
    notes[0].write_text(notes[0].read_text("utf-8") + "\nmine\n", encoding="utf-8")  # edited in the vault
    notes[1].unlink()  # deleted in the vault
    changed = sorted(src.rglob("Generated Note 2*.md"))[0]
    changed.write_text(changed.read_text("utf-8") + "- [late] more #x\n", encoding="utf-8")
    # A new note that note 5's missing link now finds (by file stem; its vault name is its title):
    # that link is rewritten, so note 5 changes although its source did not.
    (src / "Missing Note 5.md").write_text("---\ntitle: Found Later\n---\n\nnow here\n", encoding="utf-8")
    fast, slow = _both(src, vault, monkeypatch)
    assert fast == slow
    details = {n["detail"] for n in fast["notes"]}
    assert "edited in the vault; your edits are kept" in details
    assert "deleted in the vault; not recreated" in details
    assert fast["summary"]["update"] >= 2 and fast["summary"]["create"] == 1


def test_an_older_ledger_gains_the_recipe_column(tmp_path: Path) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    path = ledger_path(vault)
    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as conn:  # the schema as first released: no links column
        conn.executescript(SCHEMA.replace("  links TEXT,\n", ""))
    assert "links" not in {r[1] for r in sqlite3.connect(path).execute("PRAGMA table_info(records)")}
    first = do_import("basic-memory", src, vault).plan.counts()  # read-only: the old table is fine
    do_import("basic-memory", src, vault, apply=True)
    with sqlite3.connect(path) as conn:
        stored = conn.execute("SELECT COUNT(*) FROM records WHERE links IS NOT NULL").fetchone()[0]
    assert stored == first["create"]
    again = do_import("basic-memory", src, vault).plan.counts()
    assert again["unchanged"] == first["create"]
