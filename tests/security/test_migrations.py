"""Issue 11, high: a hostile migration never moves notes into the engine's, VCS or hidden folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shardkit import Cli, tree_snapshot
from tests.update.kit import Scenario

FILES = {"notes/a.md": "a\n", "Home.md": "home\n", ".claude/commands/standup.md": "# Standup\n"}


@pytest.fixture
def sc(tmp_path: Path, cli: Cli) -> Scenario:
    return Scenario(tmp_path, cli)


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("notes/", ".shardmind/backups/0000-old/"),
        ("notes/", ".git/hooks/"),
        ("notes/", "docs/.shardmind/"),
        ("notes/a.md", "shard-values.yaml"),
        (".shardmind/", "notes/engine/"),
        ("notes/", ".obsidian/plugins/x/"),  # a hidden folder the shard does not produce
    ],
)
def test_hostile_migration_is_refused(sc: Scenario, source: str, target: str) -> None:
    sc.shard("1.0.0", FILES)
    sc.install("--defaults")
    sc.write("notes/mine.md", "my own note\n")
    before = tree_snapshot(sc.vault)
    migration = f"version: 1.1.0\nrenames:\n  - {{from: '{source}', to: '{target}'}}\n"
    sc.shard("1.1.0", FILES, file_migrations={"1.1.0.yaml": migration})
    run = sc.update("--yes", "--json", ok=False)
    assert run.code == 1, run.out
    assert run.json()["error"]["code"] == "MIGRATION_INVALID"
    assert tree_snapshot(sc.vault) == before


def test_migration_within_the_shards_own_hidden_paths_still_works(sc: Scenario) -> None:
    sc.shard("1.0.0", FILES)
    sc.install("--defaults")
    new = {**FILES}
    new[".claude/commands/daily.md"] = new.pop(".claude/commands/standup.md")
    migration = (
        "version: 1.1.0\nrenames:\n  - {from: .claude/commands/standup.md, to: .claude/commands/daily.md}\n"
    )
    sc.shard("1.1.0", new, file_migrations={"1.1.0.yaml": migration})
    assert sc.update("--yes").code == 0
    assert sc.read(".claude/commands/daily.md") == "# Standup\n"
