# ruff: noqa: E501
"""MCP memory graph: JSONL variants, identity by exact name, dangling relations, names."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.graph.note import Entity, parse_note
from shardpy.notes.frontmatter import split_frontmatter
from tests.importers.fixtures import MCP_RECORDS, mcp_lines
from tests.importers.helpers import do_import, rows

INTO = "memories/graph"  # where the graph tools read it (docs/MEMORY.md)


def _graph(tmp_path: Path, data: bytes, name: str = "memory.jsonl") -> Path:
    p = tmp_path / "src" / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return p


def test_plan(tmp_path: Path, vault: Path) -> None:
    plan = do_import("mcp-memory", _graph(tmp_path, mcp_lines(MCP_RECORDS)), vault).plan
    r = rows(plan)
    assert r["memory.jsonl#entity=Dana"].vault_path == f"{INTO}/Dana.md"
    assert r["memory.jsonl#entity=Dana"].observations == 2
    # Names differing only by case or surrounding spaces: separate notes, reported.
    assert r["memory.jsonl#entity=Berlin"].vault_path == f"{INTO}/Berlin.md"
    assert r["memory.jsonl#entity=Berlin "].vault_path == f"{INTO}/Berlin (2).md"
    assert r["memory.jsonl#entity=postgresql"].vault_path == f"{INTO}/postgresql (2).md"
    notices = [n.message for n in plan.notices]
    assert sum("differs only by case or surrounding spaces" in m for m in notices) == 4
    # A name that is not a file name: sanitised, reported, kept in aliases.
    assert r["memory.jsonl#entity=Project: Apollo/v2"].vault_path == f"{INTO}/Project- Apollo-v2.md"
    assert any("not a valid file name" in m for m in notices)
    assert r["memory.jsonl#entity=🚀 Rocket"].vault_path == f"{INTO}/🚀 Rocket.md"
    # An empty name is imported under the placeholder name (issue 12 item 4 reversed the
    # earlier skip); a relation from an unknown entity is reported.
    assert plan.skipped == []
    assert r["memory.jsonl#entity="].vault_path == f"{INTO}/untitled.md"
    assert any("'Ghost' -haunts-> 'Dana'" in m for m in notices)
    links = {(lr.source_path, lr.text): lr for lr in plan.links}
    assert links[("memory.jsonl#entity=Dana", "[[Nobody]]")].status == "unresolved"  # dangling: kept, listed
    assert links[("memory.jsonl#entity=Dana", "[[Berlin]]")].target == f"{INTO}/Berlin.md"


def test_note_shape(tmp_path: Path, vault: Path) -> None:
    do_import("mcp-memory", _graph(tmp_path, mcp_lines(MCP_RECORDS)), vault, apply=True)
    text = (vault / INTO / "Dana.md").read_text("utf-8")
    body = text.split("---\n", 2)[2]
    page, block = body.split("<!-- shardpy:graph", 1)
    assert page == (
        "# Dana\n\n## Observations\n\n- Works on routing\n- Line one\n  Line two\n\n"
        '## Related\n\n- works_at [[Acme Corp]]\n- "is a fan of" [[Berlin]]\n'
        "- leads [[Project- Apollo-v2|Project: Apollo/v2]]\n- knows [[Nobody]]\n\n"
    )
    assert '\nrel ["leads", "Project: Apollo/v2", "Project- Apollo-v2"]\n' in block
    entity = parse_note(f"{INTO}/Dana.md", text)
    assert isinstance(entity, Entity)
    assert entity.observations() == ["Works on routing", "Line one\nLine two"]
    assert ("leads", "Project: Apollo/v2") in entity.relations  # the exact name, through the block
    data = split_frontmatter(text).data
    assert data["entity"] == "Dana" and data["entity_type"] == "person" and data["scope"] == "general"
    assert data["source_path"] == "memory.jsonl#entity=Dana"
    twin = split_frontmatter((vault / INTO / "Berlin (2).md").read_text("utf-8")).data
    assert twin["entity"] == "Berlin " and twin["aliases"] == ["Berlin "]
    ghost = split_frontmatter((vault / INTO / "Ghost.md").read_text("utf-8")).data
    assert ghost["status"] == "placeholder"  # relations start there; it is no entity (read_graph agrees)


@pytest.mark.parametrize(
    ("variant", "data"),
    [
        (
            "crlf+bom+blank lines",
            b"\xef\xbb\xbf"
            + b'{"type":"entity","name":"A","entityType":"t","observations":["x"]}\r\n\r\n  \r\n{"type":"relation","from":"A","to":"B","relationType":"r"}',
        ),
        (
            "_aim marker",
            b'{"type":"_aim","source":"mcp-knowledge-graph"}\n{"type":"entity","name":"A","entityType":"t","observations":["x"]}\n{"type":"relation","from":"A","to":"B","relationType":"r"}\n',
        ),
        (
            "extra keys (0.6.2)",
            b'{"type":"entity","name":"A","entityType":"t","observations":["x"],"createdAt":"2025-01-01"}\n{"type":"relation","from":"A","to":"B","relationType":"r","createdAt":"2025"}',
        ),
        (
            "alternative keys",
            b'{"type":"entity","entityName":"A","entityType":"t","observations":["x"]}\n{"type":"relation","from_id":"A","to_id":"B","relation_type":"r"}',
        ),
        (
            "whole-graph export",
            json.dumps(
                {
                    "entities": [{"name": "A", "entityType": "t", "observations": ["x"]}],
                    "relations": [{"from": "A", "to": "B", "relationType": "r"}],
                }
            ).encode(),
        ),
    ],
)
def test_variants(variant: str, data: bytes, tmp_path: Path, vault: Path) -> None:
    plan = do_import("mcp-memory", _graph(tmp_path, data), vault).plan
    assert [(r.name, r.type, r.observations) for r in plan.notes] == [("A", "t", 1)], variant
    assert [(lr.text, lr.status) for lr in plan.links] == [("[[B]]", "unresolved")]
    assert not plan.skipped


def test_legacy_memory_json_in_a_folder(tmp_path: Path, vault: Path) -> None:
    src = _graph(tmp_path, mcp_lines(MCP_RECORDS[:2]), name="memory.json")
    plan = do_import("mcp-memory", src.parent, vault).plan
    assert {r.source_path for r in plan.notes} == {"memory.json#entity=Dana", "memory.json#entity=Acme Corp"}


def test_bad_lines_and_duplicates(tmp_path: Path, vault: Path) -> None:
    data = (
        b'{"type":"entity","name":"A","entityType":"t","observations":["x"]}\n'
        b"{not json\n"
        b"[1, 2]\n"
        b'{"type":"mystery"}\n'
        b'{"type":"entity","name":"A","entityType":"other","observations":["x","y"]}\n'
        b'{"type":"relation","from":"A","to":"A","relationType":"self"}\n'
        b'{"type":"relation","from":"A","to":"A","relationType":"self"}'
    )
    plan = do_import("mcp-memory", _graph(tmp_path, data), vault).plan
    assert [(r.name, r.observations) for r in plan.notes] == [("A", 2)]
    reasons = {s.source_path: s.reason for s in plan.skipped}
    assert reasons["memory.jsonl#line=2"].startswith("invalid JSON")
    assert reasons["memory.jsonl#line=3"] == "not a JSON object"
    assert reasons["memory.jsonl#line=4"] == "unknown record type 'mystery'"
    messages = " | ".join(n.message for n in plan.notices)
    assert "merged into line 1" in messages and "duplicate relation" in messages
    assert [(lr.text, lr.status) for lr in plan.links] == [("[[A]]", "resolved")]  # a self-relation


def test_source_errors(tmp_path: Path, vault: Path) -> None:
    d = tmp_path / "several"
    d.mkdir()
    (d / "a.jsonl").write_text("", encoding="utf-8")
    (d / "b.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(ShardpyError) as e:
        do_import("mcp-memory", d, vault)
    assert e.value.code == "IMPORT_SOURCE_AMBIGUOUS"
    empty = tmp_path / "none"
    empty.mkdir()
    with pytest.raises(ShardpyError) as e:
        do_import("mcp-memory", empty, vault)
    assert e.value.code == "IMPORT_SOURCE_LAYOUT"
    bad = _graph(tmp_path, b"\xff\xfe\x00", name="bad.jsonl")
    with pytest.raises(ShardpyError) as e:
        do_import("mcp-memory", bad, vault)
    assert e.value.code == "IMPORT_SOURCE_ENCODING"


def test_empty_graph_is_reported(tmp_path: Path, vault: Path) -> None:
    plan = do_import("mcp-memory", _graph(tmp_path, b""), vault).plan
    assert plan.notes == [] and [n.message for n in plan.notices] == ["the graph is empty"]
