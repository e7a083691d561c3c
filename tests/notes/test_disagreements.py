"""Each case the old frontmatter splitters and link grammars disagreed on (issue 25), read by every
reader the one way shardpy.notes decides. Each test failed on main before the readers moved."""

from __future__ import annotations

from typing import Any

import pytest
from ruamel.yaml import YAML

from shardpy.frontmatter import split_frontmatter
from shardpy.merge.frontmatter import split_frontmatter as merge_split
from shardpy.plan.links import _rewrite_bytes
from shardpy.shard.render import render_text
from shardpy.shard.rules import fenced_block, frontmatter_keys
from shardpy.vault.links import LinkRenames


def _rendered_frontmatter(template: str) -> Any:
    """The mapping a template's frontmatter renders to, with a value that is bad YAML unless the
    renderer knows it is in frontmatter (``a: b`` must be quoted)."""
    out = render_text(template, {"x": "a: b"}, name="t.md")
    found = split_frontmatter(out)
    return YAML(typ="safe").load(found.fm_text) if found.state == "present" else None


def test_an_empty_block_is_frontmatter_for_every_reader() -> None:
    text = "---\n---\nbody\n"
    assert split_frontmatter(text).state == "present"
    assert fenced_block(text) == ""  # the schema check (status): None on main
    fm, rest = merge_split(text)
    assert fm is not None and fm.inner == "" and rest == "body\n"


def test_blanks_after_the_opener_still_open() -> None:
    text = "--- \t\ntitle: x\n---\nbody\n"
    assert split_frontmatter(text).state == "present"
    assert frontmatter_keys(text) == ["title"]  # status reported title missing on main
    fm, _ = merge_split(text)
    assert fm is not None and fm.inner == "title: x\n"  # the merge driver saw none on main
    template = "--- \t\ntitle: {{ x }}\n---\nbody\n"
    assert _rendered_frontmatter(template) == {"title": "a: b"}  # render wrote `title: a: b` on main


def test_dots_do_not_close() -> None:
    text = "---\ntitle: x\n...\nbody\n"
    assert split_frontmatter(text).state == "absent"
    assert fenced_block(text) is None
    assert merge_split(text)[0] is None  # the merge driver alone closed it on main


def test_a_closer_at_the_end_of_the_file_closes() -> None:
    text = "---\ntitle: x\n---"
    assert frontmatter_keys(text) == ["title"]
    fm, rest = merge_split(text)
    assert fm is not None and rest == ""
    # render saw no frontmatter on main
    assert _rendered_frontmatter("---\ntitle: {{ x }}\n---") == {"title": "a: b"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("see `[[Old]]` and [[Old]]\n", "see `[[Old]]` and [[New]]\n"),
        ("see \\[[Old]] and [[Old|o]]\n", "see \\[[Old]] and [[New|o]]\n"),
        ("- ``a ` [[Old]]`` x\n", "- ``a ` [[Old]]`` x\n"),
        ("    [[Old]] indented code\n", "    [[Old]] indented code\n"),
        ("  ```\n[[Old]]\n  ```\n![[Old#h]]\n", "  ```\n[[Old]]\n  ```\n![[New#h]]\n"),
    ],
)
def test_the_rename_rewrite_leaves_code_and_escapes_alone(text: str, expected: str) -> None:
    links = LinkRenames.from_moves({"notes/Old.md": "notes/New.md"})
    data, count = _rewrite_bytes(links, text.encode())
    assert data.decode() == expected
    assert count == expected.count("New")
