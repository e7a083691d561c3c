"""Control characters: the one definition behind every rule that shows, drops or refuses them.

A control character is one of Unicode's category Cc: C0 (U+0000-U+001F), DEL (U+007F) and C1
(U+0080-U+009F). Each is a danger where text reaches a terminal or a path: an escape sequence
(ESC, or C1's CSI U+009B on some terminals) recolours or retitles the terminal, a line break
splits one name over two lines, a NUL cuts a path short. What a caller does with one differs
(``cli.output.shown`` escapes it, ``search`` drops it from a snippet, a sync round drops it
from a remote's words, a manifest path or search pattern holding one is refused); which
characters count does not (tests/hardening/test_controls.py holds it to ``unicodedata``).
"""

from __future__ import annotations

import re

# A regex character class's body, for the callers that refuse more than controls in one class
# (importers.names: the characters a file name cannot hold).
CLASS = "\x00-\x1f\x7f-\x9f"
_ANY = re.compile(f"[{CLASS}]")
_BUT_LINES = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # every control but the line feed
_BUT_TABS_AND_LINES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def has_control(text: str) -> bool:
    """``text`` holds a control character."""
    return _ANY.search(text) is not None


def escaped(text: str, *, lines: bool = False) -> str:
    """``text`` with each control character as its ``\\xNN`` escape (idempotent: an escape is
    printable). ``lines``: a line feed stays one (a message of several lines)."""
    return (_BUT_LINES if lines else _ANY).sub(_escape, text)


def dropped(text: str, *, layout: bool = False) -> str:
    """``text`` without its control characters. ``layout``: tabs and line feeds stay (a snippet
    of a note, printed as its lines)."""
    return (_BUT_TABS_AND_LINES if layout else _ANY).sub("", text)


def _escape(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
