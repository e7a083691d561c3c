"""The one link grammar agrees with markdown-it's view of code spans, fences and indented code."""

from __future__ import annotations

import re
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy.index.chunk import parse_note
from shardpy.notes.wikilinks import links_outside_code

# Atomic pieces; links are numbered afterwards so each can be told apart in markdown-it's tokens.
PIECES = ["`", "``", "```", "~~~", "\n", "\n\n", "    ", " ", "a", "- ", "> ", "# ", "LINK", "LINK", "LINK"]
_MARK = re.compile(r"n(\d+)z")


def _numbered(pieces: list[str]) -> str:
    out: list[str] = []
    for piece in pieces:
        out.append(f"[[n{len(out)}z]]" if piece == "LINK" else piece)
    return "".join(out)


docs = st.lists(st.sampled_from(PIECES), max_size=30).map(_numbered)
_md: Any = None


def _code_marks(text: str) -> set[str]:
    """The link marks markdown-it (CommonMark, inline stage on) reads as code."""
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        _md = MarkdownIt("commonmark")
    found: set[str] = set()
    for tok in _md.parse(text):
        if tok.type in ("fence", "code_block"):  # a fence's info string is part of it
            found.update(_MARK.findall(tok.content + tok.info))
        for child in tok.children or ():
            if child.type == "code_inline":
                found.update(_MARK.findall(child.content))
    return found


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(docs)
@example("`[[n0z]]` [[n1z]]")
@example("```\n[[n0z]]\n```\n[[n1z]]\n")
@example("    [[n0z]]\n\n[[n1z]]")
@example("> `a\n> [[n0z]]`")
@example("- ``a ` [[n0z]]``")
def test_links_are_what_markdown_it_does_not_read_as_code(text: str) -> None:
    written = set(_MARK.findall(text))
    code = _code_marks(text)
    found = {m for link in links_outside_code(text) for m in _MARK.findall(link.inner)}
    assert found == written - code


def test_escapes_headings_aliases_embeds_and_block_refs() -> None:
    text = "\\[[a]] [[b#H|alias]] ![[c]] [[d#^block]] [[e\\|t]]"
    got = [(link.target, link.embed) for link in links_outside_code(text)]
    assert got == [("b", False), ("c", True), ("d", False), ("e", False)]


# Without "# ": no heading line, so the whole body is the index's one chunk.
index_docs = st.lists(st.sampled_from([p for p in PIECES if p != "# "]), max_size=30).map(_numbered)


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(index_docs)
@example("~~~\n[[n0z]]\n~~~\n`[[n1z]]` \\[[n2z]] [[n3z]]")
def test_the_index_reads_the_same_links(text: str) -> None:
    # issue 25: the index's links column is read with the one grammar (it had its own regex).
    chunks = parse_note("n", text).chunks
    found = {m for chunk in chunks for link in chunk.links for m in _MARK.findall(link)}
    assert found == set(_MARK.findall(text)) - _code_marks(text) - _escaped(text)


def _escaped(text: str) -> set[str]:
    return set(_MARK.findall("".join(re.findall(r"\\\[\[n\d+z", text))))
