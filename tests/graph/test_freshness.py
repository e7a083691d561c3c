"""The derived index stays true to the notes without re-reading them (issue 28, "Speed"): a note
edited in place by hand is read by the next ``open_nodes`` (over MCP stdio) and by the background
sweep; ``search_nodes`` through the joined text answers exactly the reference's per-entity rule;
the answer's text is exactly ``json.dumps(graph, indent=2)``."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest

from shardpy.graph import ops
from shardpy.graph.commit import change
from shardpy.graph.facts import Fact
from shardpy.graph.note import Entity, render_note
from shardpy.graph.store import GraphStore, Snapshot
from shardpy.serve.graphtools import graph_text
from tests.graph.kit import answer, graph_manifest
from tests.serve.kit import World, connect


def _everyone(_e: Entity) -> bool:
    return True


def _create(store: GraphStore, *names: str) -> None:
    items = [{"name": n, "entityType": "thing", "observations": [f"about {n}"]} for n in names]
    change(store, "t", _everyone, lambda w: ops.create_entities(w, items, ops.Reach("general"), 1))


def _edit_in_place(note: Path, old: str, new: str) -> None:
    """What an editor that saves in place does: the same file (inode), the folder untouched."""
    before = os.lstat(note)
    text = note.read_text(encoding="utf-8").replace(old, new)
    with open(note, "r+", encoding="utf-8") as fh:
        fh.write(text)
        fh.truncate()
    assert os.lstat(note).st_ino == before.st_ino


def test_an_in_place_edit_is_read_by_fresh_and_by_the_sweep(tmp_path: Path) -> None:
    graph_manifest(tmp_path / "vault")
    store = GraphStore((tmp_path / "vault").resolve(), "memories")
    _create(store, "Ada", "Bob")
    seen = store.snapshot()
    _edit_in_place(store.folder / "Ada.md", "- about Ada\n", "- about Ada\n- edited by hand\n")
    _edit_in_place(store.folder / "Bob.md", "- about Bob\n", "- about Bob\n- Bob too\n")
    # the folder did not change: no note is listed or stat-ed again by a plain call
    assert store.snapshot() is seen
    after = store.fresh(["Ada"])  # the notes a call answers from are stat-ed before it answers
    assert after.entities["Ada"].observations() == ["about Ada", "edited by hand"]
    assert after.entities["Bob"] is seen.entities["Bob"]
    store.sweep()  # the background sweep's pass stats every note
    assert store.snapshot().entities["Bob"].observations() == ["about Bob", "Bob too"]


def test_a_write_never_overwrites_an_in_place_edit(tmp_path: Path) -> None:
    graph_manifest(tmp_path / "vault")
    store = GraphStore((tmp_path / "vault").resolve(), "memories")
    _create(store, "Ada")
    store.snapshot()
    _edit_in_place(store.folder / "Ada.md", "- about Ada\n", "- about Ada\n- edited by hand\n")
    item = {"entityName": "Ada", "contents": ["a new fact"], "key": None, "valid_to": None}
    change(store, "t", _everyone, lambda w: ops.add_observations(w, [item], 2))
    text = (store.folder / "Ada.md").read_text(encoding="utf-8")
    assert "- about Ada\n- edited by hand\n- a new fact\n" in text


async def _open_after_edit(world: World) -> list[dict[str, Any]]:
    async with connect(world, cwd=world.root) as s:
        made = {"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}
        await s.client.call_tool("create_entities", {"entities": [made]})
        first = answer(await s.client.call_tool("open_nodes", {"names": ["Ada"]}))
        note = world.vault / "memories/graph/Ada.md"
        _edit_in_place(note, "- wrote notes\n", "- wrote notes\n- added in Obsidian\n")
        second = answer(await s.client.call_tool("open_nodes", {"names": ["Ada"]}))
        third = answer(await s.client.call_tool("search_nodes", {"query": "OBSIDIAN"}))
        return [first, second, third]


def test_open_nodes_shows_a_hand_edit_at_once_over_mcp(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    graph_manifest(vault)
    first, second, third = anyio.run(_open_after_edit, World(tmp_path, vault, tmp_path))
    assert first["structured"]["entities"][0]["observations"] == ["wrote notes"]
    assert second["structured"]["entities"][0]["observations"] == ["wrote notes", "added in Obsidian"]
    assert [e["name"] for e in third["structured"]["entities"]] == ["Ada"]


def _naive(snap: Snapshot, query: str, as_of: int | None) -> list[str]:
    """The reference's rule, entity by entity (``dist/index.js`` searchNodes)."""
    q = query.lower()
    return [
        e.name
        for e in snap.entities.values()
        if e.is_entity
        and (
            q in e.name.lower()
            or q in e.entity_type.lower()
            or any(q in o.lower() for o in e.observations(as_of))
        )
    ]


