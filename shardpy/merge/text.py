"""Line-based three-way merge, byte-identical to ``git merge-file`` where git merges cleanly.

``merge3(base, user, shard)`` follows git's ``xdl_merge`` step by step, on
top of the git-exact diff in :mod:`shardpy.merge.xdiff`:

1. diff base→user ("yours", side 1) and base→shard (side 2);
2. if one side has no change at all, the result is the other side verbatim;
3. walk both edit scripts: a hunk that does not touch (or border) a hunk
   of the other side is taken as is; overlapping or adjacent hunks form one
   region, which is a conflict unless both sides made the identical change;
4. style ``"merge"`` (git's default level, ``XDL_MERGE_ZEALOUS_ALNUM``):
   each conflict's two sides are diffed against each other and only the
   differing parts stay conflicts (lines common to both are output once);
   conflicts then separated by at most three lines, or only by lines
   without an ASCII letter or digit, are joined into one again;
   style ``"diff3"``: no refinement (git caps the level at EAGER) and the
   base lines are shown between ``||||||| base`` and ``=======``;
5. conflict hunks are written as git does: ``<<<<<<< yours``, the user's
   lines, (``||||||| base`` and the base lines,) ``=======``, the shard's
   lines, ``>>>>>>> <shard_label>``, each marker seven characters wide; a
   side whose last line has no newline gets one inside the hunk (CRLF when
   git's end-of-line guess says so); outside conflicts bytes are copied as
   they are, so a missing final newline stays missing.

Beyond git — the *both-added* rule. A conflicting region whose base range is
empty (both sides only inserted lines at the same point; nothing there was
deleted or changed) is not a conflict. Its two insertions are diffed
against each other with the same diff as everything else, in both styles
(there is no base to show, so diff3 loses nothing): lines common to both
insertions are written once, in place, and each stretch where they differ
is written as the shard's lines followed by the user's lines. A shard
stretch whose last line lacks a newline gets one when user lines follow.
This runs after git's refinement and before git joins nearby conflicts, so
a both-added stretch never swallows a neighbouring line into a duplicate.
Each such stretch is reported as a :class:`BothAdded` region. Every other
region git calls a conflict stays a conflict, exactly as git writes it.
:func:`merge3_git` is the same engine with this rule off, i.e. plain
``git merge-file`` (used to check the engine against git on any input).

Statistics count output lines, markers excluded: ``unchanged`` lines equal
to the base, ``auto_merged`` lines of a non-conflicting change from either
side (including a change both sides made identically), ``conflicted`` the
user's plus the shard's lines inside conflict hunks (base lines shown by
diff3 are not counted), ``both_added`` the lines of both-added regions.
"""

from __future__ import annotations

import re

from shardpy.merge.xdiff import Change, diff, diff_with_flags, split_lines
from shardpy.record import Record, field

__all__ = ["BothAdded", "ConflictRegion", "MergeStats", "TextMerge", "merge3", "merge3_git"]

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Literal

    Style = Literal["merge", "diff3"]  # for type checkers: a style is checked where it is used

_MARKER = 7
_USER_LABEL = "yours"
_BASE_LABEL = "base"

# Region modes, as in xdiff (0/1/2/4) plus our both-added mode.
_CONFLICT = 0
_TAKE_USER = 1
_TAKE_SHARD = 2
_IDENTICAL = 4
_BOTH_ADDED = 5


class MergeStats(Record, frozen=True):
    """How the lines of a three-way merge ended."""

    unchanged: int = 0
    auto_merged: int = 0
    conflicted: int = 0
    both_added: int = 0


class ConflictRegion(Record, frozen=True):
    """A conflict hunk in the merged text.

    ``output_line``/``output_end`` are the 1-based lines of the ``<<<<<<<``
    and ``>>>>>>>`` markers. Line tuples hold lines without their ``\\n``.
    ``base`` is the base range of the region before git's refinement split
    it (refined pieces of one region share it).
    """

    output_line: int
    output_end: int
    base: tuple[str, ...]
    user: tuple[str, ...]
    shard: tuple[str, ...]


class BothAdded(Record, frozen=True):
    """Lines both sides inserted at the same base point, kept as shard's then user's.

    ``output_line`` is the 1-based first line of the region, ``output_count``
    its number of lines (``len(shard) + len(user)``).
    """

    output_line: int
    output_count: int
    user: tuple[str, ...]
    shard: tuple[str, ...]


class TextMerge(Record, frozen=True):
    """A three-way line merge's text and what was in conflict."""

    text: str
    clean: bool
    conflicts: list[ConflictRegion] = field(default_factory=list)
    both_added: list[BothAdded] = field(default_factory=list)
    stats: MergeStats = field(default_factory=MergeStats)


