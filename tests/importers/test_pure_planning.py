"""Issue 27: import planning is pure - it ends before the first journal write of ``--apply``.

The planner (``shardpy/importers/``) makes a whole ``plan.importplan.Plan``
and writes nothing, not even a journal row; only then does the apply stage
(``flows/importflow._journal_plan``) make the run's journal, fill it with the
steps made again from the plan (``importers/steps.py``), seal it and write.
A step that comes out other than planned is not written, and its row says why.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shardpy.flows import importflow
from shardpy.plan.importplan import Plan
from tests.importers.fixtures import MCP_RECORDS, claude_projects, generated_project, mcp_lines, tree_hash
from tests.importers.helpers import do_import, rows

PACKAGE = Path(__file__).resolve().parents[2] / "shardpy"
INTO = "memories/basic-memory"
# The one importers module that makes a plan's steps with their bytes: it yields them, the flow
# journals them (it writes nothing either, but it is the apply stage's, not planning's).
APPLY_STAGE = "importers/steps.py"


def _tree(rel: str) -> ast.Module:
    return ast.parse((PACKAGE / rel).read_text(encoding="utf-8"), filename=rel)


def _names(tree: ast.Module) -> set[str]:
    """Every name and attribute the module mentions, and every module it imports."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.add(node.id)
        elif isinstance(node, ast.Attribute):
            out.add(node.attr)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


# A planning module reaching the writer: the run journal, a step sink, the apply package.
WRITER_NAMES = frozenset({"Journal", "StepSink", "sink", "seal", "journal"})


def _reaches_the_writer(names: set[str]) -> list[str]:
    return sorted(n for n in names if n in WRITER_NAMES or n.startswith("shardpy.apply"))


