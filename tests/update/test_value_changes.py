"""value_changes answers without deepdiff only where deepdiff would find nothing."""

from __future__ import annotations

from typing import Any

from deepdiff import DeepDiff
from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.flows.update import _same_value, value_changes

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from([0.0, 1.0, 2.5, -1.0]),
    st.sampled_from(["", "a", "1"]),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from("abc"), inner, max_size=3)
    ),
    max_leaves=8,
)
mappings = st.dictionaries(st.sampled_from(["user_name", "size", "flag", "tags"]), values, max_size=4)


@settings(max_examples=400, deadline=None)
@given(mappings, mappings)
def test_same_values_are_what_deepdiff_calls_unchanged(a: dict[str, Any], b: dict[str, Any]) -> None:
    if _same_value(a, b):
        assert not DeepDiff(a, b, ignore_numeric_type_changes=True)
        assert value_changes(a, b) == {}
    assert _same_value(a, a)


def test_changes_still_reported() -> None:
    assert value_changes({"x": 1, "y": "a"}, {"x": 1.0, "y": "b"}) == {"y": {"old": "a", "new": "b"}}
    assert value_changes({"x": [1]}, {"x": [1, 2]}) == {"x": {"old": [1], "new": [1, 2]}}


def test_values_mostly_replaced_are_each_reported() -> None:
    changes = value_changes({"a": 1}, {"a": 1, "b": 2, "c": 3, "d": 4})
    assert list(changes) == ["b", "c", "d"]
    assert changes["b"] == {"old": None, "new": 2, "added": True}


@settings(max_examples=400, deadline=None)
@given(mappings, mappings)
def test_changes_are_the_root_keys_deepdiff_finds(a: dict[str, Any], b: dict[str, Any]) -> None:
    # threshold 0: deepdiff >= 8 otherwise reports two mappings that share under a third
    # of their keys as one changed root, with no root keys (value_changes was then {}).
    keys = DeepDiff(a, b, ignore_numeric_type_changes=True, threshold_to_diff_deeper=0).affected_root_keys
    assert list(value_changes(a, b)) == sorted(map(str, keys))


def test_an_added_or_removed_value_needs_no_deepdiff() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from shardpy.flows.update import value_changes\n"
        "changes = value_changes({'a': 1, 'b': [1]}, {'a': 1.0, 'b': [1], 'c': 'new'})\n"
        "print(changes, 'deepdiff' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "{'c': {'old': None, 'new': 'new', 'added': True}} False"
