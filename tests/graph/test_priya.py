"""Seed 003's Priya example: two keyed observations, the page as the seed shows it (plus the
frontmatter and the machine block), ``as_of`` before and after the change; then retiring a fact."""

from __future__ import annotations

from pathlib import Path

from shardpy.graph import ops
from shardpy.graph.commit import change
from shardpy.graph.facts import parse_as_of, parse_instant
from shardpy.graph.store import GraphStore
from tests.graph.kit import graph_manifest

SEPT_13 = parse_instant("2025-09-13T21:46:40.000Z")  # the seed's valid_from 1757800000000
SEPT_25 = parse_instant("2025-09-25T11:33:20.000Z")  # the seed's valid_to 1758800000000
assert SEPT_13 == 1757800000000 and SEPT_25 == 1758800000000

PAGE = """# Priya

## Observations

- [team] on the memory team

## Superseded

- [team] on the platform team (valid 2025-09-13 → 2025-09-25)

## Related

_No relations._
"""


def _everyone(_e: object) -> bool:
    return True


def _store(tmp_path: Path) -> GraphStore:
    graph_manifest(tmp_path / "vault")
    return GraphStore((tmp_path / "vault").resolve(), "memories")


def _add(store: GraphStore, text: str, at: int, key: str = "team") -> None:
    item = {"entityName": "Priya", "contents": [text], "key": key, "valid_to": None}
    change(store, "t", _everyone, lambda w: ops.add_observations(w, [item], at))


def test_priya_page_and_as_of(tmp_path: Path) -> None:
    assert SEPT_13 is not None and SEPT_25 is not None
    store = _store(tmp_path)
    person = {"name": "Priya", "entityType": "person", "observations": []}
    change(store, "t", _everyone, lambda w: ops.create_entities(w, [person], ops.Reach("general"), SEPT_13))
    _add(store, "on the platform team", SEPT_13)
    _add(store, "on the memory team", SEPT_25)

    text = (store.folder / "Priya.md").read_text(encoding="utf-8")
    front, body = text.split("---\n", 2)[1:]
    assert front == "entity: Priya\nentity_type: person\nstatus: active\nscope: general\n"
    page, block = body.split("<!-- shardpy:graph", 1)
    assert page.rstrip("\n") + "\n" == PAGE
    assert block.splitlines()[1:] == [
        f"fact 2025-09-25T11:33:20.000Z - team {_hash('on the memory team')}",
        f"fact 2025-09-13T21:46:40.000Z 2025-09-25T11:33:20.000Z team {_hash('on the platform team')}",
        "-->",
    ]

    view = ops.View(store.snapshot(), _everyone)
    before = ops.open_nodes(view, ["Priya"], parse_as_of("2025-09-16"))
    assert before["entities"][0]["observations"] == ["[team] on the platform team"]
    after = ops.open_nodes(view, ["Priya"], parse_as_of("2025-09-25T12:00:00Z"))
    assert after["entities"][0]["observations"] == ["[team] on the memory team"]
    now = ops.open_nodes(view, ["Priya"], None)
    assert now["entities"][0]["observations"] == ["[team] on the memory team"]
    # An as_of before anything was written: nothing was believed yet.
    assert ops.open_nodes(view, ["Priya"], parse_as_of("2025-09-01"))["entities"][0]["observations"] == []

    # Retire: key + valid_to, no contents; the fact is closed, kept under Superseded, never deleted.
    retire = {"entityName": "Priya", "contents": [], "key": "team", "valid_to": parse_as_of("2025-10-01")}
    change(store, "t", _everyone, lambda w: ops.add_observations(w, [retire], SEPT_25 + 10**9))
    text = (store.folder / "Priya.md").read_text(encoding="utf-8")
    assert "- [team] on the memory team (valid 2025-09-25 → 2025-10-01)" in text
    assert "_No observations._" in text
    view = ops.View(store.snapshot(), _everyone)
    assert ops.open_nodes(view, ["Priya"], parse_as_of("2025-09-30"))["entities"][0]["observations"] == [
        "[team] on the memory team"
    ]


def test_same_key_same_text_changes_nothing(tmp_path: Path) -> None:
    assert SEPT_13 is not None
    store = _store(tmp_path)
    person = {"name": "Priya", "entityType": "person", "observations": []}
    change(store, "t", _everyone, lambda w: ops.create_entities(w, [person], ops.Reach("general"), SEPT_13))
    _add(store, "on the platform team", SEPT_13)
    before = (store.folder / "Priya.md").read_bytes()
    _add(store, "on the platform team", SEPT_13 + 5)
    assert (store.folder / "Priya.md").read_bytes() == before


def _hash(text: str) -> str:
    from shardpy.graph.note import text_hash

    return text_hash(text)
