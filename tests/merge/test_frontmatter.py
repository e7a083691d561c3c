"""Key-level frontmatter merging."""

from __future__ import annotations

import datetime
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardpy.merge.frontmatter import ABSENT, Frontmatter, KeyConflict, merge_frontmatter, split_frontmatter


def test_split_frontmatter() -> None:
    fm, body = split_frontmatter("---\ntitle: x\n---\n# Body\n")
    assert fm == Frontmatter(block="---\ntitle: x\n---\n", inner="title: x\n")
    assert body == "# Body\n"
    assert fm.line_count == 3
    assert split_frontmatter("# no frontmatter\n---\n") == (None, "# no frontmatter\n---\n")
    assert split_frontmatter("---\nnever closed\n")[0] is None
    # "..." does not close (the one splitter's contract, tests/notes/test_disagreements.py).
    assert split_frontmatter("---\na: 1\n...\nrest")[0] is None
    fm, body = split_frontmatter("---\n---\n")
    assert fm is not None and fm.inner == "" and body == ""
    fm, body = split_frontmatter("---\na: 1\n---")
    assert fm is not None and fm.block == "---\na: 1\n---" and body == ""


def test_tags_merge_as_three_way_sets() -> None:
    base = "tags:\n  - a\n  - b\n  - c\n"
    user = "tags:\n  - a\n  - c\n  - mine\n"  # removed b, added mine
    shard = "tags:\n  - a\n  - b\n  - c\n  - theirs\n"  # added theirs
    result = merge_frontmatter(base, user, shard)
    assert result.inner == "tags:\n  - a\n  - c\n  - mine\n  - theirs\n"
    assert result.conflicts == [] and result.changed_keys == ["tags"]


def test_removal_by_the_shard_is_honoured_in_a_set_merge() -> None:
    result = merge_frontmatter("aliases: [x, y, z]\n", "aliases: [x, y, z, mine]\n", "aliases: [x, z]\n")
    assert result.inner == "aliases: [x, z, mine]\n"


def test_key_changed_on_one_side_takes_that_side_and_keeps_user_formatting() -> None:
    base = 'title: "Note"\nstatus: draft\n'
    user = 'title: "My Note"   # renamed by me\nstatus: draft\n'
    shard = "title: \"Note\"\nstatus: 'active'\n"
    result = merge_frontmatter(base, user, shard)
    assert result.inner == "title: \"My Note\"   # renamed by me\nstatus: 'active'\n"
    assert result.conflicts == []


def test_key_conflict_keeps_the_users_value_and_is_reported() -> None:
    base = "title: Note\nstatus: draft\n"
    user = "title: Mine\nstatus: draft\n"
    shard = "title: Theirs\nstatus: final\n"
    result = merge_frontmatter(base, user, shard)
    assert result.inner == "title: Mine\nstatus: final\n"
    assert result.conflicts == [KeyConflict(key="title", base="Note", user="Mine", shard="Theirs")]
    assert "kept yours" in result.conflicts[0].describe()
    assert "<<<<<<<" not in (result.inner or "")


def test_delete_versus_change_is_a_key_conflict_keeping_the_deletion() -> None:
    result = merge_frontmatter("a: 1\nb: 2\n", "b: 2\n", "a: 5\nb: 2\n")
    assert result.inner == "b: 2\n"
    assert result.conflicts == [KeyConflict(key="a", base=1, user=ABSENT, shard=5)]
    assert "(absent)" in result.conflicts[0].describe()


def test_added_and_removed_keys() -> None:
    base = "a: 1\nb: 2\nc: 3\n"
    user = "a: 1\nb: 2\nc: 3\nmine: yes\n"
    shard = "a: 1\nnew: x\nc: 3\n"  # removed b, added new after a
    result = merge_frontmatter(base, user, shard)
    assert result.inner == "a: 1\nnew: x\nc: 3\nmine: yes\n"


def test_values_are_compared_as_typed_data() -> None:
    # Re-quoting is not a change; 1 -> 1.0 and 1 -> true are.
    assert merge_frontmatter("n: 1\ns: x\n", "n: 1\ns: 'x'\n", "n: 1.0\ns: x\n").inner == "n: 1.0\ns: 'x'\n"
    conflict = merge_frontmatter("n: 1\n", "n: true\n", "n: 1.0\n")
    assert conflict.conflicts == [KeyConflict(key="n", base=1, user=True, shard=1.0)]


