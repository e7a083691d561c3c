"""Item 4: an MCP memory entity named "" (the reference server accepts it), or
with a name that sanitises to nothing, is imported under a stable placeholder
note name; its name stays in the frontmatter, its observations and the
relations to and from it are kept, and a second import changes nothing."""

from __future__ import annotations

from pathlib import Path

from shardpy.notes.frontmatter import split_frontmatter
from tests.importers.fixtures import mcp_lines
from tests.importers.helpers import do_import, rows

INTO = "memories/graph"
RECORDS: list[dict[str, object]] = [
    {"type": "entity", "name": "", "entityType": "thing", "observations": ["said by nobody"]},
    {"type": "entity", "name": "???", "entityType": "thing", "observations": ["only marks"]},
    {"type": "entity", "name": "Dana", "entityType": "person", "observations": ["real"]},
    {"type": "relation", "from": "Dana", "to": "", "relationType": "knows"},
    {"type": "relation", "from": "", "to": "Dana", "relationType": "mentions"},
]


def _source(tmp_path: Path) -> Path:
    path = tmp_path / "src" / "memory.jsonl"
    path.parent.mkdir(parents=True)
    path.write_bytes(mcp_lines(RECORDS))
    return path


def test_empty_and_unsanitisable_names_are_imported(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    source = _source(tmp_path)
    plan = do_import("mcp-memory", source, vault, apply=True).plan
    assert plan.skipped == []
    r = rows(plan)
    empty = r["memory.jsonl#entity="].vault_path
    marks = r["memory.jsonl#entity=???"].vault_path
    assert {empty, marks} == {f"{INTO}/untitled.md", f"{INTO}/untitled (2).md"}
    note = (vault / empty).read_text("utf-8")
    split = split_frontmatter(note)
    assert split.data["entity"] == ""
    assert split.data["source_path"] == "memory.jsonl#entity="
    assert "aliases" not in split.data
    assert "- said by nobody" in note
    assert f"[[{Path(empty).stem}|" in note or "mentions [[Dana]]" in note
    dana = (vault / f"{INTO}/Dana.md").read_text("utf-8")
    assert f"knows [[{Path(empty).stem}" in dana
    links = {(lr.source_path, lr.text): lr for lr in plan.links}
    assert links[("memory.jsonl#entity=Dana", "[[]]")].target == empty
    again = do_import("mcp-memory", source, vault, apply=True).plan
    assert again.run_id is None  # nothing to write: the placeholder names are stable
