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
removed: the plugin lists; a side that only reordered one gives the order), anything
else changed by both sides differently (numbers in a list, which may be positions)
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
    """JSON as the files are written; NaN and Infinity are not JSON (ValueError: never merged)."""
    if indent is None:
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    else:
        text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
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
    """Equal as JSON writes them: 1, 1.0 and true are three values; so are -0.0 and 0.0, and two
    key orders."""
    if a is _MISSING or b is _MISSING:
        return a is b
    return type(a) is type(b) and _dump(a, None, False) == _dump(b, None, False)


def _merge_objects(base: dict[str, Any], first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in dict.fromkeys([*base, *first, *second]):
        got = _merge(base.get(key, _MISSING), first.get(key, _MISSING), second.get(key, _MISSING))
        if got is not _MISSING:
            out[key] = got
    return out


def _plain_set(value: Any) -> bool:
    """A list of distinct strings (a set in all but name: the plugin and snippet lists). Numbers
    are left out: ``[0, 1]`` may be a position, where a set merge would blend two edits."""
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        return False
    return len(set(value)) == len(value)


def _merge_sets(base: list[str], first: list[str], second: list[str]) -> list[str]:
    """What either side added, less what either removed, in base's order (or the order of the side
    that only reordered it; both reordering it differently is a conflict), then the additions."""
    reordered = [s for s in (first, second) if set(s) == set(base) and s != base]
    if len(reordered) == 2 and reordered[0] != reordered[1]:
        raise _Conflict
    order = reordered[0] if reordered else base
    gone = set(base) - (set(first) & set(second))
    out = [x for x in dict.fromkeys([*order, *first, *second]) if x not in gone]
    return out
