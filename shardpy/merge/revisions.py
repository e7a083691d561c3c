"""Per-key revision stamps: a scalar key changed on two machines converges without a human.

A note's frontmatter may carry one line (docs/GIT.md, "Revision stamps")::

    _rev: status=7.1f3a9c02 title=3.8d41e6b7

For each top-level scalar key a Lamport counter and the id of the machine
that last changed it. ``shardpy sync`` stamps a key when it commits a change
to it (:func:`stamp_note`): the counter is one more than any counter the note
already carries, so an edit made after seeing another machine's edit always
ranks above it, whatever the machines' clocks say.

The merge driver (:func:`resolve_sides`) settles a scalar key both sides
changed to different values by the higher stamp, ties by machine id: the
losing side is given the winner's lines for that key, and both sides the
key-wise maximum of the two stamp lines, before the usual key-by-key merge
runs. The choice depends only on the stamps, never on which side is ours,
so every machine ends with the same value. A key whose stamps are equal
(neither side stamped it) stays a conflict, as do lists (three-way sets
already), mappings and notes whose frontmatter does not parse.

Pure: text in, text out (``tests/sync/test_revisions.py``, ``tests/sync/test_convergence.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from shardpy.notes.keylines import key_lines as _key_lines
from shardpy.notes.keylines import with_lines as _with_lines
from shardpy.notes.written import Written

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "REV_KEY",
    "Stamp",
    "load_mapping",
    "parse_stamps",
    "render_stamps",
    "resolve_sides",
    "stamp_note",
]

REV_KEY = "_rev"
Stamp = tuple[int, str]  # (Lamport counter, machine id)

_STAMP = re.compile(r"([A-Za-z0-9_][A-Za-z0-9_.-]*)=([0-9]{1,12})\.([0-9a-z]{1,32})")
_OPEN = "---\n"
_MISSING = object()


def parse_stamps(value: Any) -> dict[str, Stamp]:
    """The stamps of a ``_rev`` value (anything unreadable is no stamp)."""
    if not isinstance(value, str):
        return {}
    out: dict[str, Stamp] = {}
    for word in value.split():
        m = _STAMP.fullmatch(word)
        if m:
            out[m.group(1)] = (int(m.group(2)), m.group(3))
    return out


def render_stamps(stamps: Mapping[str, Stamp]) -> str:
    return " ".join(f"{k}={c}.{m}" for k, (c, m) in sorted(stamps.items()))


def _load(inner: str) -> dict[str, Any] | None:
    """The frontmatter's data, or None when it is not a readable mapping."""
    from shardpy.yamlsafe import load

    if not inner.strip():
        return {}
    try:
        data = load(inner)
    except Exception:  # any YAML failure: this note is left to the ordinary rules
        return None
    if data is None:
        return {}
    return data if isinstance(data, dict) else None


def load_mapping(inner: str) -> dict[str, Any] | None:
    """A frontmatter's data as a mapping (None: not YAML, or not a mapping)."""
    return _load(inner)


def _scalar(value: Any) -> bool:
    return not isinstance(value, (list, dict))


def _same(a: Any, b: Any) -> bool:
    # 1, 1.0 and True are equal in Python, never in a note.
    return type(a) is type(b) and a == b


def _split(text: str) -> tuple[str, str, str] | None:
    """(opening, inner, rest) of a note with frontmatter (LF only), else None."""
    from shardpy.merge.frontmatter import split_frontmatter

    if "\r" in text:
        return None
    fm, rest = split_frontmatter(text)
    if fm is None or not fm.block.startswith(_OPEN + fm.inner):
        return None  # a BOM or blanks after the opener: left as they are, unstamped
    closing = fm.block[len(_OPEN) + len(fm.inner) :]
    return fm.inner, closing, rest


def _winner_side(key: str, ours: dict[str, Stamp], theirs: dict[str, Stamp]) -> int:
    """1 when ours wins ``key``, 2 when theirs does, 0 when the stamps cannot tell."""
    a, b = ours.get(key, (0, "")), theirs.get(key, (0, ""))
    if a == b:
        return 0
    return 1 if a > b else 2


