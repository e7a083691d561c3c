"""Issue 26, item 15: ``serve`` on a plain folder (no ``.shardmind/state.json``, no
``vault-manifest.json``) wrote ``.shardmind/serve-audit.jsonl`` into it, after which ``import``
took the folder for a vault. A folder that is not a vault gets no ``.shardmind/``: its audit log
lives in the user state folder, keyed by the folder's real path, never written through a link."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from shardpy.serve.audit import home_key
from tests.serve.kit import World, connect


def _plain(tmp_path: Path) -> World:
    folder = tmp_path / "notes"
    (folder / "brain").mkdir(parents=True)
    (folder / "brain/Idea.md").write_text("# Idea\n\nCaches lie.\n", encoding="utf-8")
    (tmp_path / "repo").mkdir()
    return World(tmp_path, folder, tmp_path)


def _health_and_search(world: World, state: Path) -> dict[str, object]:
    async def scenario() -> dict[str, object]:
        async with connect(world, cwd=world.root / "repo", env={"XDG_STATE_HOME": str(state)}) as s:
            await s.call("search", {"query": "caches"})
            return await s.call("health")

    return anyio.run(scenario)


def test_a_plain_folder_gets_no_sidecar(tmp_path: Path) -> None:
    world, state = _plain(tmp_path), tmp_path / "state"
    health = _health_and_search(world, state)
    assert not (world.vault / ".shardmind").exists()
    log = state / "shardpy" / "serve-audit" / home_key(world.vault) / "serve-audit.jsonl"
    events = [json.loads(line)["event"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert events == ["tool:search", "tool:health"]
    assert health["audit"] == {"ok": True}


def test_the_state_folder_is_never_written_through_a_link(tmp_path: Path) -> None:
    world, state = _plain(tmp_path), tmp_path / "state"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    home = state / "shardpy" / "serve-audit"
    home.mkdir(parents=True)
    (home / home_key(world.vault)).symlink_to(elsewhere, target_is_directory=True)
    health = _health_and_search(world, state)
    assert list(elsewhere.iterdir()) == [] and not (world.vault / ".shardmind").exists()
    audit = health["audit"]
    assert isinstance(audit, dict) and audit["ok"] is False and "link" in audit["problem"]
    assert str(tmp_path) not in json.dumps(health)
