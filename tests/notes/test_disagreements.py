"""Each case the old frontmatter splitters and link grammars disagreed on (issue 25), read by every
reader the one way shardpy.notes decides. Each test failed on main before the readers moved."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from ruamel.yaml import YAML

from shardpy.index.config import IndexConfig
from shardpy.index.walk import walk
from shardpy.merge.frontmatter import split_frontmatter as merge_split
from shardpy.notes.frontmatter import fenced_block, frontmatter_keys, split_frontmatter
from shardpy.plan.links import _rewrite_bytes
from shardpy.serve import tools
from shardpy.serve.graph import links_in
from shardpy.shard.render import render_text
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


@pytest.mark.parametrize(
    "text",
    [
        "    [[Old]] indented code\n",
        "````\n```\n[[Old]]\n````\n",  # a longer fence is not closed by a shorter one
        "~~~\n[[Old]]\n~~~~\n",
        "- ``a ` [[Old]]`` x\n",
    ],
)
def test_serve_reads_no_link_in_code(text: str) -> None:
    """expand's links and backlinks and health's broken links: serve blanked fences by their first
    three characters only (``serve/graph._without_fences``) and read indented code as text."""
    assert links_in("---\ntags: [x]\n---\n" + text + "and [[New]]\n") == ["New"]


def test_the_index_and_the_server_withhold_the_same_folders(tmp_path: Path) -> None:
    """The issue's case: with ``mcp_never_expose: ["secret", "people/private"]`` the index held only
    the allowed note while the server served the rest (fixed in the server by issue 24; since issue
    25 both ask one rule, shardpy/notes/visibility.py)."""
    vault = tmp_path / "vault"
    notes = ["brain/ok.md", "secret/a.md", "people/private/b.md", "credentials/k.md", "transcripts/t.md"]
    for rel in notes:
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(f"# {rel}\n\nwords\n", encoding="utf-8")
    roots = ["brain", "secret", "people", "credentials", "transcripts"]
    manifest = {"mcp_exposed_roots": roots, "mcp_never_expose": ["secret", "people/private"]}
    (vault / "vault-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    vault = vault.resolve()
    assert set(walk(vault, IndexConfig.for_vault(vault))[0]) == {"brain/ok.md"}
    exposure = tools.Served.open(vault).exposure
    assert set(exposure.notes()) == {"brain/ok.md"}
    assert [rel for rel in notes if exposure.read_text(rel) is not None] == ["brain/ok.md"]
