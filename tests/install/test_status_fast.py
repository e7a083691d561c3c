"""The key-only frontmatter read status --verbose uses equals the YAML path it replaces."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy.frontmatter import simple_keys
from shardpy.fsutil import read_text
from shardpy.shard.rules import frontmatter_keys, parse_frontmatter
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
