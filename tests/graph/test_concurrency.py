"""Two servers adding observations to the same entity at once: every observation lands (the
change is computed under the vault lock from the notes as they are then)."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.graph.kit import graph_manifest
from tests.serve.kit import World, connect

N = 8


async def _writer(world: World, tag: str, ready: anyio.Event) -> None:
    async with connect(world, cwd=world.repos["atlas"]) as s:
        await ready.wait()
        for i in range(N):
            args = {"observations": [{"entityName": "Shared", "contents": [f"{tag} fact {i}"]}]}
            r = await s.client.call_tool("add_observations", args)
            assert not r.is_error, r


async def _scenario(world: World) -> list[str]:
    async with connect(world, cwd=world.repos["atlas"]) as s:
        ent = {"name": "Shared", "entityType": "thing", "observations": []}
        await s.client.call_tool("create_entities", {"entities": [ent]})
        ready = anyio.Event()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_writer, world, "one", ready)
            tg.start_soon(_writer, world, "two", ready)
            await anyio.sleep(8)  # both servers started (the SDK import is most of a start)
            ready.set()
        r = await s.client.call_tool("open_nodes", {"names": ["Shared"]})
        assert r.structured_content is not None
        observations: list[str] = r.structured_content["entities"][0]["observations"]
        return observations


def test_two_servers_never_lose_an_observation(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    graph_manifest(vault)
    (tmp_path / "atlas").mkdir()
    world = World(tmp_path, vault, tmp_path, {"atlas": tmp_path / "atlas"})
    got = anyio.run(_scenario, world)
    assert sorted(got) == sorted(f"{tag} fact {i}" for tag in ("one", "two") for i in range(N))