def test_nested_mappings_merge_key_by_key() -> None:
    base = "meta:\n  a: 1\n  b: 2\n"
    user = "meta:\n  a: 10\n  b: 2\n"
    shard = "meta:\n  a: 1\n  b: 20\n  c: 3\n"
    result = merge_frontmatter(base, user, shard)
    assert result.inner == "meta:\n  a: 10\n  b: 20\n  c: 3\n"
    clash = merge_frontmatter(base, "meta:\n  a: 10\n  b: 2\n", "meta:\n  a: 11\n  b: 2\n")
    assert clash.conflicts == [KeyConflict(key="meta.a", base=1, user=10, shard=11)]


def test_comments_quotes_order_and_indentation_survive() -> None:
    base = "# my note\ntitle: Note\ntags:\n    - x\ndate: 2024-01-01\n"
    user = "# my note\ntags:\n    - x\n    - 'mine'  # keep\ntitle: Note   # title\ndate: 2024-01-01\n"
    shard = "title: Note\ntags:\n- x\n- theirs\ndate: 2024-02-02\n"
    result = merge_frontmatter(base, user, shard)
    assert result.inner == (
        "# my note\ntags:\n    - x\n    - 'mine'  # keep\n    - theirs\n"
        "title: Note   # title\ndate: 2024-02-02\n"
    )


def test_dates_compare_as_dates() -> None:
    result = merge_frontmatter("d: 2024-01-01\n", "d: 2024-01-01\nx: 1\n", "d: 2024-03-01\n")
    assert result.inner == "d: 2024-03-01\nx: 1\n"
    conflict = merge_frontmatter("d: 2024-01-01\n", "d: 2024-01-02\n", "d: 2024-01-03\n")
    assert conflict.conflicts[0].shard == datetime.date(2024, 1, 3)


def test_nothing_to_apply_returns_the_users_text_untouched() -> None:
    user = "title:   Mine    # odd spacing\n"
    result = merge_frontmatter("title: Note\n", user, "title: Theirs\n")
    assert result.inner == user


def test_missing_base_block_counts_as_empty() -> None:
    result = merge_frontmatter(None, "a: 1\nshared: same\n", "shared: same\nb: 2\n")
    assert result.inner == "a: 1\nshared: same\nb: 2\n" and result.conflicts == []


def test_all_keys_removed_gives_an_empty_block() -> None:
    assert merge_frontmatter("a: 1\nb: 2\n", "a: 1\n", "b: 2\n").inner == ""


def test_not_a_mapping_or_invalid_yaml_falls_back() -> None:
    for bad_user in ("- a\n- b\n", "just text\n", "a: [unclosed\n", "a: 1\na: 2\n"):
        result = merge_frontmatter("a: 1\n", bad_user, "a: 2\n")
        assert result.inner is None and not result.merged
        assert result.fallback_reason and "user frontmatter" in result.fallback_reason
    result = merge_frontmatter("a: 1\n", "a: 1\nb: 1\n", "- x\n")
    assert result.fallback_reason == "shard frontmatter is not a YAML mapping"


# --- properties -----------------------------------------------------------------

_scalar = st.one_of(
    st.sampled_from(["x", "y", "z", "yes", "1", ""]), st.integers(0, 3), st.booleans(), st.none()
)
_value = st.one_of(_scalar, st.lists(st.sampled_from(["a", "b", "c", "d"]), max_size=4, unique=True))
_mapping = st.dictionaries(st.sampled_from(["title", "tags", "status", "n", "aliases"]), _value, max_size=5)


def _yaml(data: dict[str, object]) -> str:
    return "".join(f"{k}: {json.dumps(v)}\n" for k, v in data.items())


def _load(text: str | None) -> object:
    from ruamel.yaml import YAML

    return YAML(typ="safe").load(text or "") or {}


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mapping, _mapping, _mapping)
def test_frontmatter_merge_properties(
    base: dict[str, object], x: dict[str, object], y: dict[str, object]
) -> None:
    b, xt, yt = _yaml(base), _yaml(x), _yaml(y)
    assert merge_frontmatter(b, b, xt).inner is not None
    assert _load(merge_frontmatter(b, b, xt).inner) == x
    assert merge_frontmatter(b, xt, b).inner == xt
    assert merge_frontmatter(b, xt, xt).inner == xt
    result = merge_frontmatter(b, xt, yt)
    merged = _load(result.inner)
    assert isinstance(merged, dict)
    conflicted = {c.key for c in result.conflicts}
    for key in set(base) | set(x) | set(y):
        if key in conflicted:
            # A key conflict keeps the user's value (or the user's removal).
            assert merged.get(key, ABSENT) == x.get(key, ABSENT)
        elif x.get(key, ABSENT) == base.get(key, ABSENT) and type(x.get(key)) is type(base.get(key)):
            assert merged.get(key, ABSENT) == y.get(key, ABSENT)
