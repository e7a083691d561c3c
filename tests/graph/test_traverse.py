"""query_graph: both directions, bounded depth, cycles visited once, relation types, reach."""

from __future__ import annotations

from pathlib import Path

from shardpy.graph import ops
from shardpy.graph.commit import change
from shardpy.graph.note import Entity
from shardpy.graph.store import GraphStore
from shardpy.graph.traverse import query_graph
from tests.graph.kit import graph_manifest


def _everyone(_e: object) -> bool:
    return True


def test_walk(tmp_path: Path) -> None:
    graph_manifest(tmp_path / "vault")
    store = GraphStore((tmp_path / "vault").resolve(), "memories")
    names = ["A", "B", "C", "D", "E", "Secret"]
    ents = [{"name": n, "entityType": "t", "observations": [f"about {n}"]} for n in names]
    rels = [
        ("A", "B", "knows"),
        ("B", "C", "knows"),
        ("C", "A", "knows"),
        ("D", "A", "owns"),
        ("C", "E", "knows"),
    ]
    rels.append(("E", "Secret", "knows"))
    change(store, "t", _everyone, lambda w: ops.create_entities(w, ents, ops.Reach("general"), 1))
    items = [{"from": a, "to": b, "relationType": t} for a, b, t in rels]
    change(store, "t", _everyone, lambda w: ops.create_relations(w, items, ops.Reach("general")))

    def hidden(e: Entity) -> bool:
        return e.name != "Secret"

    view = ops.View(store.snapshot(), hidden)
    one = query_graph(view, ["A"], 1, None, None)
    assert {(e["name"], e["distance"]) for e in one["entities"]} == {("A", 0), ("B", 1), ("C", 1), ("D", 1)}
    assert not one["truncated"]
    three = query_graph(view, ["A"], 5, None, None)  # the cycle A-B-C-A ends; Secret is never reached
    assert {(e["name"], e["distance"]) for e in three["entities"]} == {
        ("A", 0), ("B", 1), ("C", 1), ("D", 1), ("E", 2)
    }  # fmt: skip
    assert all("Secret" not in (r["from"], r["to"]) for r in three["relations"])
    owns = query_graph(view, ["A"], 5, ["owns"], None)
    assert {e["name"] for e in owns["entities"]} == {"A", "D"}
    assert query_graph(view, ["Secret", "Nobody"], 2, None, None)["entities"] == []
    zero = query_graph(view, ["A"], 0, None, None)
    assert [e["name"] for e in zero["entities"]] == ["A"] and zero["entities"][0]["facts"][0][
        "text"
    ] == "about A"
