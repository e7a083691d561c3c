"""The key-only reader status uses answers for imported notes (timestamps) and equals YAML where it does."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from shardpy.notes.frontmatter import _line_keys, _plain_block_keys, read_yaml

STAMPS = [
    "2026-12-03T18:56:21.641Z",
    "2026-12-03T18:56:21Z",
    "2026-12-03T18:56:21",
    "2026-12-03T18:56:21.123456+02:00",
    "2026-12-03T24:00:00Z",
    "2026-02-30T10:00:00Z",
    "2026-12-03T18:60:00Z",
    "2026-12-03T18:56:21.1234567Z",
    "2026-12-03T18:56:21+25:00",
    "2026-12-03 18:56:21",
]
VALUES = [*STAMPS, "x", "2024-01-05"]
lines = st.tuples(st.sampled_from(["imported_at", "date", "t"]), st.sampled_from(VALUES))
blocks = st.lists(lines, min_size=1, max_size=3, unique_by=lambda kv: kv[0]).map(
    lambda kvs: "".join(f"{k}: {v}\n" for k, v in kvs)
)


def _yaml_keys(fm: str) -> list[str] | None:
    try:
        data = YAML(typ="safe").load(fm)
    except Exception:
        return None
    return list(data) if isinstance(data, dict) else None


@settings(max_examples=400, deadline=None)
@given(blocks)
@example('imported_at: 2026-12-03T18:56:21.641Z\nsource_hash: "sha256:ab"\n')
def test_timestamps_are_read_without_yaml_and_as_yaml_reads_them(fm: str) -> None:
    fast = _plain_block_keys(fm)
    if fast is not None:
        assert fast == _line_keys(fm)
    slow = _line_keys(fm)
    if slow is not None:
        assert slow == _yaml_keys(fm)
        assert slow == list(read_yaml(fm))


def test_an_imported_block_takes_the_one_pass() -> None:
    fm = (
        "title: 'Generated Note 45'\ntype: note\npermalink: main/area-8/generated-note-45\ntags:\n- gen\n"
        "imported_from: basic-memory\nimported_at: 2026-12-03T18:56:21.641Z\n"
        'source_hash: "sha256:210b7ac4"\nscope: general\n'
    )
    assert _plain_block_keys(fm) == [
        "title", "type", "permalink", "tags", "imported_from", "imported_at", "source_hash", "scope"
    ]  # fmt: skip


def test_the_reading_loader_reads_booleans_as_yaml_1_2() -> None:
    assert read_yaml("on: yes\nb: true\n") == {"on": "yes", "b": True}


# What the importers write beside the basic-memory shape (issue 25): a Claude Code memory keeps its
# own ``metadata:`` mapping and session ids that start with a digit; titles may start with an emoji.
NESTED_VALUES = ["memory", "885ee114-3071-4b9e", "2026-09-08T19:29:56.864Z", "🚀 Launch", "é: x",
                 "🚀 #c", "1e5", "0x1F", "12abc", "9e-1", "'q'", "", "[a, b]", "{a: 1}", "yes",
                 "a:"]  # fmt: skip
NESTED_KEYS = ["node_type", "type", "originSessionId", "on", "type", "n"]
nested_lines = st.lists(
    st.tuples(st.sampled_from([1, 2, 2, 4]), st.sampled_from(NESTED_KEYS), st.sampled_from(NESTED_VALUES)),
    min_size=1,
    max_size=4,
)
top = st.tuples(
    st.sampled_from(["name", "metadata", "type", "title"]), st.sampled_from([*NESTED_VALUES, None])
)


def _nested_block(parts: list[tuple[tuple[str, str | None], list[tuple[int, str, str]]]]) -> str:
    out = []
    for (key, value), under in parts:
        if value is not None:
            out.append(f"{key}: {value}\n")
            continue
        out.append(f"{key}:\n")
        out.extend(f"{' ' * ind}{k}: {v}\n".replace(": \n", ":\n") for ind, k, v in under)
    return "".join(out)


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(top, nested_lines), min_size=1, max_size=4).map(_nested_block))
@example("name: user-role\nmetadata: \n  node_type: memory\n  originSessionId: 885ee114-3071-4b9e\n")
@example("title: 🚀 Launch Checklist\ntype: checklist\n")
@example("metadata:\n  a: 1\n    b: 2\n")
@example("metadata:\n  - a\n  b: 1\n")
def test_nested_mappings_and_other_importer_values_read_as_yaml_reads_them(fm: str) -> None:
    fast = _line_keys(fm)
    if fast is not None:
        assert fast == _yaml_keys(fm), fm
        assert fast == list(read_yaml(fm)), fm


def test_what_the_importers_write_needs_no_yaml() -> None:
    claude = (
        "name: user-role\ndescription: Dana is a backend engineer\nmetadata: \n  node_type: memory\n"
        "  type: user\n  originSessionId: 885ee114-3071-4b9e-9b32-e55329684a43\n"
        "  modified: 2026-09-08T19:29:56.864Z\ntype: user\n"
        'session_id: "885ee114-3071-4b9e-9b32-e55329684a43"\nimported_at: 2026-12-04T04:18:44.135Z\n'
    )
    assert _line_keys(claude) == ["name", "description", "metadata", "type", "session_id", "imported_at"]
    assert _line_keys("title: 🚀 Launch Checklist\ntype: checklist\n") == ["title", "type"]