def test_search_through_the_joined_text_is_the_reference_rule() -> None:
    rnd = random.Random(28)
    alphabet = ["a", "B", "é", "É", "Σ", "ß", " ", "[", "]", "k", "1", "\n", "İ"]
    entities: dict[str, Entity] = {}
    for i in range(300):
        name = "".join(rnd.choices(alphabet, k=rnd.randint(0, 6))) + str(i)
        facts = [
            Fact("".join(rnd.choices(alphabet, k=rnd.randint(0, 8))), rnd.choice([None, "k", "team"]),
                 rnd.choice([None, 10, 20]), rnd.choice([None, None, 15, 30]))
            for _ in range(rnd.randint(0, 4))
        ]  # fmt: skip
        status = "placeholder" if i % 17 == 0 else "active"
        entities[name] = Entity(name, rnd.choice(["", "Person", "tÉam"]), status, facts=facts)
    snap = Snapshot(entities, [], {}, {})
    view = ops.View(snap, _everyone)
    queries = ["", "a", "é", "É", "ß", "σ", "[k]", "k] ", "1", "\n", "i̇", "b1", "zz", "ab", "[team"]
    for q in queries:
        for as_of in (None, 5, 12, 25):
            got = [e.name for e in ops.search_hits(view, q, as_of)]
            assert got == _naive(snap, q, as_of), (q, as_of)


def test_graph_text_is_json_dumps_indent_2() -> None:
    odd = ["", "plain", 'quote " and \\ back', "line\nbreak\ttab", "é ü ß 中文 🙂", "\u2028", "</script>"]
    graphs: list[dict[str, Any]] = [
        {"entities": [], "relations": []},
        {
            "entities": [
                {"name": n, "entityType": t, "observations": odd[: i % 4] if i % 3 else []}
                for i, (n, t) in enumerate(zip(odd, reversed(odd), strict=True))
            ],
            "relations": [{"from": a, "to": b, "relationType": "x y"} for a, b in itertools.pairwise(odd)],
        },
        {"entities": [{"name": "A", "entityType": "", "observations": ["one"]}], "relations": []},
    ]
    for g in graphs:
        assert graph_text(g) == json.dumps(g, ensure_ascii=False, indent=2)


def test_a_new_server_starts_from_the_on_disk_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shardpy.graph import cache
    from shardpy.graph import store as store_mod

    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))
    vault = (tmp_path / "vault").resolve()
    graph_manifest(vault)
    first = GraphStore(vault, "memories", persist=True)
    _create(first, "Ada", "Bob", "Cy")
    first.snapshot()
    first.save()
    path = cache.cache_path(vault, "memories")
    assert path.is_file() and not path.is_relative_to(vault)  # never a vault file git would sync
    before = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*") if ".shardmind" not in p.parts)
    _edit_in_place(first.folder / "Bob.md", "- about Bob\n", "- about Bob\n- while no server ran\n")
    parsed: list[str] = []
    real = store_mod.parse_note
    monkeypatch.setattr(store_mod, "parse_note", lambda rel, text: parsed.append(rel) or real(rel, text))
    second = GraphStore(vault, "memories", persist=True)
    snap = second.snapshot()
    assert parsed == ["memories/graph/Bob.md"]  # only the note that changed is parsed again
    assert snap.entities["Bob"].observations() == ["about Bob", "while no server ran"]
    assert snap.entities["Ada"].observations() == ["about Ada"]
    ada = (first.folder / "Ada.md").read_text(encoding="utf-8")
    assert render_note(snap.entities["Ada"]) == render_note(real("memories/graph/Ada.md", ada)) == ada
    # a write renders a note read from the index exactly as one parsed from the note
    item = {"entityName": "Ada", "contents": ["more"], "key": None, "valid_to": None}
    change(second, "t", _everyone, lambda w: ops.add_observations(w, [item], 2))
    second.save()  # the rows of the notes changed since its start: Bob's, Ada's
    parsed.clear()
    fourth = GraphStore(vault, "memories", persist=True).snapshot()
    assert parsed == [] and fourth.entities["Ada"].observations() == ["about Ada", "more"]
    third = GraphStore(vault, "memories")
    assert third.snapshot().entities["Ada"].observations() == ["about Ada", "more"]
    after = sorted(p.relative_to(vault).as_posix() for p in vault.rglob("*") if ".shardmind" not in p.parts)
    assert after == before
    # a damaged or foreign file is ignored: the notes are read
    tampered = ["UPDATE meta SET value = '/elsewhere' WHERE key = 'vault'", "UPDATE notes SET item = '[1]'"]
    for junk in (b"not a database", b"SQLite format 3\x00 torn", *tampered):
        path.unlink()
        writer = GraphStore(vault, "memories", persist=True)
        writer.snapshot()
        writer.save()  # no file: every note written
        assert path.is_file()
        if isinstance(junk, bytes):
            path.write_bytes(junk)
        else:
            with contextlib.closing(sqlite3.connect(path)) as conn:
                conn.execute(junk)
                conn.commit()
        parsed.clear()
        assert set(GraphStore(vault, "memories", persist=True).snapshot().entities) == {"Ada", "Bob", "Cy"}
        assert len(parsed) == 3


def test_the_background_sweep_runs_only_while_calls_come(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph_manifest(tmp_path / "vault")
    store = GraphStore((tmp_path / "vault").resolve(), "memories")
    _create(store, "Ada")
    passes: list[int] = []
    real = store.sweep
    monkeypatch.setattr(store, "sweep", lambda: passes.append(1) or real())
    store.tick()  # the write above read the graph: one pass
    assert len(passes) == 1
    store.tick()  # nothing asked since: a quiet server stats nothing
    assert len(passes) == 1
    _edit_in_place(store.folder / "Ada.md", "- about Ada\n", "- about Ada\n- by hand\n")
    store.snapshot()  # a call
    store.tick()
    assert len(passes) == 2
    assert store.snapshot().entities["Ada"].observations() == ["about Ada", "by hand"]
