"""Issue 26, item 5: notes imported from basic-memory reach MCP callers. They
landed under `memories/` without `scope`, so `health` listed every one as
invalid and `recall` skipped them; they now carry the memory model's
`scope: general` (a note's own `scope` is kept), as MCP-graph imports do."""

from __future__ import annotations

from pathlib import Path

import anyio

from shardpy.notes.frontmatter import split_frontmatter
from tests.serve.kit import build_world, connect, uri
from tests.shardkit import run_shardpy


def test_basic_memory_notes_are_recalled_and_valid(tmp_path: Path) -> None:
    world = build_world(tmp_path / "w")
    source = tmp_path / "basic-memory"
    (source / "notes").mkdir(parents=True)
    (source / "notes" / "coffee.md").write_text(
        "---\ntitle: Coffee Brewing\ntype: note\npermalink: coffee-brewing\n---\n\n"
        "# Coffee Brewing\n\n- [method] Pour over at 94 degrees\n"
    )
    (source / "notes" / "scoped.md").write_text(
        "---\ntitle: Atlas Only\ntype: note\nscope: project\nprojects: [atlas]\n---\n\nAtlas only.\n"
    )
    (source / "plain.md").write_text("# Plain\n\nno frontmatter at all\n")
    done = run_shardpy("import", "--from", "basic-memory", source, world.vault, "--apply", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    imported = {p.name: p for p in (world.vault / "memories").rglob("*.md") if "basic-memory" in p.as_posix()}
    data = {name: split_frontmatter(p.read_text()).data for name, p in imported.items()}
    assert data["Coffee Brewing.md"]["scope"] == "general" and data["plain.md"]["scope"] == "general"
    assert data["Atlas Only.md"]["scope"] == "project"  # the note's own reach is kept
    assert imported["Coffee Brewing.md"].read_text().count("scope:") == 1

    async def scenario() -> None:
        async with connect(world, cwd=world.repos["web"], roots=[uri(world.repos["web"])]) as s:
            recalled = {
                m["path"].rsplit("/", 1)[-1] for m in (await s.call("recall", {"limit": 50}))["memories"]
            }
            assert {"Coffee Brewing.md", "plain.md"} <= recalled and "Atlas Only.md" not in recalled
            health = await s.call("health")
            assert not [m for m in health["memories"]["invalid"] if "basic-memory" in m["path"]], health

    anyio.run(scenario)