class _Region(Record):
    """One region of the three-way merge script."""

    mode: int
    i0: int
    chg0: int
    i1: int
    chg1: int
    i2: int
    chg2: int
    # Base range of the region as first formed (before refinement).
    base0: int = 0
    base_chg: int = 0
    both: bool = False


class _Output(Record):
    """The merged lines as they are written, with their counts."""

    lines: list[str] = field(default_factory=list)
    unchanged: int = 0
    auto_merged: int = 0
    conflicted: int = 0
    both_added: int = 0
    conflicts: list[ConflictRegion] = field(default_factory=list)
    both_regions: list[BothAdded] = field(default_factory=list)


def merge3(
    base: str,
    user: str,
    shard: str,
    *,
    shard_label: str = "shard",
    style: Style = "merge",
    user_label: str = _USER_LABEL,
) -> TextMerge:
    """Three-way merge LF-normalised texts; see the module docstring for the rules."""
    return merge3_git(
        base, user, shard, shard_label=shard_label, style=style, both_added=True, user_label=user_label
    )


def merge3_git(
    base: str,
    user: str,
    shard: str,
    *,
    shard_label: str = "shard",
    style: Style = "merge",
    both_added: bool = False,
    user_label: str = _USER_LABEL,
) -> TextMerge:
    """``merge3`` with the both-added rule optional: without it, exactly ``git merge-file``.

    Exists so tests (and anyone wanting plain git semantics) can check the
    engine against git on every input, conflicts included.
    """
    if style not in ("merge", "diff3"):
        raise ValueError(f"unknown merge style {style!r}")
    label = " ".join(shard_label.split()) or "shard"
    ulabel = " ".join(user_label.split()) or _USER_LABEL
    b_lines = split_lines(base)
    # A side equal to the base (a note whose body only one side changed) shares its lines.
    u_lines = b_lines if user == base else split_lines(user)
    s_lines = b_lines if shard == base else split_lines(shard)
    # The diffs compare the lines themselves, not ids given them: most of a note is the same on
    # all sides and is only compared, never hashed (a middle that needs Myers gets ids).
    x1, u_changed = diff_with_flags(b_lines, u_lines)
    x2, s_changed = diff_with_flags(b_lines, s_lines)

    out = _Output()
    if not x1:
        # git returns the shard's bytes verbatim when the user changed nothing.
        _copy(out, s_lines, 0, len(s_lines), s_changed)
    elif not x2:
        _copy(out, u_lines, 0, len(u_lines), u_changed)
    else:
        regions = _combine(x1, x2, len(b_lines), len(u_lines), len(s_lines), u_lines, s_lines)
        if not both_added:
            for m in regions:
                m.both = False
        if style == "merge":
            regions = _refine(regions, u_lines, s_lines, only_both=False)
            regions = _mark_both(regions)
            regions = _simplify(regions, u_lines)
        else:
            regions = _refine(regions, u_lines, s_lines, only_both=True)
            regions = _mark_both(regions)
        _fill(out, regions, b_lines, u_lines, s_lines, u_changed, s_changed, (ulabel, label), style)

    return TextMerge(
        text="".join(out.lines),
        clean=not out.conflicts,
        conflicts=out.conflicts,
        both_added=out.both_regions,
        stats=MergeStats(out.unchanged, out.auto_merged, out.conflicted, out.both_added),
    )


def _append(
    regions: list[_Region], mode: int, i0: int, chg0: int, i1: int, chg1: int, i2: int, chg2: int
) -> None:
    """xdl_append_merge: a hunk touching the previous region joins it (and may make it a conflict)."""
    if regions:
        m = regions[-1]
        if i1 <= m.i1 + m.chg1 or i2 <= m.i2 + m.chg2:
            if mode != m.mode:
                m.mode = _CONFLICT
            m.chg0 = i0 + chg0 - m.i0
            m.chg1 = i1 + chg1 - m.i1
            m.chg2 = i2 + chg2 - m.i2
            return
    regions.append(_Region(mode, i0, chg0, i1, chg1, i2, chg2))


