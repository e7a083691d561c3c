"""basic-memory grammar, frontmatter states and file names (IMPORT-FORMATS.md §1.3-1.8)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardpy.importers.bm_grammar import Observation, Relation, parse_body, parse_observation
from shardpy.importers.names import is_safe_stem, sanitize_stem, stem_for
from shardpy.notes.frontmatter import load_yaml, render_block, split_frontmatter, yaml_scalar
from shardpy.notes.wikilinks import find_wikilinks, split_inner


@pytest.mark.parametrize(
    ("line", "category", "context"),
    [
        ("[decision] Paragraph starting with a bracket category", "decision", None),
        ("We should revisit #performance later.", None, None),
        ("## Plan #draft", None, None),
        ("[a] foo (bar) baz", "a", None),
        ("[a] foo (bar)", "a", "bar"),
        ("[design] uses [[A]] for caching #x", "design", None),
    ],
)
def test_observation_table(line: str, category: str | None, context: str | None) -> None:
    obs, _ = parse_body(line + "\n")
    assert len(obs) == 1
    assert obs[0].category == category
    assert obs[0].context == context


@pytest.mark.parametrize(
    "line",
    [
        "- [X] done",
        "- [?] q",
        "- [/] wip",
        "- [00:01:12] text",
        "> [!note] callout #tag",
        "- see https://example.com/page#section",
        "- [ ] open task #t",
        "- [x] closed task #t",
        "- [[Only A Link]]",
        "- [text](http://example.com)",
        "- C# is not a tag",
    ],
)
def test_not_observations(line: str) -> None:
    obs, _ = parse_body(line + "\n")
    assert obs == []


def test_nested_and_numbered_items_are_observations() -> None:
    body = "- top\n  - [sub] nested observation #x\n\n1. [step] numbered\n\n* [cat] star\n"
    obs, _ = parse_body(body)
    assert [o.category for o in obs] == ["sub", "step", "cat"]


def test_tags_split_and_stay_in_content() -> None:
    o = parse_observation("[t] text #a#b #c")
    assert o == Observation("t", "text #a#b #c", ("a", "b", "c"), None)


def test_table_with_tag_is_one_paragraph_observation() -> None:
    obs, _ = parse_body("| [cat] in table #t |\n|---|\n")
    assert len(obs) == 1 and obs[0].category is None


def test_code_is_never_parsed() -> None:
    body = (
        "```\n- [fake] bullet #nope\n- rel [[InFence]]\n```\n\n"
        "    - [indented] #nope [[Indented]]\n\n"
        "Inline `[[InCode]]` code and an escaped \\[[Escaped]] link and [[Real]].\n"
    )
    obs, rels = parse_body(body)
    assert obs == []
    assert rels == [Relation("links_to", "Real", None)]


def test_relations_explicit_inline_and_quoted() -> None:
    body = (
        "- relates_to [[A]]\n"
        "- relates_to: [[B]]\n"
        '- "inspired by" [[C]] (a context)\n'
        "- depends on [[D]]\n"
        "- This extends [[E]] and uses [[F]]\n"
        "- Mother [[G]] #bm:links_to\n"
        "- [[H|alias]] and [[I#Heading]]\n"
        "Prose with [[J]].\n"
        "- cross [[proj::Note]]\n"
    )
    _, rels = parse_body(body)
    assert rels == [
        Relation("relates_to", "A", None),
        Relation("relates_to:", "B", None),
        Relation("inspired by", "C", "a context"),
        Relation("links_to", "D", None),
        Relation("links_to", "E", None),
        Relation("links_to", "F", None),
        Relation("links_to", "G", None),
        Relation("links_to", "H|alias", None),
        Relation("links_to", "I#Heading", None),
        Relation("links_to", "J", None),
        Relation("cross", "proj/Note", None),
    ]


def test_markdown_links_to_notes_are_relations() -> None:
    body = (
        "See [deploy](Deploy%20to%20Staging.md), [web](https://x.org/a.md), [frag](#top) and [dir](sub/).\n"
    )
    _, rels = parse_body(body)
    assert rels == [Relation("links_to", "./Deploy to Staging.md", None)]


def test_wikilink_parts() -> None:
    links = find_wikilinks("a [[T#H|x]] b ![[img.png]] c [[Tab\\|alias]] `[[no]]`")
    assert [(link.inner, link.embed) for link in links] == [
        ("T#H|x", False),
        ("img.png", True),
        ("Tab\\|alias", False),
    ]
    assert split_inner("T#H|x") == ("T", "#H", "|", "x")
    assert split_inner("Tab\\|alias") == ("Tab", "", "\\|", "alias")


@pytest.mark.parametrize(
    ("text", "state"),
    [
        ("---\ntitle: x\n---\nbody\n", "present"),
        ("---\n---\nbody\n", "present"),
        ("no frontmatter\n", "absent"),
        ("---\ntitle: never closed\nbody\n", "absent"),
        ("---\ntitle: [bad\n---\nbody\n", "malformed"),
        ("---\n- a list\n---\nbody\n", "malformed"),
        ("---\njust a scalar\n---\nbody\n", "malformed"),
        ("---\r\ntitle: crlf\r\n---\r\nbody\r\n", "present"),
    ],
)
def test_frontmatter_states(text: str, state: str) -> None:
    split = split_frontmatter(text)
    assert split.state == state
    if state != "present":
        assert split.body == text


def test_render_block_appends_and_keeps_source_bytes() -> None:
    fm = "title: 'Q: x'  # a comment\ntags: [a, b]\n"
    block = render_block(fm, load_yaml(fm), [("imported_from", "basic-memory"), ("title", "Q: x")], "\n")
    assert block == "---\n" + fm + "imported_from: basic-memory\n---\n"


def test_render_block_replaces_changed_key_keeping_comments() -> None:
    fm = "# keep me\naliases:\n- old\n"
    block = render_block(fm, load_yaml(fm), [("aliases", ["old", "New: One"])], "\n")
    assert "# keep me" in block
    assert load_yaml(block.strip("-\n"))["aliases"] == ["old", "New: One"]


@given(st.text(min_size=0, max_size=40))
def test_yaml_scalar_round_trips(value: str) -> None:
    loaded = load_yaml(f"k: {yaml_scalar(value)}\n")
    assert loaded["k"] == value


@pytest.mark.parametrize(
    ("title", "stem"),
    [
        ("Q3 Planning: Goals/Risks", "Q3 Planning- Goals-Risks"),
        ("What's next?", "What's next"),
        ("C# Tips", "C- Tips"),
        ("  .hidden.  ", "hidden"),
        ("a\\b<c>d|e*f", "a-b-c-d-e-f"),
        ("", "untitled"),
        ("CON", "CON_"),
        ("[[link]]", "link"),
    ],
)
def test_sanitize(title: str, stem: str) -> None:
    assert sanitize_stem(title) == stem
    assert is_safe_stem(sanitize_stem(title))


def test_safe_titles_are_kept() -> None:
    for title in ("Coffee Brewing Methods", "Überblick Architektur", "🚀 Launch Checklist", "李伟 (Li Wei)"):
        assert stem_for(title) == (title, False)
    long = "x" * 300
    stem, renamed = stem_for(long)
    assert renamed and len(stem.encode()) <= 200


@given(st.text(max_size=80))
def test_sanitized_names_are_always_safe(title: str) -> None:
    assert is_safe_stem(sanitize_stem(title))
