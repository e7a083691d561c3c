"""JSON files merged value by value when their lines will not merge (gitsync/jsonmerge.py)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.gitsync.jsonmerge import merge_json
from shardpy.gitsync.merge import merge_bytes


def obsidian(value: Any) -> bytes:
    """As Obsidian writes its files: JSON.stringify(value, null, 2), no final line break."""
    return json.dumps(value, indent=2, ensure_ascii=False).encode("utf-8")


PLAIN = st.one_of(st.booleans(), st.integers(-5, 5), st.text("abcé", max_size=3), st.none())
KEYS = st.text("abcdefgh", min_size=1, max_size=3)
SETTINGS = st.dictionaries(KEYS, PLAIN, max_size=8)


@settings(max_examples=200, deadline=None)
@given(SETTINGS, SETTINGS, SETTINGS, st.data())
def test_changes_to_different_keys_all_arrive_whichever_side_is_ours(
    base: dict[str, Any], mine: dict[str, Any], other: dict[str, Any], data: st.DataObject
) -> None:
    # Each side changes (or adds, or removes) its own keys; none touches the other's.
    own = {k: v for k, v in mine.items() if k not in other}
    ours = {**base, **own}
    theirs = {**base, **{k: v for k, v in other.items() if k not in own}}
    gone = data.draw(st.sets(st.sampled_from(sorted(base)), max_size=2)) if base else set()
    for k in gone:
        if k not in own and k not in other:
            ours.pop(k, None)
    got = merge_json(obsidian(base), obsidian(ours), obsidian(theirs))
    assert got is not None
    assert got == merge_json(obsidian(base), obsidian(theirs), obsidian(ours))  # the same both ways
    merged = json.loads(got)
    for key in set(base) | set(ours) | set(theirs):
        changed = [side for side in (ours, theirs) if side.get(key, "∅") != base.get(key, "∅")]
        want = changed[0].get(key, "∅") if changed else base.get(key, "∅")
        assert merged.get(key, "∅") == want, key
    assert got == obsidian(merged)  # written as Obsidian writes it


def test_two_plugins_enabled_on_two_machines_are_both_enabled() -> None:
    base = obsidian(["calendar", "dataview"])
    ours = obsidian(["calendar", "dataview", "tasks"])
    theirs = obsidian(["calendar", "templater", "dataview", "kanban"])
    got = merge_json(base, ours, theirs)
    assert got is not None and got == merge_json(base, theirs, ours)
    merged = json.loads(got)
    assert merged[:2] == ["calendar", "dataview"]  # base's order first, then what each side added
    assert sorted(merged[2:]) == ["kanban", "tasks", "templater"]
    # One machine disabled a plugin the other kept: it stays disabled.
    got = merge_json(base, obsidian(["calendar"]), obsidian(["calendar", "dataview", "x"]))
    assert json.loads(got or b"") == ["calendar", "x"]


def test_what_cannot_be_merged_by_value_is_left_to_the_caller() -> None:
    base = obsidian({"theme": "light", "zoom": 1})
    assert (
        merge_json(base, obsidian({"theme": "dark", "zoom": 1}), obsidian({"theme": "moon", "zoom": 1}))
        is None
    )
    nodes = obsidian({"nodes": [{"id": "a"}]})
    assert (
        merge_json(nodes, obsidian({"nodes": [{"id": "a"}, {"id": "b"}]}), obsidian({"nodes": [{"id": "c"}]}))
        is None
    )
    assert (
        merge_json(base, b'{"theme": "dark","zoom": 1}', obsidian({"theme": "light", "zoom": 2})) is None
    )  # not written alike
    assert merge_json(base, b"not json", base) is None
    # 1.0 is not 1 to JSON's readers: a side that wrote 1.0 changed the value, and it is kept.
    got = merge_json(base, obsidian({"theme": "light", "zoom": 1.0}), obsidian({"theme": "x", "zoom": 1}))
    assert got == obsidian({"theme": "x", "zoom": 1.0})


def test_the_driver_merges_neighbouring_settings_it_used_to_keep_whole() -> None:
    """Two settings on touching lines, one changed on each machine: the line merge conflicts and the
    merging machine's file was kept whole (the other change lost from the result)."""
    base = obsidian({"alwaysUpdateLinks": False, "showLineNumber": False, "vimMode": False})
    ours = obsidian({"alwaysUpdateLinks": False, "showLineNumber": True, "vimMode": False})
    theirs = obsidian({"alwaysUpdateLinks": False, "showLineNumber": False, "vimMode": True})
    got = merge_bytes(base, ours, theirs, ".obsidian/app.json")
    assert got.clean
    assert json.loads(got.data) == {"alwaysUpdateLinks": False, "showLineNumber": True, "vimMode": True}
    assert got.data == obsidian(json.loads(got.data))


def test_what_the_helper_found_is_refused_or_kept() -> None:
    """Each case once merged wrongly, silently (helper-found)."""
    # A key each machine added, on lines apart: the line merge was "clean" with the key twice, and
    # the reader kept one value.
    base = b'{\n  "a": 1,\n  "b": 2,\n  "c": 3\n}\n'
    ours = b'{\n  "a": 1,\n  "x": "ours",\n  "b": 2,\n  "c": 3\n}\n'
    theirs = b'{\n  "a": 1,\n  "b": 2,\n  "x": "theirs",\n  "c": 3\n}\n'
    assert not merge_bytes(base, ours, theirs, ".obsidian/app.json").clean
    # NaN is not JSON: never written.
    assert (
        merge_json(b'{\n  "a": 1,\n  "b": 1\n}', b'{\n  "a": NaN,\n  "b": 1\n}', b'{\n  "a": 1,\n  "b": 2\n}')
        is None
    )
    # Numbers in a list may be positions: both sides changing one is a conflict, not a set merge.
    assert merge_json(obsidian({"pos": [0, 1]}), obsidian({"pos": [0, 2]}), obsidian({"pos": [3, 1]})) is None
    # A side that only reordered a list gives the order; the other's addition is kept too.
    got = merge_json(
        obsidian({"l": ["a", "b"]}), obsidian({"l": ["b", "a"]}), obsidian({"l": ["a", "b", "c"]})
    )
    assert json.loads(got or b"") == {"l": ["b", "a", "c"]}
    # -0.0 and 0.0 are two values as written: both sides changing 1.5 to each is a conflict.
    assert merge_json(obsidian({"a": 1.5}), obsidian({"a": -0.0}), obsidian({"a": 0.0})) is None