def test_the_import_planner_never_reaches_the_journal() -> None:
    """No importers module names the journal, a sink or shardpy.apply (the AST check of
    tests/test_one_writer.py already refuses any file write there)."""
    found = {}
    for path in sorted((PACKAGE / "importers").glob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if hits := _reaches_the_writer(_names(_tree(rel))):
            found[rel] = hits
    assert found == {}, "planning hands its steps over in the Plan (Plan.writes), never to a journal"
    planner = _tree("importers/planner.py")
    build = next(n for n in ast.walk(planner) if isinstance(n, ast.FunctionDef) and n.name == "build_plan")
    assert [a.arg for a in build.args.kwonlyargs if a.arg == "sink"] == []


def test_the_flow_makes_the_journal_only_from_a_whole_plan() -> None:
    """In importflow, the journal is created only by ``_journal_plan``, which takes a made Plan and
    is called after ``build_plan`` has returned."""
    tree = _tree("flows/importflow.py")
    creates: list[str] = []
    for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
        for call in (c for c in ast.walk(fn) if isinstance(c, ast.Call)):
            f = call.func
            if (
                isinstance(f, ast.Attribute)
                and f.attr == "create"
                and getattr(f.value, "id", "") == "Journal"
            ):
                creates.append(fn.name)
    assert creates == ["_journal_plan"]
    run = next(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name == "run_import")
    lines = {
        name: [
            c.lineno for c in ast.walk(run) if isinstance(c, ast.Call) and getattr(c.func, "id", "") == name
        ]
        for name in ("build_plan", "_journal_plan")
    }
    assert lines["_journal_plan"] and lines["build_plan"]
    assert max(lines["build_plan"]) < min(lines["_journal_plan"])


def test_the_checker_sees_a_planner_reaching_the_journal() -> None:
    bad = ast.parse(
        "from shardpy.apply.batch import Journal\ndef plan(sink):\n    sink.add(1)\n    j.seal()\n"
    )
    assert _reaches_the_writer(_names(bad)) == ["Journal", "seal", "shardpy.apply.batch", "sink"]
    assert _reaches_the_writer(_names(ast.parse("def plan(x):\n    return x.add(1)\n"))) == []


def _source(fmt: str, tmp_path: Path) -> Path:
    if fmt == "basic-memory":
        return generated_project(tmp_path / "src", 30)
    if fmt == "claude-code-memory":
        return claude_projects(tmp_path / "projects")
    source = tmp_path / "memory.jsonl"
    source.write_bytes(mcp_lines(MCP_RECORDS))
    return source


def _after_planning(monkeypatch: pytest.MonkeyPatch, then: Callable[[Plan], None]) -> None:
    """Run ``then(plan)`` inside ``--apply``, as planning returns (before anything else happens)."""
    real = importflow.build_plan

    def planning(*args: Any, **kwargs: Any) -> Plan:
        plan = real(*args, **kwargs)
        then(plan)
        return plan

    monkeypatch.setattr(importflow, "build_plan", planning)


@pytest.mark.parametrize("fmt", ["basic-memory", "claude-code-memory", "mcp-memory"])
def test_apply_plans_without_writing(fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--apply's planning leaves the vault (and .shardmind/) as it found it: no run folder, no
    journal (before issue 27's change the journal was made first and filled while planning)."""
    source = _source(fmt, tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Home.md").write_text("# Home\n", encoding="utf-8")
    before = tree_hash(vault)
    seen: list[dict[str, str]] = []
    _after_planning(monkeypatch, lambda plan: seen.append(tree_hash(vault)))
    out = do_import(fmt, source, vault, apply=True)
    assert out.plan.run_id is not None and out.applied is not None and out.applied.written > 0
    assert seen == [before], sorted(set(seen[0]) ^ set(before))


def test_a_source_changed_after_planning_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The plan keeps each step's identity, not its bytes: a note whose source changed after it was
    planned is refused when its step is made again (an error row), never written with either
    version; the rest is imported. (Before, the bytes read while planning were written.)"""
    src = generated_project(tmp_path / "src", 12)
    vault = tmp_path / "vault"
    vault.mkdir()
    victim = sorted(src.rglob("*.md"))[3]
    rel = victim.relative_to(src).as_posix()

    def edit_source(plan: Plan) -> None:
        assert rows(plan)[rel].action == "create"
        victim.write_text(victim.read_text("utf-8") + "\nwritten after the plan\n", encoding="utf-8")

    _after_planning(monkeypatch, edit_source)
    out = do_import("basic-memory", src, vault, apply=True)
    row = rows(out.plan)[rel]
    assert row.action == "error" and "source changed" in row.detail and row.step is None
    assert not (vault / row.vault_path).exists()
    assert out.applied is not None and out.applied.written == len(out.plan.notes) - 1
    assert out.result is not None and out.result["outcomes"] == {"written": len(out.plan.notes) - 1}
    monkeypatch.undo()
    again = do_import("basic-memory", src, vault, apply=True)  # the next run brings it in
    assert rows(again.plan)[rel].action == "create"
    assert "written after the plan" in (vault / row.vault_path).read_text("utf-8")


def test_a_vault_note_edited_after_planning_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A planned update whose vault note the user edits before the step is made is not written."""
    src = generated_project(tmp_path / "src", 12)
    vault = tmp_path / "vault"
    vault.mkdir()
    do_import("basic-memory", src, vault, apply=True)
    source = sorted(src.rglob("*.md"))[5]
    source.write_text(source.read_text("utf-8") + "- [late] changed in the source #x\n", encoding="utf-8")
    rel = source.relative_to(src).as_posix()
    mine = "\nmy edit, made while the import ran\n"

    def edit_vault(plan: Plan) -> None:
        row = rows(plan)[rel]
        assert row.action == "update" and row.pre_sha is not None
        note = vault / row.vault_path
        note.write_text(note.read_text("utf-8") + mine, encoding="utf-8")

    runs = sorted((vault / ".shardmind/imports").glob("2*"))
    _after_planning(monkeypatch, edit_vault)
    out = do_import("basic-memory", src, vault, apply=True)
    row = rows(out.plan)[rel]
    assert row.action == "conflict" and row.detail == importflow.CHANGED_MEANWHILE and row.step is None
    assert (vault / row.vault_path).read_text("utf-8").endswith(mine)
    assert out.plan.run_id is None and out.applied is None  # it was the run's one step: no run
    assert sorted((vault / ".shardmind/imports").glob("2*")) == runs
