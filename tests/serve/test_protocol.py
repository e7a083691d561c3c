"""The real server over stdio, driven by the MCP SDK's client: handshake, identity, exposure, audit."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.serve.kit import World, build_world, connect, uri

SERVED = {
    "brain/North Star.md",
    "brain/Gotchas.md",
    "brain/Alias.md",
    "work/active/Atlas.md",
    "work/Index.md",
}


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


def _titles(result: dict[str, object]) -> list[str]:
    memories = result["memories"]
    assert isinstance(memories, list)
    return [m["title"] for m in memories]


def test_handshake_with_roots_scopes_every_surface(world: World) -> None:
    async def scenario() -> None:
        async with connect(world, cwd=world.repos["web"], roots=[uri(world.repos["atlas"])]) as s:
            init = s.client.initialize_result
            assert init is not None and init.protocol_version == "2025-11-25"
            assert init.instructions and "Never paste vault note text" in init.instructions
            tools = {t.name: t for t in (await s.client.list_tools()).tools}
            assert set(tools) == {"search", "expand", "recall", "remember", "record_work", "health"}
            assert tools["remember"].input_schema["additionalProperties"] is False

            # The first caller-dependent request waits for the roots answer: atlas, not the launch folder.
            listing = await s.client.list_resources()
            served = {str(r.uri).removeprefix("vault://note/").replace("%20", " ") for r in listing.resources}
            assert served == SERVED

            recall = await s.call("recall", {"limit": 50})
            assert recall["caller"]["project"] == "atlas" and recall["caller"]["via"] == "roots"
            # general + project-listed + both; superseded after live; never beta's, ios's or the broken one.
            assert _titles(recall) == ["Both", "Atlas only", "Everyone", "Old atlas"]
            assert recall["withheld"] == 3

            expand = await s.call("expand", {"note": "[[North Star]]"})
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
                "work/active/Cross.md",  # symlink out of its root
                "brain/linked-dir/leak.md",  # through a symlinked folder
                "reference/Ref.md",  # outside the exposed roots
                "work/active-secrets/Nope.md",  # a prefix, not a segment
                "memories/2026/11/2026-11-01 Everyone.md",  # memories are never notes
                "../outside/leak.md",
            ):
                with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
                    await s.call("expand", {"note": withheld})
                with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
                    await s.client.read_resource("vault://note/" + withheld.replace(" ", "%20"))
            text = await s.client.read_resource("vault://note/brain/Alias.md")
            assert "Caches lie." in text.contents[0].text  # type: ignore[union-attr]

            health = await s.call("health")
            assert health["notes"]["served"] == len(SERVED)
            assert health["memories"]["invalid_count"] == 1
            assert health["broken_links"]["count"] >= 1

    anyio.run(scenario)
    events = [line["event"] for line in world.audit()]
    assert events[:3] == ["resources/list", "tool:recall", "tool:expand"]
    assert all(line["caller"]["project"] == "atlas" for line in world.audit())
    assert events.count("tool:health") == 1


def test_launch_context_without_roots(world: World) -> None:
    async def scenario() -> None:
        # No roots capability: the working folder names the caller (its marker file wins over its name).
        async with connect(world, cwd=world.repos["beta-repo"]) as s:
            recall = await s.call("recall", {"limit": 50})
            assert recall["caller"]["project"] == "beta" and recall["caller"]["source"] == "marker"
            assert _titles(recall) == ["Both", "Beta only", "iOS", "Everyone"]
        # --project NAME (what --print-config writes) names it explicitly.
        async with connect(world, cwd=world.repos["web"], args=["--project", "atlas"]) as s:
            recall = await s.call("recall")
            assert recall["caller"] == {**recall["caller"], "project": "atlas", "source": "flag"}
        # The web folder has no memories of its own: general only.
        async with connect(world, cwd=world.repos["web"]) as s:
            assert _titles(await s.call("recall")) == ["Everyone"]

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


def test_search_filters_the_result_never_the_query(world: World) -> None:
    async def scenario() -> None:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            found = await s.call("search", {"query": "caches lie", "limit": 5})
            assert "brain/Gotchas.md" in [h["path"] for h in found["hits"]]
            for words, withheld_path in (
                ("hidden", "brain/Secret Plans.md"),
                ("outside the exposed roots", "reference/Ref.md"),
                ("tabs over spaces", "memories/2026/11/2026-11-01 Everyone.md"),
                ("never served", "brain/soul.md"),
            ):
                result = await s.call("search", {"query": words})
                assert withheld_path not in [h["path"] for h in result["hits"]], words
                assert result["withheld"] >= 1, words
            with pytest.raises(MCPError, match="SERVE_BAD_ARGUMENTS"):
                await s.call("search", {"query": ""})

    anyio.run(scenario)
    searches = [line for line in world.audit() if line["event"] == "tool:search"]
    assert len(searches) == 6 and searches[0]["served"][0].startswith("brain/")
