"""The index reads links with the notes package's one grammar (issue 25): none in code, none escaped."""

from __future__ import annotations

from pathlib import Path

from shardpy import index
from shardpy.index.chunk import parse_note
from tests.index.conftest import write

# Each [[Zebra]] here is text, not a link, for import, serve and markdown-it alike.
NOT_LINKS = (
    "# Code\n\nInline `[[Zebra]]` code, an escaped \\[[Zebra]] and a fence:\n\n"
    "~~~\n[[Zebra]]\n~~~\n\n    [[Zebra]] (indented code)\n\n"
    "```md\n[See](Zebra.md)\n```\n"
)


def test_links_in_code_and_escapes_are_not_links() -> None:
    note = parse_note("Code", NOT_LINKS)
    assert [c.links for c in note.chunks] == [()]


def test_the_links_column_holds_only_real_links(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root, "Code.md", NOT_LINKS)
    write(root, "Real.md", "# Real\n\nSee [[Zebra#Stripes|the zebra]] and ![[Zebra]].\n")
    hits = index.search(root, "links:zebra").hits
    assert [h.path for h in hits] == ["Real.md"]


def test_links_keep_their_section_and_markdown_links_name_a_stem() -> None:
    text = "# T\n\nSee [[A|alias]] and [x](dir/B.md#part).\n\n## S\n\n- [[C#^block]] `[[D]]`\n"
    note = parse_note("T", text)
    assert [c.links for c in note.chunks] == [("A", "B"), ("C",)]


def test_a_backtick_run_with_a_backtick_after_it_opens_no_fence() -> None:
    # CommonMark: a backtick fence's info string holds no backtick, so this line is a paragraph
    # and the heading after it is a heading (the index's own fence rule read it as code).
    note = parse_note("n", "# T\n\n```a`b\n\n## Real\n\ntext\n")
    assert [c.heading for c in note.chunks] == [(), ("Real",)]
