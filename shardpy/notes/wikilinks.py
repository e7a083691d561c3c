"""The one wikilink grammar, over :mod:`shardpy.notes.blocks` (issue 25).

``[[target]]``, ``[[target|alias]]`` (``\\|`` inside a table), ``[[target#heading]]``,
``[[target#^block]]``, embeds ``![[target]]``; a link is balanced, never spans
a blank line, is not read after a backslash (``\\[[``) nor inside inline code,
and :func:`links_outside_code` skips code blocks and fences as the block
scanner sees them. Import, serve, the index and update's rename rewrite all
read links here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from shardpy.notes.blocks import inline_blocks, strip_code_spans
from shardpy.notes.frontmatter import fences


@dataclass(slots=True)
class WikiLink:
    start: int  # offset of "[[" (or "![[") in the scanned text
    end: int  # offset just past "]]"
    embed: bool
    inner: str  # raw text between the brackets

    @property
    def target(self) -> str:
        """The note part: before ``|`` (or ``\\|`` in tables) and ``#``, trimmed."""
        return split_inner(self.inner)[0]


def split_inner(inner: str) -> tuple[str, str, str, str]:
    """(target, '#heading' or '', alias separator '|' / '\\|' or '', alias)."""
    sep = ""
    alias = ""
    pipe = inner.find("|")
    if pipe != -1:
        if pipe > 0 and inner[pipe - 1] == "\\":
            sep = "\\|"
            head = inner[: pipe - 1]
        else:
            sep = "|"
            head = inner[:pipe]
        alias = inner[pipe + 1 :]
    else:
        head = inner
    hash_at = head.find("#")
    heading = ""
    if hash_at != -1:
        heading = head[hash_at:]
        head = head[:hash_at]
    return head.strip(), heading, sep, alias


def find_wikilinks(text: str) -> list[WikiLink]:
    """Balanced ``[[...]]`` outside inline code, skipping escaped ``\\[[``."""
    if "[[" not in text:
        return []
    masked = strip_code_spans(text)
    out: list[WikiLink] = []
    pos = masked.find("[[")
    n = len(masked)
    while pos != -1:
        if pos > 0 and masked[pos - 1] == "\\":
            pos = masked.find("[[", pos + 2)
            continue
        depth = 1
        i = pos + 2
        end = -1
        # Jump from one "[[", "]]" or blank line to the next (a link never spans a blank line).
        blank = masked.find("\n\n", i)
        if blank == -1:
            blank = n
        while True:
            close = masked.find("]]", i)
            if close == -1 or close > blank:
                break
            opening = masked.find("[[", i, close)
            if opening != -1:
                depth += 1
                i = opening + 2
                continue
            depth -= 1
            if depth == 0:
                end = close
                break
            i = close + 2
        if end == -1:
            break
        embed = pos > 0 and masked[pos - 1] == "!"
        start = pos - 1 if embed else pos
        out.append(WikiLink(start, end + 2, embed, text[pos + 2 : end]))
        pos = masked.find("[[", end + 2)
    return out


_MD_LINK = re.compile(r"(?<![!\\])\[([^\[\]]*)\]\(\s*(<[^>]*>|[^()\s]+)(\s+\"[^\"]*\")?\s*\)")


@dataclass(slots=True)
class MdLink:
    start: int
    end: int
    url_start: int
    url_end: int
    url: str


def find_md_links(text: str) -> list[MdLink]:
    """Markdown links ``[text](url)`` outside inline code (images excluded)."""
    if "](" not in text:
        return []
    masked = strip_code_spans(text)
    out: list[MdLink] = []
    for m in _MD_LINK.finditer(masked):
        url = text[m.start(2) : m.end(2)]
        out.append(MdLink(m.start(), m.end(), m.start(2), m.end(2), url))
    return out


def links_outside_code(text: str) -> list[WikiLink]:
    """Every wikilink of a whole note outside code, with offsets in ``text``.

    The frontmatter's YAML is read as text (a ``related: "[[X]]"`` value is a
    link); the body through the block scanner, so fenced and indented code
    hold none, and each block through :func:`find_wikilinks`, so inline code
    and ``\\[[`` hold none either.
    """
    if "[[" not in text:
        return []
    found = fences(text)
    offset = 0
    out: list[WikiLink] = []
    body = text
    if found is not None:
        head = len(found.prefix) + len(found.opener)
        out += [_moved(link, head) for link in find_wikilinks(found.yaml)]
        offset = len(text) - len(found.body)
        body = found.body
    out += [_moved(link, offset) for link in body_links(body)[0]]
    return out


def body_links(body: str, *, md: bool = False) -> tuple[list[WikiLink], list[MdLink]]:
    """The wikilinks (and with ``md``, the Markdown links) of a note's body outside code,
    with offsets in ``body``: one block scan, each inline block read by
    :func:`find_wikilinks` / :func:`find_md_links`. The index reads a note's links here
    (shardpy/index/chunk.py, issue 25)."""
    wiki: list[WikiLink] = []
    mds: list[MdLink] = []
    want_md = md and "](" in body
    if "[[" not in body and not want_md:
        return wiki, mds
    for block in inline_blocks(body):
        segment = body[block.start : block.end]
        if "[[" in segment:
            wiki += [_moved(link, block.start) for link in find_wikilinks(segment)]
        if want_md and "](" in segment:
            mds += [_moved_md(link, block.start) for link in find_md_links(segment)]
    return wiki, mds


def _moved_md(link: MdLink, by: int) -> MdLink:
    return MdLink(link.start + by, link.end + by, link.url_start + by, link.url_end + by, link.url)


def _moved(link: WikiLink, by: int) -> WikiLink:
    return WikiLink(link.start + by, link.end + by, link.embed, link.inner)


def rewrite_links(text: str, new_target: Callable[[str], str | None]) -> tuple[str, int]:
    """``text`` with each link outside code whose target ``new_target`` renames
    rewritten (heading, block ref, alias and embed kept); and how many."""
    parts: list[str] = []
    last = 0
    count = 0
    for link in links_outside_code(text):
        target, heading, sep, alias = split_inner(link.inner)
        new = new_target(target)
        if new is None:
            continue
        bang = "!" if link.embed else ""
        parts += [text[last : link.start], f"{bang}[[{new}{heading}{sep}{alias}]]"]
        last = link.end
        count += 1
    if not count:
        return text, 0
    parts.append(text[last:])
    return "".join(parts), count
