"""One derivation of a note's stem, title, tags, aliases and type: the index reads the same."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.index.chunk import parse_note
from shardpy.notes import note
from shardpy.notes.frontmatter import split_frontmatter

VALUES = ["", "x", "'#a, b c'", "[a, '#b']", "\n- p\n- '#q r'", "2024-01-05", "true", "  "]
blocks = st.lists(
    st.tuples(st.sampled_from(["title", "tags", "aliases", "type"]), st.sampled_from(VALUES)),
    max_size=4,
    unique_by=lambda kv: kv[0],
).map(lambda kvs: "".join(f"{k}: {v}\n" for k, v in kvs))


@settings(max_examples=300, deadline=None)
@given(blocks, st.sampled_from(["", "# Heading\n", "text\n"]))
def test_the_index_derives_what_notes_note_does(block: str, body: str) -> None:
    text = f"---\n{block}---\n{body}"
    split = split_frontmatter(text)
    data = split.data if split.state == "present" else {}
    parsed = parse_note("Stem", text)
    heading = "Heading" if body.startswith("# ") else ""
    assert parsed.title == note.title(data, heading, "Stem")
    assert parsed.tags == note.tags(data)
    assert parsed.aliases == note.aliases(data)
    assert parsed.type == note.note_type(data)


def test_stem() -> None:
    assert note.stem("a/b/My Note.md") == "My Note"
    assert note.stem("a/X.MARKDOWN") == "X"
    assert note.stem("plain") == "plain"
