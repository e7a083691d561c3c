"""A note as the index sees it: title, tags, links and one chunk per section.

Chunking rule: the preamble (everything before the first section, the ``#``
title included) is one chunk; each ``##`` section is one chunk (a later ``#``
heading also starts one). A section longer than ``MAX_CHUNK_CHARS`` is split
on its ``###`` headings, and a piece still too long on paragraph breaks
(blank lines), so a hit points at a passage an agent can read whole.
Headings inside fenced code blocks are text, not structure.

The Markdown grammar is not this module's (issue 25): fences are
:func:`shardpy.notes.blocks.fence_of` / ``closes_fence``, links are
:func:`shardpy.notes.wikilinks.body_links` (one scan of the body: none inside
code spans, fences or indented code, none after an escaped ``[[``), title, tags,
aliases and type are :mod:`shardpy.notes.note`'s.

Every body line belongs to exactly one chunk's line range (a property test
checks it); a chunk's ``text`` is its lines without its own heading line,
which is indexed in the heading column instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from shardpy.notes import frontmatter
from shardpy.notes import note as names
from shardpy.notes.blocks import heading_of, structure
from shardpy.notes.wikilinks import body_links

MAX_CHUNK_CHARS = 8000

_TAG = re.compile(r"(?:^|(?<=\s))#(\w[\w/-]*)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Chunk:
    heading: tuple[str, ...]
    start: int  # first body line (0-based) of the chunk, its heading line when it has one
    end: int  # one past its last body line
    text: str  # the chunk's lines without its heading line
    links: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


@dataclass(slots=True)
class Note:
    title: str
    type: str | None
    tags: list[str]
    aliases: list[str]
    description: str
    chunks: list[Chunk]
    first_line: int  # 1-based file line of body line 0 (after the frontmatter)
    problem: str = ""  # why the note was indexed as plain text ("" when it parsed)
    extra: dict[str, Any] = field(default_factory=dict)


def _sections(marks: list[tuple[int, str] | None]) -> list[tuple[tuple[str, ...], int, int]]:
    """(heading path, start, end) of the preamble and each top-level section."""
    bounds: list[tuple[tuple[str, ...], int]] = [((), 0)]
    title_seen = False
    for i, mark in enumerate(marks):
        if mark is None or mark[0] > 2:
            continue
        if mark[0] == 1 and not title_seen and len(bounds) == 1:
            title_seen = True  # the note's title stays in the preamble
            continue
        bounds.append(((mark[1],), i))
    out = []
    for k, (heading, start) in enumerate(bounds):
        end = bounds[k + 1][1] if k + 1 < len(bounds) else len(marks)
        out.append((heading, start, end))
    return out


def _size(lines: list[str], start: int, end: int) -> int:
    return sum(len(line) + 1 for line in lines[start:end])


def _split_h3(
    marks: list[tuple[int, str] | None], heading: tuple[str, ...], start: int, end: int
) -> list[tuple[tuple[str, ...], int, int]]:
    cuts = [i for i in range(start + 1, end) if (m := marks[i]) is not None and m[0] == 3]
    if not cuts:
        return [(heading, start, end)]
    out = [(heading, start, cuts[0])]
    for k, cut in enumerate(cuts):
        mark = marks[cut]
        assert mark is not None
        stop = cuts[k + 1] if k + 1 < len(cuts) else end
        out.append(((*heading[:1], mark[1]), cut, stop))
    return out


def _split_paragraphs(lines: list[str], start: int, end: int, limit: int) -> list[tuple[int, int]]:
    """Line ranges of at most ``limit`` characters, cut after blank lines where possible."""
    out: list[tuple[int, int]] = []
    piece_start, size, last_break = start, 0, -1
    for i in range(start, end):
        size += len(lines[i]) + 1
        if not lines[i].strip():
            last_break = i + 1
        if size > limit and i > piece_start:
            cut = last_break if last_break > piece_start else i
            out.append((piece_start, cut))
            piece_start, last_break = cut, -1
            size = _size(lines, cut, i + 1)
    if piece_start < end or not out:
        out.append((piece_start, end))
    return out


def split_lines(
    lines: list[str], limit: int = MAX_CHUNK_CHARS, marks: list[tuple[int, str] | None] | None = None
) -> list[tuple[tuple[str, ...], int, int]]:
    """The chunk line ranges of a note body (pure; property-tested)."""
    if marks is None:
        marks = structure(lines)
    pieces: list[tuple[tuple[str, ...], int, int]] = []
    for heading, start, end in _sections(marks):
        if _size(lines, start, end) <= limit:
            pieces.append((heading, start, end))
            continue
        for sub_heading, s, e in _split_h3(marks, heading, start, end):
            if _size(lines, s, e) <= limit:
                pieces.append((sub_heading, s, e))
            else:
                pieces.extend((sub_heading, a, b) for a, b in _split_paragraphs(lines, s, e, limit))
    return pieces


def _link_lines(body: str) -> list[tuple[int, str]]:
    """(body line, target) of every link outside code: wikilinks by their note part,
    Markdown links to a note file by its stem, in the order written."""
    wiki, mds = body_links(body, md=True)
    found = [(w.start, w.target) for w in wiki]
    for md in mds:
        path = md.url.strip("<>").split("#", 1)[0]
        if names.is_note_name(path):
            found.append((md.start, names.stem(path)))
    if not found:
        return []
    found.sort()
    out: list[tuple[int, str]] = []
    line = last = 0
    for at, target in found:
        line += body.count("\n", last, at)  # offsets ascend: count each newline once
        last = at
        if target:
            out.append((line, target))
    return out


def _links(found: list[tuple[int, str]], first: int, end: int) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t for line, t in found if first <= line < end))


def _inline_tags(text: str) -> tuple[str, ...]:
    if "#" not in text:
        return ()
    return tuple(dict.fromkeys(t for t in _TAG.findall(text) if not t.isdigit()))


def _chunk(
    lines: list[str],
    marks: list[tuple[int, str] | None],
    piece: tuple[tuple[str, ...], int, int],
    links: list[tuple[int, str]],
) -> Chunk:
    heading, start, end = piece
    first = start + 1 if heading and marks[start] is not None and start < end else start
    text = "\n".join(lines[first:end]).strip("\n")
    return Chunk(heading, start, end, text, _links(links, first, end), _inline_tags(text))


def chunks_of(
    body: str,
    limit: int = MAX_CHUNK_CHARS,
    lines: list[str] | None = None,
    marks: list[tuple[int, str] | None] | None = None,
) -> list[Chunk]:
    if lines is None or marks is None:
        lines = body.split("\n")
        marks = structure(lines)
    links = _link_lines(body)
    chunks = [_chunk(lines, marks, p, links) for p in split_lines(lines, limit, marks)]
    kept = [c for c in chunks if c.heading or _has_text(c.text)]
    return kept or chunks[:1]


def _has_text(preamble: str) -> bool:
    """A preamble holding more than the note's title line (a title-only one is dropped:
    the title is indexed with every chunk)."""
    lines = [line for line in preamble.split("\n") if line.strip()]
    if lines and (mark := heading_of(lines[0])) is not None and mark[0] == 1:
        lines = lines[1:]
    return bool(lines)


def parse_note(stem: str, text: str) -> Note:
    """Parse a note's text (BOM already stripped). Never raises: bad frontmatter means plain text."""
    split = frontmatter.split_frontmatter(text)
    if split.state != "present":
        problem = f"frontmatter not read: {split.error}" if split.state == "malformed" else ""
        return _note(stem, text, split.body, {}, problem)
    try:
        return _note(stem, text, split.body, split.data, "")
    except Exception as exc:
        # One note's odd frontmatter values must never stop the whole refresh (issue 24 item 15:
        # nested 400 deep, a walk over them raised RecursionError): it is indexed as plain text.
        reason = str(exc).strip().splitlines()
        return _note(
            stem, text, text, {}, f"frontmatter not read: {reason[0] if reason else type(exc).__name__}"
        )


def _note(stem: str, text: str, body: str, data: dict[str, Any], problem: str) -> Note:
    first_line = text[: len(text) - len(body)].count("\n") + 1
    lines = body.split("\n")
    marks = structure(lines)
    return Note(
        title=names.title(data, names.first_title(marks), stem),
        type=names.note_type(data),
        tags=names.tags(data),
        aliases=names.aliases(data),
        description=frontmatter.as_text(data.get("description")) or "",
        chunks=chunks_of(body, lines=lines, marks=marks),
        first_line=first_line,
        problem=problem,
    )
