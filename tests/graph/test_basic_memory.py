"""Notes imported from basic-memory are entities of the graph: their facts (a category that is a
key is the fact's key) and relations appear in read_graph and open_nodes; no tool rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.graph import ops
from shardpy.graph.commit import change
from shardpy.graph.store import GraphStore
from tests.graph.kit import graph_manifest
from tests.shardkit import run_shardpy


def _everyone(_e: object) -> bool:
    return True


def test_basic_memory_notes_are_read_not_rewritten(tmp_path: Path) -> None:
    source = tmp_path / "bm"
    (source / "notes").mkdir(parents=True)
    (source / "notes/coffee.md").write_text(
        "---\ntitle: Coffee Brewing\ntype: note\n---\n\n# Coffee Brewing\n\n## Observations\n"
        "- [method] Pour over provides clarity #brewing\n- [Odd Category] kept as text\n\n"
        "## Relations\n- relates_to [[Tea Brewing]]\n",
        encoding="utf-8",
    )
    (source / "notes/tea.md").write_text(
        "---\ntitle: Tea Brewing\ntype: note\n---\n\n# Tea Brewing\n", encoding="utf-8"
    )
    vault = tmp_path / "vault"
    graph_manifest(vault)
    done = run_shardpy("import", "--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    before = {p: p.read_bytes() for p in (vault / "memories").rglob("*.md")}

    store = GraphStore(vault.resolve(), "memories")
    view = ops.View(store.snapshot(), _everyone)
    graph = ops.read_graph(view, None)
    coffee = next(e for e in graph["entities"] if e["name"] == "Coffee Brewing")
    assert coffee == {
        "name": "Coffee Brewing",
        "entityType": "note",
        "observations": ["[method] Pour over provides clarity #brewing", "[Odd Category] kept as text"],
    }
    assert {"from": "Coffee Brewing", "to": "Tea Brewing", "relationType": "relates_to"} in graph["relations"]
    opened = ops.open_nodes(view, ["Tea Brewing"], None)
    assert [e["name"] for e in opened["entities"]] == ["Tea Brewing"] and opened["relations"]

    item = {"entityName": "Coffee Brewing", "contents": ["a new fact"], "key": None, "valid_to": None}
    with pytest.raises(ShardpyError) as refused:
        change(store, "t", _everyone, lambda w: ops.add_observations(w, [item], 1))
    assert refused.value.code == "GRAPH_READ_ONLY"
    # A graph entity may relate to it, and deleting the graph entity leaves the imported notes alone.
    ent = {"name": "Barista", "entityType": "person", "observations": []}
    change(store, "t", _everyone, lambda w: ops.create_entities(w, [ent], ops.Reach("general"), 1))
    rel = {"from": "Barista", "to": "Coffee Brewing", "relationType": "makes"}
    change(store, "t", _everyone, lambda w: ops.create_relations(w, [rel], ops.Reach("general")))
    change(store, "t", _everyone, lambda w: ops.delete_entities(w, ["Barista"]))
    assert {p: p.read_bytes() for p in (vault / "memories").rglob("*.md")} == before
