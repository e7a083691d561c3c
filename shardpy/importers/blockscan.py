"""A line scanner for the block structure of ordinary basic-memory notes.

markdown-it's block parser costs about a millisecond per note, most of the
import's time. Notes are mostly headings, paragraphs, flat ``-`` lists and
fenced code, so this scanner reads those line by line and gives exactly the
inline blocks markdown-it would (content, line range, list flag). It
*declines* (returns None) on anything whose CommonMark reading it does not
fully decide — block quotes, HTML, ordered or nested lists, multi-line list
items, setext headings, thematic breaks, reference definitions, tabs in
indentation, lone CR — and the caller then asks markdown-it. The
equivalence with markdown-it is checked by property tests
(tests/importers/test_blockscan.py): wherever the scanner answers, the
answers are equal.
"""

from __future__ import annotations

import re

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


def _is_fence(s: str) -> bool:
    m = _FENCE.match(s)
    return m is not None and not (s[0] == "`" and "`" in m.group(2))


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
    marker = _FENCE.match(s)
    assert marker is not None
    fence = marker.group(1)
    n = len(lines)
    i += 1
    while i < n:
        nxt = lines[i]
        t = nxt.lstrip(" ")
        i += 1
        if len(nxt) - len(t) < 4 and t.startswith(fence) and not t.lstrip(fence[0]).strip(" \t"):
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
