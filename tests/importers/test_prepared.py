"""Planning from the first pass's findings (``prepare``) equals planning by building every note."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shardpy.importers.basic_memory import BasicMemoryAdapter
from shardpy.plan.importplan import PlanOptions
from tests.importers.fixtures import basic_memory_project, generated_project
from tests.importers.helpers import do_import, planned

INTO = "memories/basic-memory"


def _plan(
    src: Path, vault: Path, *, sink: bool, on_conflict: str = "keep"
) -> tuple[dict[str, Any], list[Any]]:
    opts = PlanOptions(
        into=INTO,
        imported_at="2026-11-29T00:00:00.000Z",
        on_conflict=on_conflict,
        keep_resolved_links=True,
        source_label=str(src),
        workers=1,
    )
    return planned(BasicMemoryAdapter(src), vault, opts, apply=sink)


def _both(src: Path, vault: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> tuple[Any, Any]:
    fast = _plan(src, vault, **kw)
    monkeypatch.setattr(BasicMemoryAdapter, "prepare", lambda self, *a: None)
    slow = _plan(src, vault, **kw)
    monkeypatch.undo()
    return fast, slow


@pytest.mark.parametrize("sink", [False, True])
def test_prepared_plans_equal_built_plans(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sink: bool
) -> None:
    src = generated_project(tmp_path / "src", 40)
    basic_memory_project(src / "fixture")
    vault = tmp_path / "vault"
    vault.mkdir()
    fast, slow = _both(src, vault, monkeypatch, sink=sink)
    assert fast == slow
    assert fast[0]["summary"]["create"] > 40

    do_import("basic-memory", src, vault, apply=True)
    fast, slow = _both(src, vault, monkeypatch, sink=sink)
    assert fast == slow
    assert fast[0]["summary"]["unchanged"] > 40

    notes = sorted((vault / INTO).rglob("Generated Note 1*.md"))
    notes[0].write_text(notes[0].read_text("utf-8") + "\nmine\n", encoding="utf-8")  # edited in the vault
    notes[1].unlink()  # deleted in the vault
    for p in sorted(src.rglob("Generated Note 2*.md"))[:2]:  # changed in the source
        p.write_text(p.read_text("utf-8") + "- [late] more #x\n", encoding="utf-8")
    both = notes[2]  # changed on both sides: merged
    both.write_text(both.read_text("utf-8").replace("Some prose", "My prose"), encoding="utf-8")
    source_of_both = next(src.rglob(both.name))
    source_of_both.write_text(source_of_both.read_text("utf-8") + "- [late] both #y\n", encoding="utf-8")
    # A new note that note 5's missing link now finds (by file stem; its vault name is its title):
    # that link is rewritten, so note 5 changes although its source did not.
    (src / "Missing Note 5.md").write_text("---\ntitle: Found Later\n---\n\nnow here\n", encoding="utf-8")
    for mode in ("keep", "theirs"):
        fast, slow = _both(src, vault, monkeypatch, sink=sink, on_conflict=mode)
        assert fast == slow
        summary = fast[0]["summary"]
        assert summary["update"] >= 3 and summary["create"] == 1
        details = {n["detail"] for n in fast[0]["notes"]}
        assert "edited in the vault; your edits are kept" in details
        assert "deleted in the vault; not recreated" in details


def test_a_source_changed_after_the_first_pass_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read lazily or not: a note whose bytes changed between the passes is reported, not written."""
    src = generated_project(tmp_path / "src", 5)
    vault = tmp_path / "vault"
    vault.mkdir()
    victim = sorted(src.rglob("*.md"))[0]
    real = BasicMemoryAdapter.prepare

    def prepare_then_change(self: BasicMemoryAdapter, record: Any, *a: Any) -> Any:
        if self.root / record.source_path == victim:
            victim.write_text(victim.read_text("utf-8") + "\nlate\n", encoding="utf-8")
        return real(self, record, *a)

    monkeypatch.setattr(BasicMemoryAdapter, "prepare", prepare_then_change)
    plan, steps = _plan(src, vault, sink=True)
    rows = {n["source_path"]: n for n in plan["notes"]}
    bad = rows[victim.relative_to(src).as_posix()]
    assert bad["action"] == "error" and "changed while planning" in bad["detail"]
    assert len(steps) == 4