def _combine(
    x1: list[Change], x2: list[Change], nb: int, nu: int, ns: int, uc: list[str], sc: list[str]
) -> list[_Region]:
    """Walk both edit scripts into regions (the first half of xdl_do_merge)."""
    regions: list[_Region] = []
    p = q = 0
    while p < len(x1) and q < len(x2):
        a = x1[p]
        c = x2[q]
        if a.i1 + a.chg1 < c.i1:
            _append(regions, _TAKE_USER, a.i1, a.chg1, a.i2, a.chg2, c.i2 - c.i1 + a.i1, a.chg1)
            p += 1
            continue
        if c.i1 + c.chg1 < a.i1:
            _append(regions, _TAKE_SHARD, c.i1, c.chg1, a.i2 - a.i1 + c.i1, c.chg1, c.i2, c.chg2)
            q += 1
            continue
        identical = (
            a.i1 == c.i1
            and a.chg1 == c.chg1
            and a.chg2 == c.chg2
            and uc[a.i2 : a.i2 + a.chg2] == sc[c.i2 : c.i2 + c.chg2]
        )
        if not identical:
            off = a.i1 - c.i1
            ffo = off + a.chg1 - c.chg1
            i0, i1, i2 = a.i1, a.i2, c.i2
            if off > 0:
                i0 -= off
                i1 -= off
            else:
                i2 += off
            chg0 = a.i1 + a.chg1 - i0
            chg1 = a.i2 + a.chg2 - i1
            chg2 = c.i2 + c.chg2 - i2
            if ffo < 0:
                chg0 -= ffo
                chg1 -= ffo
            else:
                chg2 += ffo
            _append(regions, _CONFLICT, i0, chg0, i1, chg1, i2, chg2)
        e1 = a.i1 + a.chg1
        e2 = c.i1 + c.chg1
        if e1 >= e2:
            q += 1
        if e2 >= e1:
            p += 1
    for a in x1[p:]:
        _append(regions, _TAKE_USER, a.i1, a.chg1, a.i2, a.chg2, a.i1 + ns - nb, a.chg1)
    for c in x2[q:]:
        _append(regions, _TAKE_SHARD, c.i1, c.chg1, c.i1 + nu - nb, c.chg1, c.i2, c.chg2)
    for m in regions:
        m.base0, m.base_chg = m.i0, m.chg0
        m.both = m.mode == _CONFLICT and m.chg0 == 0
    return regions


def _refine(regions: list[_Region], uc: list[str], sc: list[str], *, only_both: bool) -> list[_Region]:
    """xdl_refine_conflicts: diff a conflict's two sides and keep only what differs."""
    out: list[_Region] = []
    for m in regions:
        if m.mode != _CONFLICT or m.chg1 == 0 or m.chg2 == 0 or (only_both and not m.both):
            out.append(m)
            continue
        script = diff(uc[m.i1 : m.i1 + m.chg1], sc[m.i2 : m.i2 + m.chg2])
        if not script:
            m.mode = _IDENTICAL
            out.append(m)
            continue
        for ch in script:
            out.append(
                _Region(
                    _CONFLICT,
                    m.i0,
                    m.chg0,
                    m.i1 + ch.i1,
                    ch.chg1,
                    m.i2 + ch.i2,
                    ch.chg2,
                    base0=m.base0,
                    base_chg=m.base_chg,
                    both=m.both,
                )
            )
    return out


def _mark_both(regions: list[_Region]) -> list[_Region]:
    for m in regions:
        if m.mode == _CONFLICT and m.both:
            m.mode = _BOTH_ADDED
    return regions


def _has_alnum(lines: list[str]) -> bool:
    # git's isalnum is ASCII-only: UTF-8 bytes of other letters never count.
    return any(ch.isascii() and ch.isalnum() for line in lines for ch in line)


def _simplify(regions: list[_Region], u_lines: list[str]) -> list[_Region]:
    """xdl_simplify_non_conflicts: join conflicts separated by few or letterless lines."""
    if not regions:
        return regions
    out = [regions[0]]
    for nxt in regions[1:]:
        m = out[-1]
        begin = m.i1 + m.chg1
        end = nxt.i1
        if (
            m.mode != _CONFLICT
            or nxt.mode != _CONFLICT
            or (end - begin > 3 and _has_alnum(u_lines[begin:end]))
        ):
            out.append(nxt)
        else:
            m.chg1 = nxt.i1 + nxt.chg1 - m.i1
            m.chg2 = nxt.i2 + nxt.chg2 - m.i2
            m.base_chg = max(m.base_chg, nxt.base0 + nxt.base_chg - m.base0)
    return out


def _copy(out: _Output, lines: list[str], start: int, count: int, changed: bytearray) -> None:
    """Copy lines verbatim, counting them as unchanged or auto-merged by their diff flag."""
    if count <= 0:
        return
    out.lines.extend(lines[start : start + count])
    auto = changed.count(1, start + 1, start + count + 1)
    out.auto_merged += auto
    out.unchanged += count - auto


