"""Imported memories land in the same layer: the server recalls them for the callers their source names."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from shardpy.importers.claude_code import project_name
from shardpy.notes.frontmatter import split_frontmatter
from tests.serve.kit import build_world, connect, uri
from tests.shardkit import run_shardpy


def _fact(path: Path, name: str, mtype: str, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: d\nmetadata:\n  type: {mtype}\n---\n{body}\n")


def test_imported_claude_code_and_mcp_memories_reach_the_right_callers(tmp_path: Path) -> None:
    world = build_world(tmp_path / "w")
    atlas = world.repos["atlas"]
    encoded = str(atlas.resolve()).replace("/", "-")
    projects = tmp_path / "claude-projects"
    _fact(
        projects / encoded / "memory" / "deploys.md", "deploys", "project", "Atlas ships with make release."
    )
    _fact(projects / encoded / "memory" / "me.md", "me", "user", "The user prefers short answers.")
    _fact(
        projects / "-nowhere-at-all-beta" / "memory" / "db.md", "db", "project", "Beta's DB is Postgres 16."
    )
    graph = tmp_path / "memory.jsonl"
    graph.write_text(
        json.dumps({"type": "entity", "name": "Dana", "entityType": "person", "observations": ["likes tea"]})
        + "\n"
    )
    for fmt, source in (("claude-code-memory", projects), ("mcp-memory", graph)):
        done = run_shardpy("import", "--from", fmt, source, world.vault, "--apply", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr

    notes = {p.name: split_frontmatter(p.read_text()).data for p in (world.vault / "memories").rglob("*.md")}
    assert notes["deploys.md"]["scope"] == "project" and notes["deploys.md"]["projects"] == ["atlas"]
    assert notes["me.md"]["scope"] == "general" and "projects" not in notes["me.md"]
    assert notes["db.md"]["projects"] == ["beta"]  # not on disk: the folder's last segment
    assert notes["Dana.md"]["scope"] == "general"

    async def scenario() -> None:
        async with connect(world, cwd=world.repos["web"], roots=[uri(atlas)]) as s:
            titles = {
                m["path"].rsplit("/", 1)[-1] for m in (await s.call("recall", {"limit": 50}))["memories"]
            }
            assert {"deploys.md", "me.md"} <= titles and "db.md" not in titles
            # Dana is an entity of the memory graph (<memory_root>/graph/): the graph tools serve it,
            # recall does not (issue 28, docs/SERVE.md "recall").
            assert "Dana.md" not in titles

    anyio.run(scenario)


def test_project_name_finds_dashed_folders_again(tmp_path: Path) -> None:
    repo = tmp_path / "code" / "atlas-api"
    repo.mkdir(parents=True)
    assert project_name(str(repo).replace("/", "-")) == "atlas-api"
    (repo / ".shardmind-project").write_text("atlas\n")
    assert project_name(str(repo).replace("/", "-")) == "atlas"
    assert project_name("-gone-away-My_App") == "my_app"


def test_a_reimport_supersedes_a_changed_keyed_observation(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    graph = tmp_path / "memory.jsonl"

    def run(observations: list[str]) -> str:
        graph.write_text(
            json.dumps(
                {"type": "entity", "name": "Priya", "entityType": "person", "observations": observations}
            )
            + "\n"
        )
        done = run_shardpy("import", "--from", "mcp-memory", graph, vault, "--apply", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        return (vault / "memories/graph/Priya.md").read_text()

    run(["[team] on the platform team", "likes tea"])
    second = run(["[team] on the memory team", "likes coffee"])
    observations = second.split("## Observations\n\n", 1)[1].split("\n## ", 1)[0]
    assert observations.strip().splitlines() == ["- [team] on the memory team", "- likes coffee"]
    superseded = second.split("## Superseded\n\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    # Only the keyed fact is superseded (with its validity); an unkeyed one is simply replaced.
    assert len(superseded) == 1 and superseded[0].startswith("- [team] on the platform team (valid 20")
    third = run(["[team] on the search team", "likes coffee"])
    kept = third.split("## Superseded\n\n", 1)[1].split("\n## ", 1)[0].strip().splitlines()
    assert [k.split(" (valid")[0] for k in kept] == [
        "- [team] on the platform team",
        "- [team] on the memory team",
    ]
