"""The graph tools over real MCP stdio (the SDK client against ``python -m shardpy serve``):
reach per caller, the extensions (key, as_of, query_graph), bad input, the audit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.graph.kit import answer, graph_manifest
from tests.serve.kit import World, connect


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    vault = tmp_path / "vault"
    graph_manifest(vault)
    w = World(tmp_path, vault, tmp_path)
    for name in ("atlas", "beta"):
        (tmp_path / name).mkdir()
        w.repos[name] = tmp_path / name
    yield w


async def _calls(world: World, repo: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    async with connect(world, cwd=world.repos[repo]) as s:
        out = []
        for tool, args in calls:
            r = await s.client.call_tool(tool, args)
            got = answer(r)
            got["meta"] = (r.meta or {}).get("shardpy/error")
            out.append(got)
        return out


def _run(world: World, repo: str, calls: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = anyio.run(_calls, world, repo, calls)
    return result


def _ent(name: str, *obs: str) -> dict[str, Any]:
    return {"name": name, "entityType": "thing", "observations": list(obs)}


def _keyed(name: str, text: str, key: str) -> dict[str, Any]:
    return {"entityName": name, "contents": [text], "key": key}


def test_each_caller_sees_its_reach(world: World) -> None:
    atlas = _run(world, "atlas", [
        ("create_entities", {"entities": [_ent("Atlas DB", "postgres 16")]}),
        ("create_entities", {"entities": [_ent("Shared", "everyone reads this")], "scope": "general"}),
        ("create_relations", {"relations": [{"from": "Shared", "to": "Atlas DB", "relationType": "uses"}]}),
        ("add_observations", {"observations": [_keyed("Atlas DB", "port 5432", "port")]}),
        ("add_observations", {"observations": [_keyed("Atlas DB", "port 6432", "port")]}),
        ("read_graph", {}),
        ("read_graph", {"as_of": "1999-01-01"}),
        ("query_graph", {"names": ["Shared"], "depth": 2}),
    ])  # fmt: skip
    assert not any(a["error"] for a in atlas), atlas
    graph = atlas[5]["structured"]
    assert {e["name"]: e["observations"] for e in graph["entities"]} == {
        "Atlas DB": ["postgres 16", "[port] port 6432"],  # a keyed fact shows its key
        "Shared": ["everyone reads this"],
    }
    assert graph["relations"] == [{"from": "Shared", "to": "Atlas DB", "relationType": "uses"}]
    assert all(e["observations"] == [] for e in atlas[6]["structured"]["entities"])
    walk = atlas[7]["structured"]
    assert {(e["name"], e["distance"]) for e in walk["entities"]} == {("Shared", 0), ("Atlas DB", 1)}
    port = [f for e in walk["entities"] for f in e["facts"] if f["key"] == "port"]
    assert [f["text"] for f in port] == ["port 6432"] and port[0]["valid_to"] is None

    note = (world.vault / "memories/graph/Atlas DB.md").read_text(encoding="utf-8")
    assert "scope: project\nprojects:\n- atlas\n" in note
    assert "## Superseded\n\n- [port] port 5432 (valid " in note
    assert "scope: general\n" in (world.vault / "memories/graph/Shared.md").read_text(encoding="utf-8")

    beta = _run(world, "beta", [
        ("read_graph", {}),
        ("add_observations", {"observations": [{"entityName": "Atlas DB", "contents": ["mine now"]}]}),
        ("create_entities", {"entities": [_ent("Atlas DB", "hijack")]}),
        ("delete_entities", {"entityNames": ["Atlas DB"]}),
        ("open_nodes", {"names": ["Atlas DB", "Shared"]}),
        ("search_nodes", {"query": "postgres"}),
    ])  # fmt: skip
    assert beta[0]["structured"] == {
        "entities": [{"name": "Shared", "entityType": "thing", "observations": ["everyone reads this"]}],
        "relations": [],  # a relation to an entity beta cannot see is not shown
    }
    assert beta[1]["error"] and beta[1]["text"] == "Entity with name Atlas DB not found"
    assert beta[1]["meta"]["code"] == "GRAPH_ENTITY_NOT_FOUND"
    assert beta[2]["structured"] == {"entities": []}
    assert not beta[3]["error"]
    assert [e["name"] for e in beta[4]["structured"]["entities"]] == ["Shared"]
    assert beta[5]["structured"] == {"entities": [], "relations": []}
    # beta changed nothing of atlas's
    assert (world.vault / "memories/graph/Atlas DB.md").read_text(encoding="utf-8") == note

    events = [line["event"] for line in world.audit()]
    assert events.count("tool:create_entities") == 3 and "tool:query_graph" in events
    failed = [line for line in world.audit() if line.get("status") == "error"]
    assert failed and failed[0]["error"] == "GRAPH_ENTITY_NOT_FOUND"


BAD: list[tuple[str, dict[str, Any], str]] = [
    ("create_entities", {"entities": [_ent("x" * 201)]}, "GRAPH_BAD_NAME"),
    # one bad item: none of the call is written
    ("create_entities", {"entities": [_ent("Half", "ok"), _ent("bad\x01")]}, "GRAPH_BAD_NAME"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": ["half"]},
                                           {"entityName": "Ghost", "contents": ["x"]}]},
     "GRAPH_ENTITY_NOT_FOUND"),
    ("create_entities", {"entities": [_ent("")]}, "GRAPH_BAD_NAME"),
    ("create_entities", {"entities": [_ent("   ")]}, "GRAPH_BAD_NAME"),
    ("create_entities", {"entities": [_ent("bell\x07")]}, "GRAPH_BAD_NAME"),
    ("create_entities", {"entities": [_ent("nul\x00")]}, "SERVE_BAD_TEXT"),
    ("create_entities", {"entities": [_ent("ok", "esc\x1b[31m")]}, "GRAPH_BAD_TEXT"),
    ("create_entities", {"entities": [_ent("ok", "x" * 10_000_000)]}, "GRAPH_TOO_LARGE"),
    ("create_entities", {"entities": [_ent(f"e{i}") for i in range(10_000)]}, "GRAPH_TOO_MANY"),
    ("create_relations", {"relations": [{"from": "A", "to": "A", "relationType": "r"}]},
     "GRAPH_SELF_RELATION"),
    ("create_relations", {"relations": [{"from": "A", "to": "B", "relationType": ""}]}, "GRAPH_BAD_NAME"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": ["x"], "key": "Bad Key"}]},
     "GRAPH_BAD_KEY"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": ["x", "y"], "key": "k"}]},
     "GRAPH_BAD_KEY"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": [], "key": "k",
                                            "valid_to": "2020-01-01"}]}, "GRAPH_NO_LIVE_KEY"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": [], "key": "k",
                                            "valid_to": "tomorrow"}]}, "GRAPH_BAD_AS_OF"),
    ("read_graph", {"as_of": "last tuesday"}, "GRAPH_BAD_AS_OF"),
    ("open_nodes", {"names": ["Real"], "as_of": "2025-13-45"}, "GRAPH_BAD_AS_OF"),
    ("search_nodes", {"query": "x", "as_of": 17}, "SERVE_BAD_ARGUMENTS"),
    ("read_graph", {"unknown": 1}, "SERVE_BAD_ARGUMENTS"),
    # issue 28, "Bad input", on every tool that takes it (not only create_entities)
    ("add_observations", {"observations": [{"entityName": "Real", "contents": ["x" * 10_000_000]}]},
     "GRAPH_TOO_LARGE"),
    ("add_observations", {"observations": [{"entityName": "x" * 201, "contents": ["x"]}]}, "GRAPH_BAD_NAME"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": ["x"], "key": "k" * 65}]},
     "GRAPH_BAD_KEY"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": ["x"], "key": "-k"}]},
     "GRAPH_BAD_KEY"),
    ("add_observations", {"observations": [{"entityName": "Real", "contents": [f"c{i}"]}
                                           for i in range(10_000)]}, "GRAPH_TOO_MANY"),
    ("create_relations", {"relations": [{"from": "A", "to": "x" * 201, "relationType": "r"}]},
     "GRAPH_BAD_NAME"),
    ("create_relations", {"relations": [{"from": "", "to": "B", "relationType": "r"}]}, "GRAPH_BAD_NAME"),
    ("create_relations", {"relations": [{"from": "A", "to": "B", "relationType": "r\x1b"}]},
     "GRAPH_BAD_NAME"),
    ("create_relations", {"relations": [{"from": f"a{i}", "to": "B", "relationType": "r"}
                                        for i in range(10_000)]}, "GRAPH_TOO_MANY"),
    ("delete_entities", {"entityNames": [f"e{i}" for i in range(10_000)]}, "GRAPH_TOO_MANY"),
    ("open_nodes", {"names": [f"e{i}" for i in range(10_000)]}, "GRAPH_TOO_MANY"),
    ("search_nodes", {"query": "x", "as_of": "yesterday"}, "GRAPH_BAD_AS_OF"),
    ("query_graph", {"names": ["Real"], "as_of": "2025-02-30"}, "GRAPH_BAD_AS_OF"),
]  # fmt: skip


def test_bad_input_is_a_typed_error_and_writes_nothing(world: World) -> None:
    calls = [("create_entities", {"entities": [_ent("Real", "kept")]})]
    calls += [(tool, args) for tool, args, _ in BAD]
    calls += [("create_entities", {"entities": [_ent("../../outside"), _ent(".hidden"), _ent("a/b\\c")]})]
    calls += [("read_graph", {})]
    got = _run(world, "atlas", calls)
    for (tool, _args, code), a in zip(BAD, got[1:-2], strict=True):
        assert a["error"], (tool, code, a)
        assert a["meta"]["code"] == code, (tool, code, a)
        assert "Traceback" not in a["text"] and str(world.root) not in a["text"]
    names = {e["name"]: e["observations"] for e in got[-1]["structured"]["entities"]}
    assert names == {"Real": ["kept"], "../../outside": [], ".hidden": [], "a/b\\c": []}
    notes = sorted(p.relative_to(world.vault).as_posix() for p in world.vault.rglob("*.md"))
    assert all(n.startswith("memories/graph/") and n.count("/") == 2 for n in notes), notes
    assert len(notes) == 4
    assert not (world.root / "outside.md").exists()


def test_health_reports_an_entity_note_that_no_longer_parses(world: World) -> None:
    folder = world.vault / "memories/graph"
    folder.mkdir(parents=True)
    broken = "---\nentity: [never closed\n---\n# Broken\n\n## Observations\n\n- a fact\n"
    (folder / "Broken.md").write_text(broken, encoding="utf-8")
    world.repos["vault"] = world.vault  # the vault's own session (its root is the vault)
    got = _run(world, "atlas", [
        ("add_observations", {"observations": [{"entityName": "Broken", "contents": ["more"]}]}),
        ("create_entities", {"entities": [_ent("Broken", "new")]}),
        ("read_graph", {}),
        ("health", {}),
    ])  # fmt: skip
    assert got[0]["error"] and got[0]["meta"]["code"] == "GRAPH_ENTITY_NOT_FOUND"  # not read: not written
    assert got[1]["structured"] == {"entities": [_ent("Broken", "new")]}  # a note of its own
    assert got[3]["structured"]["graph"] == {"entities": 1, "invalid": [], "invalid_count": 1}
    mine = _run(world, "vault", [("health", {})])
    assert mine[0]["structured"]["graph"]["invalid"] == [
        {
            "path": "memories/graph/Broken.md",
            "problem": mine[0]["structured"]["graph"]["invalid"][0]["problem"],
        }
    ]
    assert (folder / "Broken.md").read_text(encoding="utf-8") == broken  # never rewritten
