"""The chunker: chunks cover the body in order, each under the right heading path."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.index.chunk import chunks_of, heading_of, parse_note, split_lines, structure

LINE = st.one_of(
    st.sampled_from(
        ["# Title", "## Alpha", "## Beta", "### Sub", "#### Deep", "```", "~~~", "", "  ", "#tag"]
    ),
    st.text(alphabet="abc xyz#`\t", min_size=0, max_size=30),
    # A line holds no "\n" (the chunker splits on it): "0\n" would be two lines.
    st.text(alphabet=st.characters(blacklist_characters="\n"), min_size=0, max_size=400),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=60), st.sampled_from([40, 200, 8000]))
def test_chunks_partition_the_lines_in_order(lines: list[str], limit: int) -> None:
    pieces = split_lines(lines, limit)
    assert pieces[0][1] == 0 and pieces[-1][2] == len(lines)
    for (_, _, end), (_, start, _) in itertools.pairwise(pieces):
        assert end == start
    for _, start, end in pieces[1:]:  # only the preamble may be empty (a note starting with ##)
        assert start < end


@settings(max_examples=300, deadline=None)
@given(st.lists(LINE, max_size=60), st.sampled_from([40, 200, 8000]))
def test_heading_paths_follow_the_outline(lines: list[str], limit: int) -> None:
    marks = structure(lines)
    for heading, start, end in split_lines(lines, limit):
        if start == end:
            continue
        # Reference: the last level-2 (or later level-1) heading at or before the chunk, then its ###.
        top: str | None = None
        sub: str | None = None
        title_seen = False
        started = False
        for i in range(min(start + 1, len(marks))):
            mark = marks[i]
            if mark is None:
                continue
            level, text = mark
            if level == 1 and not title_seen and not started:
                title_seen = True
                continue
            if level <= 2:
                top, sub, started = text, None, True
            elif level == 3:
                sub = text
        outline = (top,) if top is not None else ()
        # A section split on ### adds the ### heading (the preamble's too).
        assert heading in (outline, (*outline, sub))


@settings(max_examples=200, deadline=None)
@given(st.lists(LINE, max_size=60))
def test_chunk_texts_hold_every_non_heading_line(lines: list[str]) -> None:
    body = "\n".join(lines)
    chunks = chunks_of(body, 200)
    kept = "\n".join(c.text for c in chunks)
    marks = structure(lines)
    for line, mark in zip(lines, marks, strict=True):
        if line.strip() and mark is None:
            assert line in kept


def test_headings_in_code_fences_are_text() -> None:
    note = parse_note("n", "# T\n\n## Real\n\n```\n## Fake\n```\n\n## Also\n")
    assert [c.heading for c in note.chunks] == [("Real",), ("Also",)]
    assert "## Fake" in note.chunks[0].text


def test_long_section_splits_on_h3_then_paragraphs() -> None:
    para = "word " * 300
    body = "## Big\n\nintro\n\n### Part one\n\n" + "\n\n".join([para] * 10) + "\n\n### Part two\n\nshort\n"
    chunks = chunks_of(body)
    assert chunks[0].heading == ("Big",)
    assert {c.heading for c in chunks[1:]} == {("Big", "Part one"), ("Big", "Part two")}
    assert all(len(c.text) <= 8000 for c in chunks)
    assert sum(c.heading == ("Big", "Part one") for c in chunks) > 1


def test_title_tags_links_and_lines() -> None:
    text = (
        "---\ntags: [x, '#y']\naliases: Other name\n---\n# Heading title\n\n"
        "See [[Target|t]] #inline\n\n## S\n\n[m](dir/Page.md)\n"
    )
    note = parse_note("stem", text)
    assert note.title == "Heading title"
    assert note.tags == ["x", "y"] and note.aliases == ["Other name"]
    assert note.chunks[0].links == ("Target",) and note.chunks[0].tags == ("inline",)
    assert note.chunks[1].links == ("Page",)
    assert text.split("\n")[note.first_line + note.chunks[1].start - 1] == "## S"
    assert heading_of("## Closed ##") == (2, "Closed")
    assert parse_note("stem", "no headings").title == "stem"
