"""The line scanner gives exactly markdown-it's inline blocks wherever it answers."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy.notes.blocks import inline_blocks, markdown_it_blocks, scanned_blocks
from shardpy.notes.frontmatter import split_frontmatter
from tests.importers.fixtures import PLANNING, TEA, generated_note

# Pieces that matter to CommonMark's block structure, plus ordinary text.
PIECES = [
    " ",
    "  ",
    "   ",
    "    ",
    "\t",
    "- ",
    "-",
    "* ",
    "+ ",
    "-     ",
    "1. ",
    "1)",
    "2. ",
    "# ",
    "## ",
    "###### ",
    "####### ",
    "#",
    " #",
    "> ",
    ">",
    "```",
    "~~~",
    "```py",
    "``x`",
    "````",
    "---",
    "***",
    "- - -",
    "___",
    "===",
    "<div>",
    "<!-- c -->",
    "[a]: /url",
    "[cat] ",
    "[ ] ",
    "[[Link]]",
    "[[A|b]]",
    "text",
    "more words",
    "#tag",
    "(ctx)",
    "`code`",
    "\\",
    "|",
    ":",
    "]:",
    "[",
    "\u00a0",
    "\u3000",
    "\x1c",
    "\x00",
    "\r",
]

lines = st.lists(st.sampled_from(PIECES), max_size=4).map("".join)
bodies = st.tuples(
    st.lists(lines, max_size=14), st.sampled_from(["\n", "\r\n"]), st.sampled_from(["", "\n", "  "])
).map(lambda t: t[1].join(t[0]) + t[2])
chars = st.text(alphabet=" \t\n\r-*+#>`~[]()=_<1.!:|xy\u00a0\x1c", max_size=120)


def _same_where_answered(body: str) -> None:
    fast = scanned_blocks(body)
    if fast is not None:
        assert fast == markdown_it_blocks(body)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(bodies)
@example("- a\n  b\n")
@example("para\n    lazy\n- item\n")
@example("- a\n\n    code\n")
@example("# h #\n## x ##  \n### #\n#\n")
@example("```\n- [x] in fence\n ```\nafter\n")
@example("text\n===\n")
@example("[cat] x\n[ref]: /u\n")
# The bullet fast paths: a marker repeated after the item marker may be a break or an underline.
@example("para\n- - -\n- a\n- -\n* x\n* * *\n+ a\n+ +\n")
@example("para\n-  x\n- \tx\n-- y\n--\n")
def test_scanner_matches_markdown_it(body: str) -> None:
    _same_where_answered(body)


@settings(max_examples=800, deadline=None)
@given(chars)
def test_scanner_matches_markdown_it_on_noise(body: str) -> None:
    _same_where_answered(body)


@pytest.mark.parametrize("text", [TEA, PLANNING, *(generated_note(i, 50)[1] for i in range(14))])
def test_scanner_answers_for_ordinary_notes(text: str) -> None:
    body = split_frontmatter(text).body
    fast = scanned_blocks(body)
    assert fast is not None
    assert fast == markdown_it_blocks(body)
    assert inline_blocks(body) == fast


def test_scanner_declines_what_it_does_not_decide() -> None:
    for body in ("> quote\n", "1. one\n", "- a\n  - b\n", "- a\nlazy\n", "x\n---\n", "<div>\n", "a\rb\n"):
        assert scanned_blocks(body) is None, body
        assert inline_blocks(body) == markdown_it_blocks(body)
