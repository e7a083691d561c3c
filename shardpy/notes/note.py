"""A note's names and kinds, derived once: stem, title, tags, aliases, type (issue 25).

The index (shardpy/index/chunk.py) asks these; its reading is the rule: a title is
the frontmatter's ``title``, else the first level-1 heading, else the stem;
tags and aliases are strings with a leading ``#`` dropped, tags also split
on commas and blanks; ``type`` is the frontmatter's, trimmed, or None.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from shardpy.notes.frontmatter import as_list, as_text

NOTE_EXTS = (".md", ".markdown")


def is_note_name(name: str) -> bool:
    """A note's file name or path: it ends in a note extension, in any case (``A.MD``)."""
    return name.lower().endswith(NOTE_EXTS)


def without_ext(rel: str) -> str:
    """``rel`` without its note extension (``a/B.md`` → ``a/B``); any other name unchanged."""
    low = rel.lower()
    for ext in NOTE_EXTS:
        if low.endswith(ext):
            return rel[: -len(ext)]
    return rel


def stem(path: str) -> str:
    """The file name without its note extension (``a/B.md`` → ``B``): the one stem rule,
    imported as ``note_stem`` by the importers and the server (issue 25)."""
    return without_ext(path.rsplit("/", 1)[-1])


def _strings(data: Mapping[str, Any], key: str) -> list[str]:
    return [s.lstrip("#") for s in as_list(data.get(key)) if s.strip()]


def first_heading(body: str) -> str:
    """The text of the body's first level-1 heading outside code, "" when there is none."""
    from shardpy.notes.blocks import structure

    return first_title(structure(body.split("\n")))


def first_title(marks: Sequence[tuple[int, str] | None]) -> str:
    """The first level-1 heading's text among a body's heading marks (blocks.structure), or ""
    (the index has the marks already: index/chunk.py)."""
    for mark in marks:
        if mark is not None and mark[0] == 1 and mark[1]:
            return mark[1]
    return ""


def title(data: Mapping[str, Any], first_heading: str, note_stem: str) -> str:
    """The frontmatter's title, else the first level-1 heading, else the stem."""
    found = as_text(data.get("title")) or first_heading or note_stem
    return found.strip() or note_stem


def tags(data: Mapping[str, Any]) -> list[str]:
    """The frontmatter's tags: one string or a list, ``#`` dropped, split on commas and blanks."""
    # Each tag loses its "#" after the split: one string '#ideas, #private' is two tags
    # (tests/notes/test_visibility_properties.py: the second kept its "#" and a private note was served).
    words = (t.lstrip("#") for s in _strings(data, "tags") for t in s.replace(",", " ").split())
    return [t for t in words if t]


def aliases(data: Mapping[str, Any]) -> list[str]:
    """The frontmatter's aliases: one string or a list, ``#`` dropped."""
    return _strings(data, "aliases")


def note_type(data: Mapping[str, Any]) -> str | None:
    """The frontmatter's ``type``, trimmed; None when absent or blank."""
    kind = as_text(data.get("type"))
    return kind.strip() if kind and kind.strip() else None
