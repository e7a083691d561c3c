"""A frontmatter block's top-level keys, edited line by line: every other byte stays as written.

The key-by-key editors (revision stamps, ``rm`` / ``restore``, ``superseded_by`` and the graph's
keys through :func:`shardpy.notes.frontmatter.render_block`) replace only the lines of the key
they change. A YAML round trip rewrote the lines around it: spacing after colons, flow lists,
indents, a comment's CR doubled in a CRLF note (tests/serve/test_supersede_bytes.py). A block
whose keys cannot be placed line by line (a key twice, a line that is no ``key:``) is None here,
and the caller decides.

Works on LF text (notes/written.py reads and writes a note's own line ends).
"""

from __future__ import annotations

import re

__all__ = ["KEY_LINE", "key_lines", "set_key", "spans", "with_lines"]

KEY_LINE = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]|$)")


def set_key(inner: str, key: str, value: str | None) -> str | None:
    """``inner`` with top-level ``key: value`` (``value`` as YAML text; None removes the key).

    None when the block's keys cannot be placed line by line.
    """
    return with_lines(inner, key, [] if value is None else [f"{key}: {value}\n"])


def spans(inner: str) -> dict[str, tuple[int, int]] | None:
    """Each top-level key's lines [start, end) in ``inner`` (None: a key we cannot place)."""
    lines = inner.splitlines(keepends=True)
    out: dict[str, tuple[int, int]] = {}
    current: str | None = None
    for i, line in enumerate(lines):
        if line[:1] in (" ", "\t", "-") or not line.strip():
            continue
        if current is not None:
            out[current] = (out[current][0], i)
            current = None
        if line.startswith("#"):
            continue
        m = KEY_LINE.match(line)
        if m is None or m.group(1) in out:
            return None
        current = m.group(1)
        out[current] = (i, len(lines))
    return out


def with_lines(inner: str, key: str, new: list[str]) -> str | None:
    """``inner`` with ``key``'s lines replaced by ``new`` (removed when empty, appended when absent)."""
    found = spans(inner)
    if found is None:
        return None
    lines = inner.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    if key in found:
        start, end = found[key]
        return "".join(lines[:start] + new + lines[end:])
    return "".join(lines + new)


def key_lines(inner: str, key: str) -> list[str]:
    """``key``'s lines in ``inner`` as written (each ending in a line break); [] when absent."""
    found = spans(inner) or {}
    if key not in found:
        return []
    lines = inner.splitlines(keepends=True)
    start, end = found[key]
    out = lines[start:end]
    if out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    return out
