"""A graph the reference server wrote, imported (``import --from mcp-memory``), is the graph
``shardpy serve`` answers (read_graph over MCP, compared as sets with the reference's own
read_graph of the file), and ``shardpy memory export`` gives back the file's entities,
observations and relations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio

from tests.graph.kit import as_sets, graph_manifest
from tests.oracle import memory_server_session
from tests.serve.kit import World, connect
from tests.shardkit import run_shardpy

ENTITIES = [
    {
        "name": "Dana",
        "entityType": "person",
        "observations": ["Works on routing", "[team] on the memory team"],
    },
    {
        "name": "Acme Corp",
        "entityType": "organization",
        "observations": ["Makes anvils", "line one\nline two"],
    },
    {"name": "Project: Apollo/v2", "entityType": "project", "observations": []},
    {"name": "Ünïcödé 名前", "entityType": "", "observations": ["[not a key!] text", "\\escaped"]},
]
RELATIONS = [
    {"from": "Dana", "to": "Acme Corp", "relationType": "works_at"},
    {"from": "Dana", "to": "Project: Apollo/v2", "relationType": "leads"},
    {"from": "Acme Corp", "to": "Nobody", "relationType": "is owed by"},  # no such entity
    {"from": "Ghost", "to": "Dana", "relationType": '"haunts"'},  # a start with no entity
]


async def _reference(graph: Path) -> dict[str, Any]:
    async with memory_server_session(graph) as s:
        await s.call_tool("create_entities", {"entities": ENTITIES})
        await s.call_tool("create_relations", {"relations": RELATIONS})
        r = await s.call_tool("read_graph", {})
        assert r.structured_content is not None
        return dict(r.structured_content)


async def _ours(world: World) -> dict[str, Any]:
    async with connect(world, cwd=world.repos["atlas"]) as s:
        r = await s.client.call_tool("read_graph", {})
        assert r.structured_content is not None
        return dict(r.structured_content)


def test_import_then_serve_then_export(tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    reference = anyio.run(_reference, graph)
    vault = tmp_path / "vault"
    graph_manifest(vault)
    done = run_shardpy("import", "--from", "mcp-memory", graph, vault, "--apply", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (vault / "memories/graph/Dana.md").is_file()

    (tmp_path / "atlas").mkdir()
    world = World(tmp_path, vault, tmp_path, {"atlas": tmp_path / "atlas"})
    served = anyio.run(_ours, world)
    assert as_sets(served) == as_sets(reference)

    out = tmp_path / "export.jsonl"
    done = run_shardpy("memory", "export", vault, "-o", out, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    exported = {json.dumps(json.loads(line), sort_keys=True) for line in out.read_text("utf-8").split("\n")}
    original = {json.dumps(json.loads(line), sort_keys=True) for line in graph.read_text("utf-8").split("\n")}
    assert exported == original

    shown = run_shardpy("memory", "show", "Dana", "--vault", vault, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    dana = json.loads(shown.stdout)
    assert [(f["key"], f["text"]) for f in dana["facts"]] == [
        (None, "Works on routing"),
        ("team", "on the memory team"),
    ]
    assert dana["incoming"] == [{"from": "Ghost", "relationType": '"haunts"'}]
    text = run_shardpy("memory", "show", "Dana", "--vault", vault, cwd=tmp_path)
    assert "[team] on the memory team" in text.stdout and "leads → Project: Apollo/v2" in text.stdout

    bad = run_shardpy("memory", "export", vault, "--as-of", "someday", cwd=tmp_path)
    assert (
        bad.returncode == 1 and "GRAPH_BAD_AS_OF" in bad.stderr + bad.stdout and "Traceback" not in bad.stderr
    )
    missing = run_shardpy("memory", "show", "Nobody", "--vault", vault, "--json", cwd=tmp_path)
    assert missing.returncode == 1 and json.loads(missing.stdout)["error"]["code"] == "GRAPH_ENTITY_NOT_FOUND"
    before = run_shardpy("memory", "export", vault, "--as-of", "1990-01-01", cwd=tmp_path)
    assert all(not json.loads(line).get("observations") for line in before.stdout.splitlines())
