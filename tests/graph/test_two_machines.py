"""Two machines (a bare hub, two clones, shardpy's merge driver) add observations to the same
entity: after both pull, both facts are on both, each with its exact instant."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.graph import ops
from shardpy.graph.commit import change
from shardpy.graph.note import Entity, parse_note
from shardpy.graph.store import GraphStore
from tests.gitsync.kit import Mesh, git_env
from tests.shardkit import Cli

NOTE = "memories/graph/Priya.md"


def _everyone(_e: object) -> bool:
    return True


def _add(vault: Path, text: str, at: int, key: str | None = None) -> None:
    store = GraphStore(vault.resolve(), "memories")
    item = {"entityName": "Priya", "contents": [text], "key": key, "valid_to": None}
    change(store, "t", _everyone, lambda w: ops.add_observations(w, [item], at))


def _entity(vault: Path) -> Entity:
    e = parse_note(NOTE, (vault / NOTE).read_text(encoding="utf-8"))
    assert isinstance(e, Entity), e
    return e


def test_both_machines_facts_land_on_both(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    git_env(monkeypatch, tmp_path / "home")
    mesh = Mesh(tmp_path, cli)
    mesh.release("1.0.0", {"brain/Note.md": "# Note\n"})
    mesh.start()
    a, b = mesh.a, mesh.b
    store = GraphStore(a.resolve(), "memories")
    person = {"name": "Priya", "entityType": "person", "observations": ["joined in 2024"]}
    change(store, "t", _everyone, lambda w: ops.create_entities(w, [person], ops.Reach("general"), 1_000))
    mesh.commit(a, "Priya")
    mesh.push(a)
    assert mesh.pull(b).returncode == 0

    _add(a, "on the platform team", 2_000, key="team")
    _add(a, "likes tea", 2_500)
    _add(b, "speaks Hindi", 3_000)
    _add(b, "on the memory team", 3_500, key="team")
    mesh.commit(a, "A's facts")
    mesh.commit(b, "B's facts")
    mesh.push(a)
    pulled = mesh.pull(b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert mesh.unmerged(b) == []
    mesh.push(b)
    assert mesh.pull(a).returncode == 0
    assert mesh.read(a, NOTE) == mesh.read(b, NOTE)

    e = _entity(a)
    live = {f.text: (f.key, f.valid_from) for f in e.facts if f.live}
    assert live["joined in 2024"] == (None, 1_000)
    assert live["likes tea"] == (None, 2_500)
    assert live["speaks Hindi"] == (None, 3_000)
    # Both machines' keyed facts survive as written; the merge never drops one.
    assert {t for t, (k, _) in live.items() if k == "team"} == {"on the platform team", "on the memory team"}

    # The next keyed write closes both live facts of the key and opens one.
    _add(a, "leads the memory team", 5_000, key="team")
    e = _entity(a)
    assert [f.text for f in e.facts if f.live and f.key == "team"] == ["leads the memory team"]
    assert {f.text for f in e.facts if not f.live} == {"on the platform team", "on the memory team"}
