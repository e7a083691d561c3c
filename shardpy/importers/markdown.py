"""Markdown structure as basic-memory sees it, and wikilinks as Obsidian sees them.

Blocks come from markdown-it (CommonMark preset, the parser basic-memory
uses) with the inline stage turned off: only each inline token's raw text
and its line range are needed, which halves the cost. Code blocks (fenced,
indented) and HTML blocks produce no inline token, so nothing inside them is
ever read as an observation, a relation or a link to rewrite.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

# Loaded with this module, so that forked reading workers inherit it instead of each loading it.
from shardpy.importers.blockscan import scan_lines

_md: Any = None


def _parser() -> Any:
    global _md
    if _md is None:
        from markdown_it import MarkdownIt

        md = MarkdownIt("commonmark")
        md.core.ruler.disable(["inline"])
        _md = md
    return _md


@dataclass(slots=True)
class InlineBlock:
    content: str  # markdown-it's inline text: container markers and indentation removed
    start: int  # character offset of the block's first line in the body
    end: int  # character offset just past its last line
    in_list_item: bool
    in_blockquote: bool


def line_starts(text: str) -> list[int]:
    starts = [0]
    pos = text.find("\n")
    while pos != -1:
        starts.append(pos + 1)
        pos = text.find("\n", pos + 1)
    return starts


def inline_blocks(body: str) -> list[InlineBlock]:
    """Every inline token of ``body`` with its raw character range.

    The line scanner (``blockscan``) answers for ordinary notes; markdown-it
    for everything it declines. Both give the same blocks (property-tested).
    """
    blocks = scanned_blocks(body)
    return blocks if blocks is not None else markdown_it_blocks(body)


def scanned_blocks(body: str) -> list[InlineBlock] | None:
    """``inline_blocks`` by the line scanner, or None where it declines."""
    src = body
    if "\r" in src:
        src = src.replace("\r\n", "\n")
        if "\r" in src:
            return None  # a lone CR is a line end to markdown-it but not to line_starts()
    if "\x00" in src:
        src = src.replace("\x00", "\ufffd")
    lines = src.split("\n")
    found = scan_lines(lines)
    if found is None:
        return None
    if not found:
        return []
    end = len(body)
    if len(src) == end:
        # One character per line end: line k starts after k newlines and the lines before it.
        size = len(lines)
        starts = list(itertools.accumulate(map(len, lines), initial=0))
        return [
            InlineBlock(
                content,
                starts[first] + first if first < size else end,
                starts[last] + last if last < size else end,
                in_list,
                False,
            )
            for content, first, last, in_list in found
        ]
    offsets = line_starts(body)
    size = len(offsets)
    return [
        InlineBlock(
            content,
            offsets[first] if first < size else end,
            offsets[last] if last < size else end,
            in_list,
            False,
        )
        for content, first, last, in_list in found
    ]


def markdown_it_blocks(body: str) -> list[InlineBlock]:
    """``inline_blocks`` by markdown-it (the reference; slow)."""
    if "\x00" in body:
        body = body.replace("\x00", "\ufffd")
    tokens = _parser().parse(body)
    starts: list[int] | None = None
    out: list[InlineBlock] = []
    list_depth = 0
    quote_depth = 0
    for tok in tokens:
        kind = tok.type
        if kind == "list_item_open":
            list_depth += 1
        elif kind == "list_item_close":
            list_depth -= 1
        elif kind == "blockquote_open":
            quote_depth += 1
        elif kind == "blockquote_close":
            quote_depth -= 1
        elif kind == "inline" and tok.map is not None:
            if starts is None:
                starts = line_starts(body)
            first, last = tok.map
            begin = starts[first] if first < len(starts) else len(body)
            stop = starts[last] if last < len(starts) else len(body)
            out.append(InlineBlock(tok.content, begin, stop, list_depth > 0, quote_depth > 0))
    return out


_BACKTICKS = re.compile(r"`+")


def code_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges of inline code spans (CommonMark: equal-length backtick runs)."""
    if "`" not in text:
        return []
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(text)]
    spans: list[tuple[int, int]] = []
    i = 0
    while i < len(runs):
        start, end = runs[i]
        if start > 0 and text[start - 1] == "\\":
            # An escaped backtick opens nothing; the rest of the run may.
            start += 1
            if start == end:
                i += 1
                continue
        width = end - start
        for j in range(i + 1, len(runs)):
            s2, e2 = runs[j]
            if e2 - s2 == width:
                spans.append((start, e2))
                i = j + 1
                break
        else:
            i += 1
    return spans


def strip_code_spans(text: str) -> str:
    """``text`` with inline code spans blanked out (offsets are kept)."""
    spans = code_spans(text)
    if not spans:
        return text
    parts: list[str] = []
    last = 0
    for s, e in spans:
        parts.append(text[last:s])
        parts.append(" " * (e - s))
        last = e
    parts.append(text[last:])
    return "".join(parts)


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
