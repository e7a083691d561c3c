"""The one block scanner: which parts of a note are text and which are code (issue 25).

Markdown structure as basic-memory sees it: blocks come from markdown-it
(CommonMark preset, the parser basic-memory uses) with the inline stage
turned off: only each inline token's raw text and its line range are needed,
which halves the cost. Code blocks (fenced, indented) and HTML blocks produce
no inline token, so nothing inside them is ever read as an observation, a
relation or a link to rewrite; :func:`code_spans` finds the inline code
inside a block (CommonMark's equal-length backtick runs).

A line scanner answers first for ordinary notes: markdown-it's block parser
costs about a millisecond per note, most of an import's time. Notes are
mostly headings, paragraphs, flat ``-`` lists and fenced code, so the scanner
reads those line by line and gives exactly the inline blocks markdown-it
would (content, line range, list flag). It *declines* (returns None) on
anything whose CommonMark reading it does not fully decide — block quotes,
HTML, ordered or nested lists, multi-line list items, setext headings,
thematic breaks, reference definitions, tabs in indentation, lone CR — and
the caller then asks markdown-it. Wherever the scanner answers, the answers
are equal (tests/importers/test_blockscan.py); the code spans and fences
agree with markdown-it's own inline parse (tests/notes/test_blocks.py).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

# markdown-it's mdTrim set (what JavaScript's trim removes, minus U+FEFF).
MD_TRIM = (
    "\t\n\x0b\x0c\r \xa0\u1680"
    + "".join(chr(c) for c in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000"
)

_HR = re.compile(r"([*\-_])[ \t]*(?:\1[ \t]*){2,}")
_SETEXT = re.compile(r"(?:=+|-+)[ \t]*")
_ORDERED = re.compile(r"\d{1,9}[.)](?:[ \t]|$)")
_ATX = re.compile(r"#{1,6}(?:[ \t]|$)")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)")


def fence_of(s: str) -> str | None:
    """The marker run (three or more backticks or tildes) when ``s``, a line without its
    indent of at most three spaces, opens a fenced code block; else None.

    CommonMark: a backtick fence's info string holds no backtick (```` ```a`b ```` is a
    paragraph). The one fence rule: the scanner below and the index's heading outline
    (shardpy/index/chunk.py) both ask it (issue 25)."""
    m = _FENCE.match(s)
    if m is None or (s[0] == "`" and "`" in m.group(2)):
        return None
    return m.group(1)


def _is_fence(s: str) -> bool:
    return fence_of(s) is not None


def closes_fence(line: str, fence: str) -> bool:
    """True when ``line`` closes the block ``fence`` opened: at most three spaces of indent,
    a run of the same character at least as long, then only spaces and tabs."""
    t = line.lstrip(" ")
    return len(line) - len(t) < 4 and t.startswith(fence) and not t.lstrip(fence[0]).strip(" \t")


def _bullet_item(s: str) -> str | None:
    """The content of a one-line ``-``/``*``/``+`` item the scanner accepts, else None."""
    if len(s) < 3 or s[0] not in "-*+" or s[1] != " ":
        return None
    text = s[1:].lstrip(" ")
    spaces = len(s) - len(text) - 1
    # A thematic break repeats the marker, so it can only start so (the regex is the slow part).
    if spaces > 4 or not text or text[0] == "\t" or (text[0] == s[0] and _HR.fullmatch(s)):
        return None
    return text


def _item_text_ok(text: str) -> bool:
    """True when an item's text is one plain paragraph (no nested block opens it)."""
    c = text[0]
    if c in "><\t" or c.isspace():
        return False
    if c in "-*+_" and (_HR.fullmatch(text) or (len(text) == 1 or text[1] in " \t")):
        return False
    if c == "#" and _ATX.match(text):
        return False
    if c in "`~" and text.startswith(("```", "~~~")):
        return False
    if c.isdigit() and _ORDERED.match(text):
        return False
    return not (c == "[" and "]:" in text)


def _interrupts(s: str) -> bool | None:
    """Does a non-indented line ``s`` end the paragraph above it? None: undecided."""
    c = s[0]
    if c == "#":
        return _ATX.match(s) is not None
    if c in "`~":
        if _is_fence(s):
            return True
        return None if s.startswith(("```", "~~~")) else False
    if c in "><":
        return None
    if c in "-*+" and len(s) > 2 and s[1] == " ":
        rest = s[2:].lstrip(" \t")
        if rest and rest[0] != c:
            # A bullet item with text, the usual next line: a break or a setext underline
            # would repeat the marker, so neither regex can match.
            return True
    if c in "-*+=_":
        if _HR.fullmatch(s) or _SETEXT.fullmatch(s):
            return None
        if c in "-*+" and (len(s) == 1 or s[1] in " \t"):
            # A non-empty bullet item interrupts; an empty one does not (decline it).
            return True if s[1:].strip(" \t") else None
        return False
    if c.isdigit() and _ORDERED.match(s):
        return None
    return False


def _trim(raw: str) -> str | None:
    content = raw.strip(MD_TRIM)
    # Older markdown-it-py trimmed with str.strip(); decline where the two differ.
    if content and (content[0] > "~" or content[-1] > "~") and content != raw.strip():
        return None
    return content