def _eol_crlf(lines: list[str], i: int) -> int:
    """git's is_eol_crlf: 1 CRLF, 0 LF, -1 cannot tell."""
    n = len(lines)
    if i < n - 1:
        return int(lines[i].endswith("\r\n"))
    if n == 0:
        return -1
    if lines[i].endswith("\n"):
        return int(lines[i].endswith("\r\n"))
    if i == 0:
        return -1
    return int(lines[i - 1].endswith("\r\n"))


def _needs_cr(m: _Region, b: list[str], u: list[str], s: list[str]) -> bool:
    needs = _eol_crlf(u, m.i1 - 1 if m.i1 else 0)
    if needs:
        needs = _eol_crlf(s, m.i2 - 1 if m.i2 else 0)
    if needs:
        needs = _eol_crlf(b, 0)
    return needs > 0


def _side(out: _Output, lines: list[str], start: int, count: int, eol: str) -> None:
    """Copy a conflict side; its last line gets a line end if it has none (git's add_nl)."""
    if count <= 0:
        return
    chunk = lines[start : start + count]
    if not chunk[-1].endswith("\n"):
        chunk[-1] += eol
    out.lines.extend(chunk)


def _marker(out: _Output, text: str) -> None:
    out.lines.append(text)


def _fill(
    out: _Output,
    regions: list[_Region],
    b: list[str],
    u: list[str],
    s: list[str],
    u_changed: bytearray,
    s_changed: bytearray,
    labels: tuple[str, str],
    style: Style,
) -> None:
    """xdl_fill_merge_buffer, plus both-added regions and bookkeeping."""
    i = 0
    for m in regions:
        if m.mode == _IDENTICAL:
            continue
        _copy(out, u, i, m.i1 - i, u_changed)
        if m.mode == _CONFLICT:
            eol = "\r\n" if _needs_cr(m, b, u, s) else "\n"
            start = len(out.lines) + 1
            _marker(out, "<" * _MARKER + " " + labels[0] + eol)
            _side(out, u, m.i1, m.chg1, eol)
            if style == "diff3":
                _marker(out, "|" * _MARKER + " " + _BASE_LABEL + eol)
                _side(out, b, m.i0, m.chg0, eol)
            _marker(out, "=" * _MARKER + eol)
            _side(out, s, m.i2, m.chg2, eol)
            _marker(out, ">" * _MARKER + " " + labels[1] + eol)
            out.conflicted += m.chg1 + m.chg2
            out.conflicts.append(
                ConflictRegion(
                    output_line=start,
                    output_end=len(out.lines),
                    base=_strip(b[m.base0 : m.base0 + m.base_chg]),
                    user=_strip(u[m.i1 : m.i1 + m.chg1]),
                    shard=_strip(s[m.i2 : m.i2 + m.chg2]),
                )
            )
        elif m.mode == _TAKE_USER:
            _copy(out, u, m.i1, m.chg1, u_changed)
        elif m.mode == _TAKE_SHARD:
            _copy(out, s, m.i2, m.chg2, s_changed)
        elif m.mode == _BOTH_ADDED:
            start = len(out.lines) + 1
            shard_part = s[m.i2 : m.i2 + m.chg2]
            if m.chg1 and shard_part and not shard_part[-1].endswith("\n"):
                _side(out, s, m.i2, m.chg2, "\n")
            else:
                out.lines.extend(shard_part)
            out.lines.extend(u[m.i1 : m.i1 + m.chg1])
            out.both_added += m.chg1 + m.chg2
            out.both_regions.append(
                BothAdded(
                    output_line=start,
                    output_count=m.chg1 + m.chg2,
                    user=_strip(u[m.i1 : m.i1 + m.chg1]),
                    shard=_strip(shard_part),
                )
            )
        i = m.i1 + m.chg1
    _copy(out, u, i, len(u) - i, u_changed)


def _strip(lines: list[str]) -> tuple[str, ...]:
    return tuple(line[:-1] if line.endswith("\n") else line for line in lines)


_CONFLICT_OPEN = re.compile(rb"^<{7} ", re.MULTILINE)
_CONFLICT_SPLIT = re.compile(rb"^={7}\r?$", re.MULTILINE)
_CONFLICT_CLOSE = re.compile(rb"^>{7} ", re.MULTILINE)


def has_conflict_markers(data: bytes) -> bool:
    """True when ``data`` still holds a conflict hunk as merges write them
    (``<<<<<<< …``, ``=======``, ``>>>>>>> …`` lines, in that order)."""
    opened = _CONFLICT_OPEN.search(data)
    if opened is None:
        return False
    split = _CONFLICT_SPLIT.search(data, opened.end())
    return split is not None and _CONFLICT_CLOSE.search(data, split.end()) is not None
