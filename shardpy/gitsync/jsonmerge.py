"""A JSON file both machines changed, merged value by value when its lines will not merge.

Obsidian keeps its settings and each plugin's in JSON (``app.json``,
``appearance.json``, ``community-plugins.json``, a plugin's ``data.json``),
one value per line. Two machines that change neighbouring settings, or
enable a plugin each (both append to the same list), change touching lines:
the line merge conflicts, and the merging machine's file was kept whole,
the other machine's change dropped from the result (tests/sync/test_sync.py).

Here the three versions are read as JSON and merged as values: objects key
by key (a key one side added, changed or removed takes that side), lists of
plain values as three-way sets (what either side added, less what either
removed: the plugin lists), anything else changed by both sides differently
is a conflict (None: the caller keeps its rule). The result is written the
way all three versions are written — only when each of them reads back to
its own bytes through :func:`json.dumps` with one indent (Obsidian's
``JSON.stringify(value, null, 2)`` does), so no file is reformatted — and
does not depend on which side is ours: base's order first, then what the
sides added in the order of their bytes (``merge.py``: clean results are the
same merged either way). Property-tested in tests/gitsync/test_jsonmerge.py.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["merge_json"]

_INDENTS: tuple[int | str | None, ...] = (2, 4, "\t", None)
_MISSING = object()  # a key one version does not have
_PLAIN = (str, int, float, bool, type(None))


class _Conflict(Exception):
    """Both sides changed the same value differently."""


def merge_json(base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The value-by-value merge of three JSON texts, written as they are; None when they do not all
    parse, are not written alike, or both sides changed one value differently."""
    try:
        texts = [x.decode("utf-8") for x in (base, ours, theirs)]
        values = [json.loads(t) for t in texts]
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    indent = _style(texts, values)
    if indent is _MISSING:
        return None
    first, second = sorted([(ours, values[1]), (theirs, values[2])], key=lambda side: side[0])
    try:
        merged = _merge(values[0], first[1], second[1])
    except (_Conflict, RecursionError):
        return None
    ends = [t.endswith("\n") for t in texts]
    newline = ends[2] if ends[0] == ends[1] else ends[1]  # a final line break one side changed
    return _dump(merged, indent, newline).encode("utf-8")


def _dump(value: Any, indent: Any, newline: bool) -> str:
    if indent is None:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    else:
        text = json.dumps(value, ensure_ascii=False, indent=indent)
    return text + ("\n" if newline else "")


def _style(texts: list[str], values: list[Any]) -> Any:
    """The one indent that writes every version back to its own text, else _MISSING."""
    if any("\r" in t for t in texts):
        return _MISSING
    for indent in _INDENTS:
        try:
            if all(_dump(v, indent, t.endswith("\n")) == t for t, v in zip(texts, values, strict=True)):
                return indent
        except (ValueError, RecursionError):  # NaN or Infinity, too deep: never rewritten
            return _MISSING
    return _MISSING


def _merge(base: Any, first: Any, second: Any) -> Any:
    if _same(first, second) or _same(base, second):
        return first
    if _same(base, first):
        return second
    if all(isinstance(v, dict) for v in (base, first, second)):
        return _merge_objects(base, first, second)
    if all(_plain_set(v) for v in (base, first, second)):
        return _merge_sets(base, first, second)
    raise _Conflict


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON writes them: 1, 1.0 and true are three values; so are two key orders."""
    if type(a) is not type(b) or a != b:
        return False
    return not isinstance(a, dict | list) or _dump(a, None, False) == _dump(b, None, False)


def _merge_objects(base: dict[str, Any], first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in dict.fromkeys([*base, *first, *second]):
        got = _merge(base.get(key, _MISSING), first.get(key, _MISSING), second.get(key, _MISSING))
        if got is not _MISSING:
            out[key] = got
    return out


def _plain_set(value: Any) -> bool:
    """A list of distinct plain values (a set in all but name: the plugin lists)."""
    if not isinstance(value, list) or not all(isinstance(x, _PLAIN) for x in value):
        return False
    keys = [(type(x).__name__, x) for x in value]
    return len(set(keys)) == len(keys)


def _merge_sets(base: list[Any], first: list[Any], second: list[Any]) -> list[Any]:
    def key(x: Any) -> tuple[str, Any]:
        return (type(x).__name__, x)

    gone = {key(x) for x in base} - ({key(x) for x in first} & {key(x) for x in second})
    out: list[Any] = []
    seen: set[tuple[str, Any]] = set()
    for x in [*base, *first, *second]:
        if key(x) not in gone and key(x) not in seen:
            seen.add(key(x))
            out.append(x)
    return out
