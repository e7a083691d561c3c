"""The real server over stdio, driven by the MCP SDK's client: handshake, identity, exposure, audit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.serve.kit import Shared, World, build_world, connect, shared, uri

SERVED = {
    "brain/North Star.md",
    "brain/Gotchas.md",
    "work/active/Atlas.md",
    "work/Index.md",
}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Shared, Any]]:
    """One server for the read-only tests, its caller named by the roots answer (the atlas repository);
    its first request is a resources/list, which must wait for that answer."""
    world = build_world(tmp_path_factory.mktemp("atlas"))
    with shared(world, cwd=world.repos["web"], roots=[uri(world.repos["atlas"])]) as session:
        first = session.run(session.session.client.list_resources)
        yield world, session, first


def _titles(result: dict[str, object]) -> list[str]:
    memories = result["memories"]
    assert isinstance(memories, list)
    return [m["title"] for m in memories]


def test_handshake_with_roots_scopes_every_surface(atlas: tuple[World, Shared, Any]) -> None:
    world, s, first = atlas
    client = s.session.client
    audit_before = len(world.audit())
    init = client.initialize_result
    assert init is not None and init.protocol_version == "2025-11-25"
    assert init.instructions and "Never paste vault note text" in init.instructions
    tools = {t.name: t for t in s.run(client.list_tools).tools}
    graph = {"create_entities", "create_relations", "add_observations", "delete_entities"}
    graph |= {"delete_observations", "delete_relations", "read_graph", "search_nodes", "open_nodes"}
    graph.add("query_graph")  # the memory graph's tools (docs/MEMORY.md)
    assert set(tools) == {"search", "expand", "recall", "remember", "record_work", "health"} | graph
    assert tools["remember"].input_schema["additionalProperties"] is False

    # The first caller-dependent request waited for the roots answer (the audit says whose view it was).
    served = {str(r.uri).removeprefix("vault://note/").replace("%20", " ") for r in first.resources}
    assert served == SERVED
    assert world.audit()[0]["event"] == "resources/list" and world.audit()[0]["caller"]["project"] == "atlas"

    recall = s.call("recall", {"limit": 50})
    assert recall["caller"]["project"] == "atlas" and recall["caller"]["via"] == "roots"
    # general + project-listed + both; the narrower reach first (issue 26 item 20); superseded after live;
    # never beta's, ios's or the broken one.
    assert _titles(recall) == ["Atlas only", "Both", "Everyone", "Old atlas"]
    assert recall["withheld"] == 3

    expand = s.call("expand", {"note": "[[North Star]]"})
    assert expand["path"] == "brain/North Star.md"
    links = {link["target"]: link["path"] for link in expand["links"]}
    # A link to a private note resolves to nothing: its existence is not disclosed.
    assert links == {"Gotchas": "brain/Gotchas.md", "Secret Plans": None, "Nowhere": None}
    assert expand["backlinks"] == ["work/active/Atlas.md"]

    for withheld in (
        "brain/Secret Plans.md",  # tagged private
        "brain/SOUL.md",  # never exposed (declared spelling)
        "brain/soul.md",  # ... and the spelling on disk
        "brain/Unclosed.md",  # frontmatter never closes
        "brain/Leak.md",  # symlink out of the vault
        "brain/Alias.md",  # symlink inside its root: links are never served (issue 24 item 1)
        "work/active/Cross.md",  # symlink out of its root
        "brain/linked-dir/leak.md",  # through a symlinked folder
        "reference/Ref.md",  # outside the exposed roots
        "work/active-secrets/Nope.md",  # a prefix, not a segment
        "memories/2026/11/2026-11-01 Everyone.md",  # memories are never notes
        "../outside/leak.md",
    ):
        with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
            s.call("expand", {"note": withheld})
        with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
            s.run(client.read_resource, "vault://note/" + withheld.replace(" ", "%20"))
    text = s.run(client.read_resource, "vault://note/brain/Gotchas.md")
    assert "Caches lie." in text.contents[0].text

    health = s.call("health")
    assert health["notes"]["served"] == len(SERVED)
    assert health["memories"]["invalid_count"] == 1
    assert health["broken_links"]["count"] >= 1

    lines = world.audit()[audit_before:]
    events = [line["event"] for line in lines]
    assert events[:2] == ["tool:recall", "tool:expand"] and events[-1] == "tool:health"
    assert events.count("resources/read") == 13 and events.count("tool:expand") == 13
    assert all(line["caller"]["project"] == "atlas" for line in lines)
    assert [line["status"] for line in lines].count("error") == 24


def test_launch_context_without_roots(world: World) -> None:
    async def scenario() -> None:
        # No roots capability: the working folder names the caller (its marker file wins over its name).
        async with connect(world, cwd=world.repos["beta-repo"]) as s:
            recall = await s.call("recall", {"limit": 50})
            assert recall["caller"]["project"] == "beta" and recall["caller"]["source"] == "marker"
            assert _titles(recall) == ["Beta only", "Both", "iOS", "Everyone"]
        # --project NAME (what --print-config writes) names it explicitly.
        async with connect(world, cwd=world.repos["web"], args=["--project", "atlas"]) as s:
            recall = await s.call("recall")
            assert recall["caller"] == {**recall["caller"], "project": "atlas", "source": "flag"}

    anyio.run(scenario)


def test_modern_protocol_uses_the_launch_context(world: World) -> None:
    async def scenario() -> None:
        # 2026-07-28 has no server-to-client requests: roots are never asked, the launch folder decides.
        async with connect(
            world, cwd=world.repos["beta-repo"], roots=[uri(world.repos["atlas"])], modern=True
        ) as s:
            assert s.client.protocol_version == "2026-07-28"
            recall = await s.call("recall")
            assert recall["caller"]["project"] == "beta" and recall["caller"]["via"] == "launch"

    anyio.run(scenario)


def test_caller_changing_roots_mid_session(world: World) -> None:
    async def scenario() -> None:
        async with connect(world, cwd=world.repos["web"], roots=[uri(world.repos["atlas"])]) as s:
            assert "Atlas only" in _titles(await s.call("recall"))
            await s.change_roots([uri(world.repos["beta-repo"])])
            # The very next call waits for the new answer instead of serving the stale identity.
            recall = await s.call("recall")
            assert recall["caller"]["project"] == "beta"
            assert "Beta only" in _titles(recall) and "Atlas only" not in _titles(recall)
            await s.change_roots(["https://example.com/not-a-folder"])
            assert _titles(await s.call("recall")) == ["Everyone"]  # no usable root: general only

    anyio.run(scenario)


def test_the_vault_itself_reads_but_may_not_remember(world: World) -> None:
    async def scenario() -> None:
        async with connect(world, cwd=world.vault) as s:
            recall = await s.call("recall")
            assert recall["caller"]["is_vault"] is True and _titles(recall) == ["Everyone"]
            with pytest.raises(MCPError, match="SERVE_VAULT_CALLER"):
                await s.call(
                    "remember", {"title": "x", "body": "y", "scope": "general", "confidence": "verified"}
                )

    anyio.run(scenario)
    assert not list((world.vault / "memories").glob("2026/12/*"))


def test_search_filters_the_result_never_the_query(atlas: tuple[World, Shared, Any]) -> None:
    world, s, _ = atlas
    audit_before = len(world.audit())
    found = s.call("search", {"query": "caches lie", "limit": 5})
    assert "brain/Gotchas.md" in [h["path"] for h in found["hits"]]
    for words, withheld_path in (
        ("hidden", "brain/Secret Plans.md"),
        ("outside the exposed roots", "reference/Ref.md"),
        ("tabs over spaces", "memories/2026/11/2026-11-01 Everyone.md"),
        ("never served", "brain/soul.md"),
    ):
        result = s.call("search", {"query": words})
        assert withheld_path not in [h["path"] for h in result["hits"]], words
        assert "withheld" not in result, words  # withheld notes change nothing a caller sees
    with pytest.raises(MCPError, match="SERVE_BAD_ARGUMENTS"):
        s.call("search", {"query": ""})
    searches = [line for line in world.audit()[audit_before:] if line["event"] == "tool:search"]
    assert len(searches) == 6 and searches[0]["served"][0].startswith("brain/")
