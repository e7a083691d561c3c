"""Dry runs write nothing; re-runs are idempotent, update, merge and never overwrite user edits."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from tests.importers.fixtures import MCP_RECORDS, claude_projects, mcp_lines, tree_hash
from tests.importers.helpers import do_import, rows

INTO = "memories/basic-memory"
TEA = f"{INTO}/notes/Tea Brewing Methods.md"
COFFEE = f"{INTO}/notes/Coffee Brewing Methods.md"


@pytest.mark.parametrize("fmt", ["basic-memory", "claude-code-memory", "mcp-memory"])
def test_dry_run_writes_nothing(fmt: str, tmp_path: Path, bm_project: Path, vault: Path) -> None:
    if fmt == "basic-memory":
        source = bm_project
    elif fmt == "claude-code-memory":
        source = claude_projects(tmp_path / "projects")
    else:
        source = tmp_path / "memory.jsonl"
        source.write_bytes(mcp_lines(MCP_RECORDS))
    before_vault, before_src = tree_hash(vault), tree_hash(source) if source.is_dir() else {}
    plan = do_import(fmt, source, vault).plan
    assert plan.counts()["create"] > 0
    assert tree_hash(vault) == before_vault
    assert not (vault / ".shardmind").exists()
    if source.is_dir():
        assert tree_hash(source) == before_src
    # Also after an apply: a dry run leaves the vault and its records byte-identical.
    do_import(fmt, source, vault, apply=True)
    before = tree_hash(vault)
    do_import(fmt, source, vault)
    assert tree_hash(vault) == before


def test_second_run_is_unchanged_with_zero_writes(bm_project: Path, vault: Path) -> None:
    do_import("basic-memory", bm_project, vault, apply=True)
    before = tree_hash(vault, exclude=(".shardmind/lock",))
    mtimes = {p: p.stat().st_mtime_ns for p in vault.rglob("*") if p.is_file()}
    out = do_import("basic-memory", bm_project, vault, apply=True)
    counts = out.plan.counts()
    assert counts["unchanged"] == 14 and counts["create"] == counts["update"] == 0
    assert out.applied is None and out.plan.run_id is None
    assert tree_hash(vault, exclude=(".shardmind/lock",)) == before
    assert {p: p.stat().st_mtime_ns for p in vault.rglob("*") if p.is_file() and p.name != "lock"} == {
        p: m for p, m in mtimes.items() if p.name != "lock"
    }


def test_source_edit_updates_user_edit_kept(bm_project: Path, vault: Path) -> None:
    do_import("basic-memory", bm_project, vault, apply=True)
    tea_src = bm_project / "notes/tea-brewing.md"
    tea_src.write_text(tea_src.read_text("utf-8") + "- [new] Added in the source #fresh\n", encoding="utf-8")
    coffee = vault / COFFEE
    edited = coffee.read_text("utf-8") + "\nMy own remark.\n"
    coffee.write_text(edited, encoding="utf-8")
    out = do_import("basic-memory", bm_project, vault, apply=True)
    r = rows(out.plan)
    assert r["notes/tea-brewing.md"].action == "update"
    assert r["notes/tea-brewing.md"].observations == 1
    assert r["notes/coffee-brewing.md"].action == "unchanged"
    assert "your edits are kept" in r["notes/coffee-brewing.md"].detail
    assert coffee.read_text("utf-8") == edited
    assert "- [new] Added in the source #fresh" in (vault / TEA).read_text("utf-8")
    # And then nothing more to do.
    again = do_import("basic-memory", bm_project, vault, apply=True)
    assert again.plan.counts()["update"] == 0 and again.applied is None


def test_both_sides_edited_merges(bm_project: Path, vault: Path) -> None:
    do_import("basic-memory", bm_project, vault, apply=True)
    tea_src = bm_project / "notes/tea-brewing.md"
    tea_src.write_text(
        tea_src.read_text("utf-8").replace("Steep green tea at 80C", "Steep green tea at 75C"),
        encoding="utf-8",
    )
    tea = vault / TEA
    tea.write_text(tea.read_text("utf-8") + "\n## My notes\n\nI prefer oolong.\n", encoding="utf-8")
    out = do_import("basic-memory", bm_project, vault, apply=True)
    row = rows(out.plan)["notes/tea-brewing.md"]
    assert row.action == "merge", row.detail
    text = tea.read_text("utf-8")
    assert "at 75C" in text and "I prefer oolong." in text and "<<<<<<<" not in text
    # The merge base is now the new import: a further source change merges again, edits survive.
    tea_src.write_text(tea_src.read_text("utf-8") + "- [more] Another #x\n", encoding="utf-8")
    out = do_import("basic-memory", bm_project, vault, apply=True)
    assert rows(out.plan)["notes/tea-brewing.md"].action == "merge"
    text = tea.read_text("utf-8")
    assert "I prefer oolong." in text and "- [more] Another #x" in text
    assert do_import("basic-memory", bm_project, vault).plan.counts()["merge"] == 0


@pytest.mark.parametrize("mode", ["keep", "theirs", "markers"])
def test_conflicting_edits(mode: str, bm_project: Path, vault: Path) -> None:
    do_import("basic-memory", bm_project, vault, apply=True)
    tea_src = bm_project / "notes/tea-brewing.md"
    tea_src.write_text(tea_src.read_text("utf-8").replace("at 80C", "at 75C"), encoding="utf-8")
    tea = vault / TEA
    mine = tea.read_text("utf-8").replace("at 80C", "at 90C")
    tea.write_text(mine, encoding="utf-8")
    out = do_import("basic-memory", bm_project, vault, apply=True, on_conflict=mode)
    row = rows(out.plan)["notes/tea-brewing.md"]
    assert row.action == "conflict"
    text = tea.read_text("utf-8")
    if mode == "keep":
        assert text == mine
        # Reported again on the next run: a conflict is never silently dropped.
        assert (
            rows(do_import("basic-memory", bm_project, vault).plan)["notes/tea-brewing.md"].action
            == "conflict"
        )
    elif mode == "theirs":
        assert "at 75C" in text and "at 90C" not in text
        backup = vault / ".shardmind/imports" / str(out.plan.run_id) / "backups" / TEA
        assert backup.read_text("utf-8") == mine
    else:
        assert "<<<<<<< yours" in text and ">>>>>>> import" in text
        assert "at 75C" in text and "at 90C" in text
    assert out.plan.counts()["error"] == 0


def test_deleted_note_is_not_recreated(bm_project: Path, vault: Path) -> None:
    do_import("basic-memory", bm_project, vault, apply=True)
    (vault / TEA).unlink()
    row = rows(do_import("basic-memory", bm_project, vault, apply=True).plan)["notes/tea-brewing.md"]
    assert row.action == "unchanged" and "deleted" in row.detail
    assert not (vault / TEA).exists()
    tea_src = bm_project / "notes/tea-brewing.md"
    tea_src.write_text(tea_src.read_text("utf-8") + "- [new] x #y\n", encoding="utf-8")
    row = rows(do_import("basic-memory", bm_project, vault, apply=True).plan)["notes/tea-brewing.md"]
    assert row.action == "conflict" and not (vault / TEA).exists()
    row = rows(do_import("basic-memory", bm_project, vault, apply=True, on_conflict="theirs").plan)[
        "notes/tea-brewing.md"
    ]
    assert (vault / TEA).exists()


def test_title_change_keeps_the_vault_path(bm_project: Path, vault: Path) -> None:
    do_import("basic-memory", bm_project, vault, apply=True)
    tea_src = bm_project / "notes/tea-brewing.md"
    tea_src.write_text(
        tea_src.read_text("utf-8").replace("title: Tea Brewing Methods", "title: Tea Methods"), "utf-8"
    )
    out = do_import("basic-memory", bm_project, vault, apply=True)
    row = rows(out.plan)["notes/tea-brewing.md"]
    assert row.action == "update" and row.vault_path == TEA
    assert "- Tea Methods" in (vault / TEA).read_text("utf-8")  # the new title becomes an alias


def test_gone_records_are_reported_not_deleted(bm_project: Path, vault: Path) -> None:
    do_import("basic-memory", bm_project, vault, apply=True)
    (bm_project / "notes/tea-brewing.md").unlink()
    plan = do_import("basic-memory", bm_project, vault).plan
    assert ("notes/tea-brewing.md", TEA) in plan.gone
    assert (vault / TEA).exists()


def test_paths_owned_by_another_record_or_import(tmp_path: Path, vault: Path) -> None:
    a = tmp_path / "a"
    (a / "person").mkdir(parents=True)
    (a / "person/Dana.md").write_text("- [n] from basic-memory #t\n", encoding="utf-8")
    do_import("basic-memory", a, vault, apply=True, into="shared")
    # A new record wanting the path of a record imported before: collision, the earlier one keeps it.
    (a / "person/other.md").write_text("---\ntitle: Dana\n---\nother\n", encoding="utf-8")
    r = rows(do_import("basic-memory", a, vault, into="shared").plan)
    assert r["person/Dana.md"].action == "unchanged"
    assert (
        r["person/other.md"].action == "collision" and "imported there before" in r["person/other.md"].detail
    )
    # Another format landing on the same path: collision naming the owner.
    graph = tmp_path / "memory.jsonl"
    graph.write_bytes(
        mcp_lines([{"type": "entity", "name": "Dana", "entityType": "person", "observations": []}])
    )
    out = do_import("mcp-memory", graph, vault, apply=True, into="shared/person")  # one graph folder
    row = rows(out.plan)["memory.jsonl#entity=Dana"]
    assert row.action == "collision" and "person/Dana.md (basic-memory into shared)" in row.detail
    assert out.plan.failed
    assert "from basic-memory" in (vault / "shared/person/Dana.md").read_text("utf-8")


def test_source_errors(tmp_path: Path, vault: Path) -> None:
    with pytest.raises(ShardpyError) as e:
        do_import("basic-memory", tmp_path / "nope", vault)
    assert e.value.code == "IMPORT_SOURCE_MISSING"
    f = tmp_path / "file.md"
    f.write_text("x", encoding="utf-8")
    with pytest.raises(ShardpyError) as e:
        do_import("basic-memory", f, vault)
    assert e.value.code == "IMPORT_SOURCE_NOT_DIRECTORY"
    with pytest.raises(ShardpyError) as e:
        do_import("basic-memory", vault, vault)
    assert e.value.code == "IMPORT_SOURCE_OVERLAPS"
    with pytest.raises(ShardpyError) as e:
        do_import("basic-memory", tmp_path, vault, into="../out")
    assert e.value.code == "IMPORT_INTO_UNSAFE"
    with pytest.raises(ShardpyError) as e:
        do_import("basic-memory", tmp_path, tmp_path / "missing-vault")
    assert e.value.code == "IMPORT_VAULT_MISSING"
