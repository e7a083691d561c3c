"""``recall`` asks the one walker and rule every reader asks (shardpy/notes/visibility.py, issue 25)
and leaves the memory graph's entity notes to the graph tools (issue 28), through the SDK client.

Before: recall walked the memory root with a walker of its own, so a Syncthing conflict copy, a
memory in a ``credentials/`` or ``.trash/`` folder or one ``mcp_never_expose`` names was recalled
although the index holds none of them; and ``create_entities``'s notes
(``<memory_root>/graph/*.md``, scope general) came back from recall as memories."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from shardpy.index.config import IndexConfig
from shardpy.index.walk import walk
from tests.serve.kit import MANIFEST, build_world, connect, memory, uri

GENERAL = memory("general") + "# {title}\n\nRemember {title}.\n"
OUT_OF_REACH = {  # every one a valid general memory that no reader of the vault covers
    "memories/2026/11/2026-11-01 Everyone.sync-conflict-20261101-120000-ABCDEFG.md": "Conflict copy",
    "memories/credentials/2026-11-01 Token.md": "Token",
    "memories/.trash/2026-11-01 Trashed.md": "Trashed",
    "memories/2026/11/2026-11-01 Hidden key.md": "Hidden key",  # named in mcp_never_expose
    "memories/people/private/2026-11-01 Dana's salary.md": "Salary",  # a never-exposed folder
}


def test_recall_returns_only_notes_the_index_holds_and_no_graph_entity(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    never = [*MANIFEST["mcp_never_expose"], "2026-11-01 HIDDEN KEY.md", "Memories/People/Private/"]
    manifest = {**MANIFEST, "mcp_never_expose": never}
    (world.vault / "vault-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    for rel, title in OUT_OF_REACH.items():
        path = world.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(GENERAL.format(title=title), encoding="utf-8")
    vault = world.vault.resolve()

    async def scenario() -> None:
        async with connect(world, cwd=world.repos["atlas"], roots=[uri(world.repos["atlas"])]) as s:
            made = await s.client.call_tool(
                "create_entities",
                {"entities": [{"name": "Dana", "entityType": "person", "observations": ["likes tea"]}],
                 "scope": "general"},
            )  # fmt: skip
            assert not made.is_error, made
            assert (vault / "memories/graph/Dana.md").is_file()
            recalled = [m["path"] for m in (await s.call("recall", {"limit": 50}))["memories"]]
            indexed = set(walk(vault, IndexConfig.for_vault(vault))[0])
            assert recalled and set(recalled) <= indexed, sorted(set(recalled) - indexed)
            assert not [p for p in recalled if p.startswith("memories/graph/")], recalled
            assert not set(recalled) & set(OUT_OF_REACH), recalled
            assert "memories/2026/11/2026-11-01 Everyone.md" in recalled  # the memory itself is
            opened = await s.call("open_nodes", {"names": ["Dana"]})
            assert [e["name"] for e in opened["entities"]] == ["Dana"]  # the graph tools serve it

    anyio.run(scenario)
