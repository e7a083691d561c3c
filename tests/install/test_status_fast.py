"""The key-only frontmatter read status --verbose uses equals the YAML path it replaces."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy.fsutil import read_text
from shardpy.notes.frontmatter import frontmatter_keys, parse_frontmatter, simple_keys
from shardpy.shard.rules import KeyRules, glob_regex
from tests.importers.test_fastpaths import KEYS, SEPARATORS, VALUES, blocks

MORE_VALUES = [
    "2024-03-05",
    "2024-13-45",
    "2024-02-30",
    "2024-3-5",
    "12",
    "007",
    "12.5",
    "[user]",
    "[a, b]",
    "[ a ,b ]",
    "[]",
    "[a, [b]]",
    "[a: b]",
    "[a,]",
    "{a: b}",
    "[x] y",
]
more = st.builds(
    lambda k, s, v: k + s + v + "\n",
    st.sampled_from(KEYS),
    st.sampled_from(SEPARATORS),
    st.sampled_from(MORE_VALUES + VALUES),
)
texts = st.one_of(
    blocks, st.lists(more, min_size=1, max_size=5).map("".join), st.tuples(blocks, more).map("".join)
)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("date: 2024-13-45\n")
@example("tags: [a, b]\ndate: 2024-03-05\nn: 7\n")
@example("date: 1\ndate: 2\n")
def test_frontmatter_keys_equal_the_yaml_loader(fm: str) -> None:
    text = "---\n" + fm.rstrip("\r\n") + "\n---\nbody\n"
    assert frontmatter_keys(text) == list(parse_frontmatter(text) or {})


def test_ordinary_notes_need_no_yaml() -> None:
    fm = "date: 2024-03-05\ndescription: a note\ntags: [user, idea]\nstatus: active\ncount: 3\n"
    assert simple_keys(fm) == ["date", "description", "tags", "status", "count"]
    assert simple_keys("date: 2024-02-30\n") is None  # not a date: YAML decides (and fails)
    assert simple_keys("a: {b: c}\n") is None


@settings(max_examples=200, deadline=None)
@given(parts=st.lists(st.sampled_from(["a", "\r", "\n", "\r\n", "é", "\ufeff", "---", " "]), max_size=40))
def test_read_text_equals_open(parts: list[str], tmp_path_factory: pytest.TempPathFactory) -> None:
    path = tmp_path_factory.mktemp("rt") / "note.md"
    path.write_bytes("".join(parts).encode())
    with open(path, encoding="utf-8") as fh:
        assert read_text(str(path)) == fh.read()


@settings(max_examples=600, deadline=None)
@given(texts | st.text(alphabet="aby-_:' \"\n[],#0123456789A", max_size=60))
@example("a:\n  - x\n  - z\nb: 3\n")
@example("a:\n  - x\n - z\n")
@example("no: 1\n")
@example("d: 2024-02-29\ne: 2023-02-29\n")
def test_one_pass_block_keys_equal_the_line_reader(fm: str) -> None:
    """The one-regex read of common blocks answers only where the line reader
    (itself property-tested against YAML above) answers, and the same."""
    from shardpy.notes.frontmatter import _line_keys, _plain_block_keys

    fast = _plain_block_keys(fm)
    if fast is not None:
        assert fast == _line_keys(fm)
        assert fast == list(parse_frontmatter("---\n" + fm.rstrip("\n") + "\n---\n") or {})


def test_one_pass_reads_ordinary_blocks() -> None:
    from shardpy.notes.frontmatter import _plain_block_keys

    fm = "date: 2024-03-31\ndescription: note 7\ntags: [user]\naliases:\n  - Seven\n  - 'the 7th'\ncount: 7"
    assert _plain_block_keys(fm) == ["date", "description", "tags", "aliases", "count"]


def _first_type(path: str, schema: Any) -> str | None:
    """note_type as it was written before the rules were compiled: the first declared type matching."""
    import re

    for name, rule in schema.frontmatter.items():
        if name != "global" and rule.path_match and re.match(glob_regex(rule.path_match).pattern, path):
            return str(name)
    return None


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(
        st.sampled_from(["work", "active", "1-1", "org", "people", "a.md", "x", "**"]), max_size=5
    ),
    globs=st.lists(
        st.sampled_from(["work/**", "work/*/a.md", "**/a.md", "org/*", "*.md", "x/**/y"]), max_size=4
    ),
)
def test_compiled_rules_pick_the_first_declared_type(parts: list[str], globs: list[str]) -> None:
    from shardpy.shard.schema import Schema

    frontmatter: dict[str, Any] = {"global": {"required": ["date"]}}
    frontmatter.update(
        {f"t{i}": {"path_match": g, "required": ["date", f"k{i}", f"k{i}"]} for i, g in enumerate(globs)}
    )
    schema = Schema.model_validate({"schema_version": 1, "values": {}, "frontmatter": frontmatter})
    path = "/".join(parts)
    kind, keys = KeyRules(schema).required(path)
    assert kind == _first_type(path, schema)
    assert keys == (["date", f"k{kind[1:]}"] if kind else ["date"])
