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
