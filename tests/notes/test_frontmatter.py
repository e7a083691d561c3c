"""The one splitter (shardpy.notes.frontmatter.fences): its contract, and every note back byte for byte."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from shardpy.merge.frontmatter import split_frontmatter as merge_split
from shardpy.notes.frontmatter import fenced_block, fences, split_fences, split_frontmatter

PIECES = ["---", "...", "\n", "\r\n", "\r", " ", "\t", "a: 1", "k: [x, y]", "\ufeff", "x", "-", "----", "# h"]
notes = st.lists(st.sampled_from(PIECES), max_size=16).map("".join)
_FENCE_LINE = re.compile(r"---[ \t]*(?:\r?\n|\Z)")


@settings(max_examples=3000, deadline=None)
@given(notes)
@example("---\n---\n")
@example("\ufeff---\r\na: 1\r\n---")
@example("--- \t\na: 1\n---  \nbody")
def test_the_splitter_gives_every_note_back_byte_for_byte(text: str) -> None:
    found = fences(text)
    if found is None:
        return
    assert found.prefix + found.opener + found.yaml + found.closer + found.body == text
    assert found.prefix in ("", "\ufeff")
    assert re.fullmatch(r"---[ \t]*\r?\n", found.opener)
    assert _FENCE_LINE.fullmatch(found.closer)
    assert found.newline == ("\r\n" if found.opener.endswith("\r\n") else "\n")
    # The closer is the first fence line after the opener: none inside the YAML.
    assert not any(_FENCE_LINE.fullmatch(line) for line in found.yaml.splitlines(keepends=True))


@settings(max_examples=1500, deadline=None)
@given(notes)
def test_every_reader_sees_the_same_fences(text: str) -> None:
    found = fences(text)
    fm, rest = merge_split(text)
    if found is None:
        assert fenced_block(text) is None and split_fences(text) is None and fm is None
        assert split_frontmatter(text).state == "absent"
        return
    assert fenced_block(text) == found.yaml
    assert split_fences(text) == (found.yaml, found.body, found.newline)
    assert fm is not None and fm.inner == found.yaml and fm.block + rest == text
    split = split_frontmatter(text)
    assert split.state in ("present", "malformed")
    assert split.fm_text == found.yaml


def test_the_contract() -> None:
    assert fences("---\n---\n") is not None  # an empty block is frontmatter
    assert fences("---\na: 1\n...\nbody\n") is None  # "..." does not close
    assert fences("---\na: 1\n") is None  # never closed
    assert fences("x\n---\na: 1\n---\n") is None  # the opener is the first line
    end = fences("---\na: 1\n---")
    assert end is not None and end.yaml == "a: 1\n" and end.body == ""
    bom = fences("\ufeff--- \r\na: 1\r\n---\t\r\nbody")
    assert bom is not None and (bom.prefix, bom.yaml, bom.body) == ("\ufeff", "a: 1\r\n", "body")
    assert fences("---\ra: 1\r---\r") is None  # a lone CR is not a line end


# Any text after a likely opener: the pieces above are the fences' own alphabet; this is everyone else's.
any_notes = st.tuples(
    st.sampled_from(["", "---\n", "---\r\n", "\ufeff---\n", "--- \t\n"]),
    st.text(max_size=200),
    st.sampled_from(["", "\n---\n", "\n---", "\r\n---\r\n", "\n--- x\n"]),
    st.text(max_size=40),
).map("".join)


@settings(max_examples=1500, deadline=None)
@given(any_notes)
def test_the_splitter_gives_any_text_back_byte_for_byte(text: str) -> None:
    found = fences(text)
    split = split_frontmatter(text)
    if found is None:
        assert split.state == "absent" and split.body == text
        return
    assert found.prefix + found.block + found.body == text
    # The reader's body is the splitter's (present) or the whole text (malformed): nothing lost.
    assert split.body in (found.body, text)