def _contested(base: dict[str, Any], ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """Scalar keys both sides changed differently (a removal counts as a change)."""
    out = []
    for key in sorted(set(ours) | set(theirs)):
        if key == REV_KEY:
            continue
        b, o, t = (side.get(key, _MISSING) for side in (base, ours, theirs))
        if not all(_scalar(v) for v in (b, o, t)):
            continue
        if not _same(o, b) and not _same(t, b) and not _same(o, t):
            out.append(key)
    return out


def resolve_sides(base: str, ours: str, theirs: str) -> tuple[str, str] | None:
    """``(ours, theirs)`` with stamped scalar conflicts settled and the stamps joined, or None.

    None means nothing to do: no stamps on either side, a side without readable
    frontmatter or with mixed line ends, or nothing to settle. Each side keeps its BOM and
    line ends.
    """
    if f"{REV_KEY}:" not in ours and f"{REV_KEY}:" not in theirs:
        return None
    read = [Written.read(t) for t in (base, ours, theirs)]
    if read[0] is None or read[1] is None or read[2] is None:
        return None
    settled = _resolve_lf(read[0][0], read[1][0], read[2][0])
    if settled is None:
        return None
    out = read[1][1].write(settled[0]), read[2][1].write(settled[1])
    return None if out == (ours, theirs) else out


def _resolve_lf(base: str, ours: str, theirs: str) -> tuple[str, str] | None:
    parts = [_split(t) for t in (ours, theirs)]
    base_part = _split(base)
    if parts[0] is None or parts[1] is None:
        return None
    datas = [_load(p[0]) for p in (base_part or ("", "", ""), parts[0], parts[1])]
    if datas[0] is None or datas[1] is None or datas[2] is None:
        return None
    so, st = parse_stamps(datas[1].get(REV_KEY)), parse_stamps(datas[2].get(REV_KEY))
    inners = [parts[0][0], parts[1][0]]
    for key in _contested(datas[0], datas[1], datas[2]):
        won = _winner_side(key, so, st)
        if won == 0:
            continue
        loser = 2 - won  # index of the losing side in inners
        changed = _with_lines(inners[loser], key, _key_lines(inners[won - 1], key))
        if changed is None:
            return None
        inners[loser] = changed
    joined = {k: max(v for v in (so.get(k), st.get(k)) if v is not None) for k in set(so) | set(st)}
    rev_line = [f"{REV_KEY}: {render_stamps(joined)}\n"] if joined else []
    out = []
    sides = (parts[0], parts[1])
    for inner, (_, closing, rest) in zip(inners, sides, strict=True):
        with_rev = _with_lines(inner, REV_KEY, rev_line)
        if with_rev is None:
            return None
        out.append(_OPEN + with_rev + closing + rest)
    if out == [ours, theirs]:
        return None
    return out[0], out[1]


def stamp_note(old: str | None, new: str, machine: str) -> str | None:
    """``new`` with every scalar key changed since ``old`` stamped by ``machine``, or None.

    None when nothing needs a stamp: a new note (``old`` None), no scalar key
    changed, frontmatter that does not parse, mixed line ends. A BOM and CRLF line
    ends are kept as ``new`` has them.
    """
    if old is None:
        return None
    now, prior = Written.read(new), Written.read(old)
    if now is None or prior is None:
        return None
    stamped = _stamp_lf(prior[0], now[0], machine)
    return None if stamped is None else now[1].write(stamped)


def _stamp_lf(old: str, new: str, machine: str) -> str | None:
    new_parts, old_parts = _split(new), _split(old)
    if new_parts is None:
        return None
    before = _load(old_parts[0]) if old_parts is not None else {}
    after = _load(new_parts[0])
    if before is None or after is None:
        return None
    changed = [k for k in sorted(set(before) | set(after)) if k != REV_KEY and _changed(before, after, k)]
    if not changed:
        return None
    stamps, prior = parse_stamps(after.get(REV_KEY)), parse_stamps(before.get(REV_KEY))
    top = max((c for c, _ in prior.values()), default=0)
    counter = max([top, *(c for c, _ in stamps.values())]) + 1
    # A key this machine already stamped above everything the old note knew (a sync that
    # stopped before its commit) keeps its stamp: stamping again must change nothing.
    changed = [k for k in changed if not (stamps.get(k, (0, ""))[1] == machine and stamps[k][0] > top)]
    if not changed:
        return None
    for key in changed:
        stamps[key] = (counter, machine)
    inner = _with_lines(new_parts[0], REV_KEY, [f"{REV_KEY}: {render_stamps(stamps)}\n"])
    if inner is None:
        return None
    return _OPEN + inner + new_parts[1] + new_parts[2]


def _changed(before: dict[str, Any], after: dict[str, Any], key: str) -> bool:
    b, a = before.get(key, _MISSING), after.get(key, _MISSING)
    if not (_scalar(b) and _scalar(a)):
        return False
    return not _same(a, b)
