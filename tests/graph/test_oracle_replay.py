"""The same sequences of tool calls, error cases included, on the reference memory server
(``@modelcontextprotocol/server-memory``, installed from npm by tests/oracle.py) and on
``shardpy serve``: every answer and the final read_graph agree (graphs as sets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.graph.kit import Call, as_sets, graph_manifest, replay, same
from tests.oracle import memory_server_script, memory_server_session
from tests.serve.kit import World, connect

E = "create_entities"


def ent(name: str, etype: str = "person", *obs: str) -> dict[str, Any]:
    return {"name": name, "entityType": etype, "observations": list(obs)}


def rel(a: str, b: str, t: str) -> dict[str, str]:
    return {"from": a, "to": b, "relationType": t}


SEQUENCES: dict[str, list[Call]] = {
    "build-and-read": [
        (E, {"entities": [ent("Alice", "person", "likes tea", "works remotely"), ent("Acme", "company")]}),
        (E, {"entities": [ent("Alice", "robot", "other"), ent("Bob", "person")]}),  # Alice ignored
        (
            "create_relations",
            {"relations": [rel("Alice", "Acme", "works_at"), rel("Bob", "Acme", "works_at")]},
        ),
        ("create_relations", {"relations": [rel("Alice", "Acme", "works_at"), rel("Alice", "Bob", "knows")]}),
        (
            "add_observations",
            {"observations": [{"entityName": "Alice", "contents": ["likes tea", "plays go"]}]},
        ),
        (
            "add_observations",
            {
                "observations": [
                    {"entityName": "Bob", "contents": ["x"]},
                    {"entityName": "Nobody", "contents": ["y"]},
                ]
            },
        ),  # fails whole
        ("read_graph", {}),
        ("search_nodes", {"query": "TEA"}),
        ("search_nodes", {"query": "company"}),
        ("search_nodes", {"query": "nothing matches this"}),
        ("open_nodes", {"names": ["Alice", "Ghost"]}),
        ("open_nodes", {"names": ["Acme"]}),
    ],
    "deletes": [
        (E, {"entities": [ent("A", "t", "one", "two"), ent("B", "t"), ent("C", "t")]}),
        ("create_relations", {"relations": [rel("A", "B", "r"), rel("B", "C", "r"), rel("C", "A", "s")]}),
        (
            "delete_observations",
            {
                "deletions": [
                    {"entityName": "A", "observations": ["one", "zzz"]},
                    {"entityName": "Nobody", "observations": ["x"]},
                ]
            },
        ),
        ("delete_entities", {"entityNames": ["B", "Nobody"]}),
        ("read_graph", {}),
        ("delete_relations", {"relations": [rel("C", "A", "s"), rel("C", "A", "nope")]}),
        ("open_nodes", {"names": ["A", "C"]}),
        ("delete_entities", {"entityNames": []}),
    ],
    "dangling-and-errors": [
        ("create_relations", {"relations": [rel("Ghost", "Phantom", "haunts")]}),  # neither end exists
        ("read_graph", {}),
        (E, {"entities": [ent("Ghost", "spirit", "boo")]}),
        ("read_graph", {}),
        ("search_nodes", {"query": "phantom"}),
        ("delete_entities", {"entityNames": ["Phantom"]}),  # removes the relation to it
        ("read_graph", {}),
        ("add_observations", {"observations": [{"entityName": "Phantom", "contents": ["z"]}]}),
        (E, {"entities": [{"name": "NoType"}]}),  # the reference's input validation error
        ("add_observations", {"observations": [{"entityName": "Ghost"}]}),
        ("open_nodes", {"names": []}),
    ],
    "text-shapes": [
        (
            E,
            {
                "entities": [
                    ent("Ünïcödé 名前", "thing", "[bracket] first", "line one\nline two", "  spaced"),
                    ent("Slash/Name", "thing", "\\backslash"),
                    ent("a|b#c", "odd"),
                ]
            },
        ),
        (
            "create_relations",
            {
                "relations": [
                    rel("Slash/Name", "a|b#c", "is related to"),
                    rel("a|b#c", "Ünïcödé 名前", '"quoted"'),
                ]
            },
        ),
        ("read_graph", {}),
        ("search_nodes", {"query": "LINE TWO"}),
        (
            "delete_observations",
            {"deletions": [{"entityName": "Ünïcödé 名前", "observations": ["[bracket] first"]}]},
        ),
        ("open_nodes", {"names": ["Ünïcödé 名前", "a|b#c"]}),
    ],
}


async def _run_both(tmp: Path, calls: list[Call]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    async with memory_server_session(tmp / "memory.jsonl") as ref_session:
        ref = await replay(ref_session, [*calls, ("read_graph", {})])
    vault = tmp / "vault"
    graph_manifest(vault)
    repo = tmp / "atlas"
    repo.mkdir()
    world = World(tmp, vault, tmp)
    async with connect(world, cwd=repo) as s:
        ours = await replay(s.client, [*calls, ("read_graph", {})])
    return ref, ours


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_replay_matches_the_reference(tmp_path: Path, name: str) -> None:
    memory_server_script()  # skips with the reason when node/npm or the registry are missing
    calls = SEQUENCES[name]
    ref, ours = anyio.run(_run_both, tmp_path, calls)
    for (tool, _args), r, o in zip([*calls, ("read_graph", {})], ref, ours, strict=True):
        same(r, o, tool)
    assert as_sets(ours[-1]["structured"]) == as_sets(ref[-1]["structured"])


async def _tool_lists(tmp: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    async with memory_server_session(tmp / "memory.jsonl") as ref_session:
        ref = {t.name: t for t in (await ref_session.list_tools()).tools}
    vault = tmp / "vault"
    graph_manifest(vault)
    (tmp / "atlas").mkdir()
    async with connect(World(tmp, vault, tmp), cwd=tmp / "atlas") as s:
        ours = {t.name: t for t in (await s.client.list_tools()).tools}
    return ref, ours


def _shape(schema: dict[str, Any]) -> Any:
    """A JSON Schema without descriptions and $schema: what a client validates against."""
    if isinstance(schema, dict):
        return {k: _shape(v) for k, v in schema.items() if k not in ("description", "$schema", "title")}
    if isinstance(schema, list):
        return [_shape(v) for v in schema]
    return schema


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    """Each property's type, and for arrays of objects their item properties and required keys."""
    out: dict[str, Any] = {}
    defs = schema.get("$defs", {})
    for name, prop in schema.get("properties", {}).items():
        items = prop.get("items", {})
        if "$ref" in items:  # pydantic names nested objects; the reference writes them inline
            items = defs[items["$ref"].rsplit("/", 1)[-1]]
        out[name] = (prop.get("type"), sorted(items.get("properties", {})), sorted(items.get("required", [])))
    return out


def test_same_tools_schemas_and_hints(tmp_path: Path) -> None:
    memory_server_script()
    ref, ours = anyio.run(_tool_lists, tmp_path)
    for name, tool in ref.items():
        mine = ours[name]
        # Every argument the reference takes, with the same type and required keys; shardpy's
        # extensions are optional additions (docs/MEMORY.md).
        theirs_props, my_props = _properties(tool.input_schema), _properties(mine.input_schema)
        for prop, (kind, item_props, required) in theirs_props.items():
            assert my_props[prop][0] == kind and my_props[prop][2] == required, (name, prop)
            assert set(item_props) <= set(my_props[prop][1]), (name, prop)
        assert set(tool.input_schema.get("required", [])) == set(mine.input_schema.get("required", [])), name
        assert tool.output_schema is not None and mine.output_schema is not None
        assert _shape(mine.output_schema) == _shape(tool.output_schema), name
        assert tool.annotations is not None and mine.annotations is not None
        assert (mine.annotations.read_only_hint, mine.annotations.destructive_hint) == (
            tool.annotations.read_only_hint,
            tool.annotations.destructive_hint,
        ), name
