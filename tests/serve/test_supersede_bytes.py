"""remember's writes leave the bytes nobody asked to change (a helper's probe of real memories).

Superseding a memory rewrote its whole frontmatter through a YAML round trip whenever the key
was already there (the flagship's memory template carries an empty ``superseded_by:``): spacing,
flow lists, indents and quotes changed, a comment's CR was doubled in a CRLF memory, a BOM was
dropped, and a block the round trip could not read (a tab before a comment) or a memory that is
not UTF-8 failed the call with SERVE_INTERNAL. A body sent with CRLF gave a description ending in
a carriage return, and a memory named twice in ``supersedes`` was listed twice.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.serve.kit import Shared, World, build_world, shared

HEAD = (
    "date: 2026-11-05   # day I learned it\ndescription:   'single quoted desc'\ntags:   [ memory, build ]\n"
)
TEMPLATE = (
    "---\n" + HEAD + "scope: project\nprojects: [atlas]\nconfidence: observed\norigin: \nsupersedes: \n"
    "superseded_by: \nsteps:\n    - one\n    - two\n---\n# Template lesson\n\nUse the cache.\n"
)


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Shared]]:
    world = build_world(tmp_path_factory.mktemp("supersede-bytes"))
    with shared(world, cwd=world.repos["atlas"]) as session:
        yield world, session


def _memory(world: World, name: str, data: bytes) -> str:
    rel = f"memories/2026/11/{name}.md"
    (world.vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (world.vault / rel).write_bytes(data)
    return rel


def _supersede(s: Shared, old: str, title: str) -> dict[str, object]:
    # force: the bodies are alike on purpose (no near-duplicate question in the way)
    args = {"title": title, "body": f"Newer: {title}.", "scope": "project", "supersedes": [old]}
    return s.call("remember", {**args, "force": True})


@pytest.mark.parametrize(
    ("name", "written"),
    [
        ("2026-11-05 Template lf", TEMPLATE.encode()),
        ("2026-11-05 Template crlf", TEMPLATE.replace("\n", "\r\n").encode()),
        ("2026-11-05 Template bom", ("\ufeff" + TEMPLATE).encode()),
    ],
)
def test_superseding_changes_one_line_only(atlas: tuple[World, Shared], name: str, written: bytes) -> None:
    world, s = atlas
    old = _memory(world, name, written)
    done = _supersede(s, old, f"{name} v2")
    stem = Path(str(done["path"])).stem
    nl = b"\r\n" if b"\r\n" in written else b"\n"
    want = written.replace(b"superseded_by: " + nl, f'superseded_by: "[[{stem}]]"'.encode() + nl)
    assert (world.vault / old).read_bytes() == want


def test_a_block_only_pyyaml_reads_is_superseded(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    text = TEMPLATE.replace("confidence: observed\n", "confidence: observed\t# checked twice\n")
    old = _memory(world, "2026-11-17 Tab comment", text.encode())
    done = _supersede(s, old, "Tab comment v2")
    assert f'superseded_by: "[[{Path(str(done["path"])).stem}]]"' in (world.vault / old).read_text()


def test_a_memory_not_in_utf8_is_a_typed_refusal(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    data = TEMPLATE.replace("Use the cache.", "Caf\udce9 theta.").encode("utf-8", "surrogateescape")
    old = _memory(world, "2026-11-03 Latin lesson", data)
    with pytest.raises(MCPError, match="SERVE_SUPERSEDES_INVALID"):
        _supersede(s, old, "Latin lesson v2")
    assert (world.vault / old).read_bytes() == data


def test_a_crlf_body_and_a_memory_named_twice(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    old = _memory(world, "2026-11-06 Twice", TEMPLATE.encode())
    done = s.call(
        "remember",
        {
            "title": "Windows lesson",
            "body": "First line\r\nSecond line\rThird",
            "scope": "project",
            "supersedes": [old, Path(old).stem],
        },
    )
    assert done["superseded"] == [old]
    data = (world.vault / str(done["path"])).read_bytes()
    assert b"\r" not in data and b"description: First line\n" in data
    assert (world.vault / old).read_text().count("superseded_by:") == 1


def test_links_to_attachments_and_entities_stay_links(atlas: tuple[World, Shared]) -> None:
    """A memory's links to notes that do not exist become plain text (a click would make an empty
    note); an embed of an existing image or base and a link to a graph entity were too."""
    world, s = atlas
    (world.vault / "brain/diagram.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    s.call("create_entities", {"entities": [{"name": "Priya", "entityType": "person", "observations": []}]})
    done = s.call(
        "remember",
        {
            "title": "Links kept",
            "body": "See ![[diagram.png]], ask [[Priya]], not [[No Such Note Anywhere]].",
            "scope": "project",
            "force": True,
        },
    )
    text = (world.vault / str(done["path"])).read_text(encoding="utf-8")
    assert "![[diagram.png]]" in text and "[[Priya]]" in text
    assert "not No Such Note Anywhere." in text


def test_a_memory_is_superseded_by_its_title_or_an_upper_case_path(atlas: tuple[World, Shared]) -> None:
    """recall shows a memory's title: passing it back named nothing, nor did a path ending .MD."""
    world, s = atlas
    old = _memory(
        world, "2026-11-08 Title lesson", TEMPLATE.replace("Template lesson", "Title lesson").encode()
    )
    first = s.call("recall", {"query": "Title lesson"})
    title = next(m["title"] for m in first["memories"] if m["path"] == old)
    done = s.call(
        "remember",
        {"title": "Title v2", "body": "By title.", "scope": "project", "supersedes": [title], "force": True},
    )
    assert done["superseded"] == [old]
    other = _memory(world, "2026-11-09 Upper", TEMPLATE.encode())
    upper = other[:-3] + ".MD"
    done = s.call(
        "remember",
        {"title": "Upper v2", "body": "By path.", "scope": "project", "supersedes": [upper], "force": True},
    )
    assert done["superseded"] == [other]


def test_a_title_a_superseded_memory_shares_names_the_live_one(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    body = TEMPLATE.replace("Template lesson", "Shared title")
    old = _memory(
        world,
        "2026-11-10 Shared title",
        body.replace("superseded_by: ", 'superseded_by: "[[2026-11-11 Shared title]]"').encode(),
    )
    live = _memory(world, "2026-11-11 Shared title", body.encode())
    recalled = s.call("recall", {"query": "Shared title"})
    assert {m["path"] for m in recalled["memories"]} >= {live}
    done = s.call(
        "remember",
        {
            "title": "Shared title v3",
            "body": "Third.",
            "scope": "project",
            "supersedes": ["Shared title"],
            "force": True,
        },
    )
    assert done["superseded"] == [live]
    assert 'superseded_by: "[[2026-11-11 Shared title]]"' in (world.vault / old).read_text()  # untouched
