"""A note ``shardpy rm`` disabled is withheld by the MCP server, on every surface, and comes
back after ``shardpy restore`` (issue 30, "Deletes"; one predicate: shardpy.vault.disabled)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.serve.kit import build_world, connect


def test_a_disabled_note_is_not_served(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    gone = world.vault / "brain/Gone.md"
    gone.write_text("---\ntitle: Gone\ndisabled: true\n---\n# Gone\n\nstale advice\n", encoding="utf-8")
    kept = world.vault / "brain/Kept.md"
    kept.write_text("---\ntitle: Kept\ndisabled: false\n---\n# Kept\n\nstale advice too\n", encoding="utf-8")

    async def main() -> None:
        async with connect(world, cwd=world.root) as s:
            listed = await s.client.list_resources()
            names = {str(r.uri).removeprefix("vault://note/") for r in listed.resources}
            assert "brain/Kept.md" in names and "brain/Gone.md" not in names
            with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
                await s.client.read_resource("vault://note/brain/Gone.md")
            with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
                await s.call("expand", {"note": "brain/Gone.md"})
            found = await s.call("search", {"query": "stale advice"})
            assert "brain/Gone.md" not in str(found) and "brain/Kept.md" in str(found)

    anyio.run(main)