def scan_lines(lines: list[str]) -> list[tuple[str, int, int, bool]] | None:
    """Inline blocks of a normalised body (``\n`` line ends, no NUL) split into its lines, or None
    to decline.

    Each block is (content, first line, line past the block, in a list item). Every helper
    returns the index of the line after what it read, or -1 to decline the whole body.
    """
    n = len(lines)
    out: list[tuple[str, int, int, bool]] = []
    list_open = False
    i = 0
    while i < n:
        line = lines[i]
        if not line:
            i += 1
            continue
        s, indent = line, 0
        if line[0] == " " or line[0] == "\t":
            skip = _skip_indented(lines, i, list_open)
            if skip < 0:
                return None
            if skip:
                i = skip
                continue
            s = line.lstrip(" ")
            indent = len(line) - len(s)
        i, list_open = _block(lines, i, s, indent, out)
        if i < 0:
            return None
    return out


def _skip_indented(lines: list[str], i: int, list_open: bool) -> int:
    """Past an indented line that is blank or indented code; 0: a block to read; -1: decline."""
    line = lines[i]
    s = line.lstrip(" ")
    if not s.strip(" \t"):
        return i + 1
    if s[0] == "\t" or list_open:
        return -1
    if len(line) - len(s) < 4:
        return 0
    i += 1  # indented code: up to the next non-blank line indented less than 4
    n = len(lines)
    while i < n:
        nxt = lines[i]
        t = nxt.lstrip(" ")
        if t.strip(" \t") and len(nxt) - len(t) < 4:
            return -1 if t[0] == "\t" else i
        i += 1
    return i


Blocks = list[tuple[str, int, int, bool]]


def _block(lines: list[str], i: int, s: str, indent: int, out: Blocks) -> tuple[int, bool]:
    """Read the block starting at line ``i`` (``s``: the line without its indent): (next line, in a list)."""
    c = s[0]
    if c == "-" or c == "*" or c == "+":
        if len(s) == 1 or s[1] == " " or s[1] == "\t":
            return _bullet(lines, i, s, indent, out), True
    elif c == "#":
        if _ATX.match(s):
            return _heading(s, i, out), False
    elif (c == "`" or c == "~") and _is_fence(s):
        return _skip_fence(lines, i, s), False
    if c in "><" or (c in "-*_" and _HR.fullmatch(s)) or (c.isdigit() and _ORDERED.match(s)):
        return -1, False
    return _paragraph(lines, i, c, out), False


def _bullet(lines: list[str], i: int, s: str, indent: int, out: Blocks) -> int:
    text = _bullet_item(s) if indent == 0 else None
    if text is None or not _item_text_ok(text):
        return -1
    if i + 1 < len(lines):
        nxt = lines[i + 1]
        if nxt and (nxt[0] in " \t" or not _interrupts(nxt)) and nxt.strip(" \t"):
            return -1  # a lazy continuation line, or undecided
    content = text.strip(MD_TRIM)
    if content and (content[0] > "~" or content[-1] > "~") and content != text.strip():
        return -1
    out.append((content, i, i + 1, True))
    return i + 1


def _heading(s: str, i: int, out: Blocks) -> int:
    level = len(s) - len(s.lstrip("#"))
    rest = s[level:].rstrip(" \t")
    stripped = rest.rstrip("#")
    if stripped and stripped[-1] in " \t":
        rest = stripped
    heading = _trim(rest)
    if heading is None:
        return -1
    out.append((heading, i, i + 1, False))
    return i + 1


def _skip_fence(lines: list[str], i: int, s: str) -> int:
    """Past a fenced code block (to its closing fence, or the end)."""
    fence = fence_of(s)
    assert fence is not None
    n = len(lines)
    i += 1
    while i < n:
        nxt = lines[i]
        i += 1
        if closes_fence(nxt, fence):
            break
    return i


def _paragraph(lines: list[str], i: int, c: str, out: Blocks) -> int:
    """A paragraph: up to a blank line or a line that interrupts it."""
    n = len(lines)
    j = i + 1
    while j < n:
        nxt = lines[j]
        t = nxt.lstrip(" ")
        if not t.strip(" \t"):
            break
        if t[0] == "\t":
            return -1
        if len(nxt) - len(t) < 4:
            ends = _interrupts(t)
            if ends is None:
                return -1
            if ends:
                break
        j += 1
    raw = lines[i] if j == i + 1 else "\n".join(lines[i:j])
    if c == "[" and "]:" in raw:
        return -1  # maybe a link reference definition
    para = _trim(raw)
    if para is None:
        return -1
    out.append((para, i, j, False))
    return j


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


# ATX headings, and which lines are headings outside code fences: the one reading of a note's
# structure (the index's sections, a served note's title: shardpy/notes/note.first_heading).
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*$")
_CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+$")
_MARKUP = frozenset("#`~")


def heading_of(line: str) -> tuple[int, str] | None:
    """(level, text) when the line is an ATX heading."""
    m = _HEADING.match(line)
    if m is None:
        return None
    text = _CLOSING_HASHES.sub("", m.group(2) or "").strip()
    return len(m.group(1)), text


def structure(lines: list[str]) -> list[tuple[int, str] | None]:
    """The heading (level, text) of each line, None for text and for lines inside code fences."""
    out: list[tuple[int, str] | None] = []
    fence = ""
    for line in lines:
        text = line.lstrip(" ")
        first = text[:1]
        if first not in _MARKUP:
            out.append(None)
            continue
        if fence:
            if closes_fence(line, fence):
                fence = ""
            out.append(None)
            continue
        opened = fence_of(text) if first != "#" and len(line) - len(text) < 4 else None
        if opened is not None:
            fence = opened
            out.append(None)
            continue
        out.append(heading_of(line) if first == "#" else None)
    return out
