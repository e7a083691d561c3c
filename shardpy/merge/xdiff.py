"""A line diff that aligns exactly as git's xdiff (Myers) does.

Three-way merges only reproduce ``git merge-file`` byte for byte when both
underlying diffs pair up the same lines as git's, and git's Myers is not a
textbook one. This module re-implements, in plain Python, the behaviour of
xdiff with the options ``git merge-file`` uses (no whitespace flags, no
indent heuristic, Myers with its speed heuristics):

* records are lines *including* their ``\\n``, so a last line without a
  newline never equals the same text with one;
* common leading and trailing records are trimmed before anything else;
* records with no match on the other side are discarded up front (marked
  changed), and records with very many matches are discarded too when they
  sit inside a run of unmatched ones (``xdl_cleanup_records``);
* Myers' divide and conquer with git's cost cut-offs (``mxcost``, snake
  sampling after 256 edits) on what is left;
* change groups are slid up and down to join neighbours and to line up with
  changes on the other side (``xdl_change_compact``).

Records are compared by equality only: lines (str or bytes) as they are, or
any hashable stand-ins for them. The common ends are compared line by
line (most of a note: never hashed); a middle that needs Myers gets small
int ids for it. Runs of equal lines are measured with slice comparisons
(galloping), which keeps long files fast in Python.
"""

from __future__ import annotations

from collections import Counter, namedtuple
from collections.abc import Hashable, Sequence

__all__ = ["Change", "changed_flags", "diff", "diff_with_flags", "split_lines"]

_SNAKE_CNT = 20
_HEUR_MIN_COST = 256
_MAX_COST_MIN = 256
_K_HEUR = 4
_MAX_EQLIMIT = 1024
_SIMSCAN_WINDOW = 100
_KPDIS_RUN = 4
_LINE_MAX = 1 << 62


TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import NamedTuple

    class Change(NamedTuple):
        """One hunk: ``chg1`` lines of the old side at ``i1`` became ``chg2`` new lines at ``i2``."""

        i1: int
        i2: int
        chg1: int
        chg2: int

else:  # the same tuple, made without typing (a sync merging 500 notes makes ~1,200)
    Change = namedtuple("Change", "i1 i2 chg1 chg2")
    Change.__doc__ = "One hunk: ``chg1`` lines of the old side at ``i1`` became ``chg2`` new lines at ``i2``."


def _only_lf_breaks(text: str) -> bool:
    """ASCII text without any line break but "\n" that str.splitlines knows: seven memchr scans,
    a fifth of the time of counting the line ends."""
    return (
        text.isascii()
        and "\r" not in text
        and "\x0b" not in text
        and "\x0c" not in text
        and "\x1c" not in text
        and "\x1d" not in text
        and "\x1e" not in text
    )


def split_lines(text: str) -> list[str]:
    """Split into records as xdiff does: each keeps its ``\\n``; a final partial line has none."""
    if not text:
        return []
    lines = text.splitlines(True)
    # str.splitlines also breaks at "\r", "\x0b", "\x0c", "\x1c"-"\x1e", "\x85", "\u2028" and
    # "\u2029": with none of those the records are the same, in a third of the time (issue 30,
    # the driver's cost); any of them makes one record more, so the count tells.
    if _only_lf_breaks(text) or len(lines) == text.count("\n") + (not text.endswith("\n")):
        return lines
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _bogosqrt(n: int) -> int:
    i = 1
    while n > 0:
        i <<= 1
        n >>= 2
    return i


def _run_fwd(a: Sequence[int], b: Sequence[int], i: int, j: int, limit: int) -> int:
    """Length of the common run a[i:], b[j:] (at most ``limit``)."""
    k = 0
    # Short runs are the common case; plain indexing beats slicing there.
    while k < limit and k < 8:
        if a[i + k] != b[j + k]:
            return k
        k += 1
    step = 8
    while k < limit:
        s = min(step, limit - k)
        if a[i + k : i + k + s] == b[j + k : j + k + s]:
            k += s
            step <<= 1
            continue
        lo, hi = 0, s
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if a[i + k : i + k + mid] == b[j + k : j + k + mid]:
                lo = mid
            else:
                hi = mid
        return k + lo
    return k


def _run_bwd(a: Sequence[int], b: Sequence[int], i: int, j: int, limit: int) -> int:
    """Length of the common run ending just before a[i], b[j] (at most ``limit``)."""
    k = 0
    while k < limit and k < 8:
        if a[i - 1 - k] != b[j - 1 - k]:
            return k
        k += 1
    step = 8
    while k < limit:
        s = min(step, limit - k)
        if a[i - k - s : i - k] == b[j - k - s : j - k]:
            k += s
            step <<= 1
            continue
        lo, hi = 0, s
        while hi - lo > 1:
            mid = (lo + hi) >> 1
            if a[i - k - mid : i - k] == b[j - k - mid : j - k]:
                lo = mid
            else:
                hi = mid
        return k + lo
    return k


class _MultiMatch:
    """xdl_clean_mmatch in O(1) per line: is a many-times-matched line inside a run of unmatched ones?

    xdiff scans up to 100 records either way from the line, stopping at the
    first record with a normal match (dis == 1), counting unmatched (0) and
    many-matched (2) records. Prefix counts and nearest-1 tables give the
    same numbers without the scan, which matters for repetitive files.
    """

    def __init__(self, dis: bytearray, s: int, e: int) -> None:
        self.s = s
        self.e = e
        zeros = [0]
        twos = [0]
        z = t = 0
        for i in range(s, e + 1):
            v = dis[i]
            if v == 0:
                z += 1
            elif v == 2:
                t += 1
            zeros.append(z)
            twos.append(t)
        self.zeros = zeros
        self.twos = twos
        prev1 = [s - 1] * (e - s + 1)
        last = s - 1
        for i in range(s, e + 1):
            prev1[i - s] = last
            if dis[i] == 1:
                last = i
        next1 = [e + 1] * (e - s + 1)
        last = e + 1
        for i in range(e, s - 1, -1):
            next1[i - s] = last
            if dis[i] == 1:
                last = i
        self.prev1 = prev1
        self.next1 = next1

    def discard(self, i: int) -> bool:
        s, e, zeros, twos = self.s, self.e, self.zeros, self.twos
        lo = max(s, i - _SIMSCAN_WINDOW, self.prev1[i - s] + 1)
        rdis0 = zeros[i - s] - zeros[lo - s]
        if rdis0 == 0:
            return False
        rpdis0 = 1 + twos[i - s] - twos[lo - s]
        hi = min(e, i + _SIMSCAN_WINDOW, self.next1[i - s] - 1)
        rdis1 = zeros[hi + 1 - s] - zeros[i + 1 - s]
        if rdis1 == 0:
            return False
        rpdis1 = 1 + twos[hi + 1 - s] - twos[i + 1 - s]
        rdis1 += rdis0
        rpdis1 += rpdis0
        return rpdis1 * _KPDIS_RUN < rpdis1 + rdis1


def _reduce(
    own: Sequence[Hashable], dstart: int, dend: int, counts_other: Counter[Hashable], chg: bytearray
) -> tuple[list[Hashable], list[int]]:
    """Keep the records worth running Myers on; mark the discarded ones changed (xdl_cleanup_records)."""
    n = len(own)
    mlim = min(_bogosqrt(n), _MAX_EQLIMIT)
    dis = bytearray(n + 1)
    many = False
    for i in range(dstart, dend + 1):
        nm = counts_other.get(own[i], 0)
        if nm:
            if nm >= mlim:
                dis[i] = 2
                many = True
            else:
                dis[i] = 1
    mm = _MultiMatch(dis, dstart, dend) if many else None
    ha: list[Hashable] = []
    rindex: list[int] = []
    for i in range(dstart, dend + 1):
        v = dis[i]
        if v == 1 or (v == 2 and mm is not None and not mm.discard(i)):
            rindex.append(i)
            ha.append(own[i])
        else:
            chg[i + 1] = 1
    return ha, rindex


# One edit more in one direction: its diagonals lo and hi, whether it saw a long
# snake, and where it met the other direction's paths (None: not yet).
_Step = tuple[int, int, bool, tuple[int, int] | None]


class _Box:
    """One xdl_split search: the box ``off1..lim1`` x ``off2..lim2`` of the
    records ``ha1`` and ``ha2``, and the forward and backward furthest-reaching
    paths ``kvdf``/``kvdb`` (indexed by diagonal + ``ko``)."""

    __slots__ = ("ha1", "ha2", "ko", "kvdb", "kvdf", "lim1", "lim2", "off1", "off2")

    def __init__(
        self,
        ha1: list[int],
        box: tuple[int, int, int, int],
        ha2: list[int],
        kv: tuple[list[int], list[int], int],
    ) -> None:
        self.ha1, self.ha2 = ha1, ha2
        self.off1, self.lim1, self.off2, self.lim2 = box
        self.kvdf, self.kvdb, self.ko = kv

    def forward(self, fmin: int, fmax: int, meet: bool, bmin: int, bmax: int) -> _Step:
        """One edit more forward: widen the diagonals ``fmin..fmax`` and extend each
        along its snake; with ``meet``, stop where one reaches a backward path of
        ``bmin..bmax``."""
        ha1, ha2, kvdf, kvdb, ko = self.ha1, self.ha2, self.kvdf, self.kvdb, self.ko
        lim1, lim2 = self.lim1, self.lim2
        fmin, fmax = _grow(kvdf, ko, fmin, fmax, self.off1 - lim2, lim1 - self.off2, -1)
        got_snake = False
        for d in range(fmax, fmin - 1, -2):
            lo = kvdf[d - 1 + ko]
            hi = kvdf[d + 1 + ko]
            i1 = lo + 1 if lo >= hi else hi
            prev1 = i1
            i2 = i1 - d
            if i1 < lim1 and i2 < lim2 and ha1[i1] == ha2[i2]:
                run = _run_fwd(ha1, ha2, i1, i2, min(lim1 - i1, lim2 - i2))
                i1 += run
                i2 += run
            if i1 - prev1 > _SNAKE_CNT:
                got_snake = True
            kvdf[d + ko] = i1
            if meet and bmin <= d <= bmax and kvdb[d + ko] <= i1:
                return fmin, fmax, got_snake, (i1, i2)
        return fmin, fmax, got_snake, None

    def backward(self, bmin: int, bmax: int, meet: bool, fmin: int, fmax: int) -> _Step:
        """The same backward, for the diagonals ``bmin..bmax``, meeting a forward
        path of ``fmin..fmax``."""
        ha1, ha2, kvdf, kvdb, ko = self.ha1, self.ha2, self.kvdf, self.kvdb, self.ko
        off1, off2 = self.off1, self.off2
        bmin, bmax = _grow(kvdb, ko, bmin, bmax, off1 - self.lim2, self.lim1 - off2, _LINE_MAX)
        got_snake = False
        for d in range(bmax, bmin - 1, -2):
            lo = kvdb[d - 1 + ko]
            hi = kvdb[d + 1 + ko]
            i1 = lo if lo < hi else hi - 1
            prev1 = i1
            i2 = i1 - d
            if i1 > off1 and i2 > off2 and ha1[i1 - 1] == ha2[i2 - 1]:
                run = _run_bwd(ha1, ha2, i1, i2, min(i1 - off1, i2 - off2))
                i1 -= run
                i2 -= run
            if prev1 - i1 > _SNAKE_CNT:
                got_snake = True
            kvdb[d + ko] = i1
            if meet and fmin <= d <= fmax and i1 <= kvdf[d + ko]:
                return bmin, bmax, got_snake, (i1, i2)
        return bmin, bmax, got_snake, None

    def forward_snake(self, fmin: int, fmax: int, fmid: int, ec: int) -> tuple[int, int] | None:
        """The heuristic's split on a forward path: the best one ending in a
        snake of _SNAKE_CNT equal records, if it is good enough."""
        ha1, ha2, kvdf, ko = self.ha1, self.ha2, self.kvdf, self.ko
        off1, lim1, off2, lim2 = self.off1, self.lim1, self.off2, self.lim2
        best = 0
        spl1 = spl2 = 0
        for d in range(fmax, fmin - 1, -2):
            dd = d - fmid if d > fmid else fmid - d
            i1 = kvdf[d + ko]
            i2 = i1 - d
            v = (i1 - off1) + (i2 - off2) - dd
            if (
                v > _K_HEUR * ec
                and v > best
                and off1 + _SNAKE_CNT <= i1 < lim1
                and off2 + _SNAKE_CNT <= i2 < lim2
            ):
                k = 1
                while ha1[i1 - k] == ha2[i2 - k]:
                    if k == _SNAKE_CNT:
                        best = v
                        spl1, spl2 = i1, i2
                        break
                    k += 1
        return (spl1, spl2) if best > 0 else None

    def backward_snake(self, bmin: int, bmax: int, bmid: int, ec: int) -> tuple[int, int] | None:
        """The same on a backward path."""
        ha1, ha2, kvdb, ko = self.ha1, self.ha2, self.kvdb, self.ko
        off1, lim1, off2, lim2 = self.off1, self.lim1, self.off2, self.lim2
        best = 0
        spl1 = spl2 = 0
        for d in range(bmax, bmin - 1, -2):
            dd = d - bmid if d > bmid else bmid - d
            i1 = kvdb[d + ko]
            i2 = i1 - d
            v = (lim1 - i1) + (lim2 - i2) - dd
            if (
                v > _K_HEUR * ec
                and v > best
                and off1 < i1 <= lim1 - _SNAKE_CNT
                and off2 < i2 <= lim2 - _SNAKE_CNT
            ):
                k = 0
                while ha1[i1 + k] == ha2[i2 + k]:
                    if k == _SNAKE_CNT - 1:
                        best = v
                        spl1, spl2 = i1, i2
                        break
                    k += 1
        return (spl1, spl2) if best > 0 else None

    def furthest(self, fwd: tuple[int, int], back: tuple[int, int]) -> tuple[int, int, bool, bool]:
        """The cost cut-off's split: the furthest-reaching path of either direction."""
        kvdf, kvdb, ko = self.kvdf, self.kvdb, self.ko
        off1, lim1, off2, lim2 = self.off1, self.lim1, self.off2, self.lim2
        fbest = fbest1 = -1
        for d in range(fwd[1], fwd[0] - 1, -2):
            i1 = min(kvdf[d + ko], lim1)
            i2 = i1 - d
            if lim2 < i2:
                i1 = lim2 + d
                i2 = lim2
            if fbest < i1 + i2:
                fbest = i1 + i2
                fbest1 = i1
        bbest = bbest1 = _LINE_MAX
        for d in range(back[1], back[0] - 1, -2):
            i1 = max(off1, kvdb[d + ko])
            i2 = i1 - d
            if i2 < off2:
                i1 = off2 + d
                i2 = off2
            if i1 + i2 < bbest:
                bbest = i1 + i2
                bbest1 = i1
        if (lim1 + lim2) - bbest < fbest - (off1 + off2):
            return fbest1, fbest - fbest1, True, False
        return bbest1, bbest - bbest1, False, True


def _grow(kv: list[int], ko: int, lo: int, hi: int, dmin: int, dmax: int, sentinel: int) -> tuple[int, int]:
    """Widen the diagonals ``lo..hi`` by one on each side the box allows (narrow
    where it does not), marking the diagonal beyond each new end unreachable."""
    if lo > dmin:
        lo -= 1
        kv[lo - 1 + ko] = sentinel
    else:
        lo += 1
    if hi < dmax:
        hi += 1
        kv[hi + 1 + ko] = sentinel
    else:
        hi -= 1
    return lo, hi


def _split(
    ha1: list[int],
    off1: int,
    lim1: int,
    ha2: list[int],
    off2: int,
    lim2: int,
    kvdf: list[int],
    kvdb: list[int],
    ko: int,
    need_min: bool,
    mxcost: int,
) -> tuple[int, int, bool, bool]:
    """Find the split point of a box (xdl_split); returns (i1, i2, min_lo, min_hi)."""
    box = _Box(ha1, (off1, lim1, off2, lim2), ha2, (kvdf, kvdb, ko))
    fmid = off1 - off2
    bmid = lim1 - lim2
    odd = (fmid - bmid) & 1 == 1
    fmin = fmax = fmid
    bmin = bmax = bmid
    kvdf[fmid + ko] = off1
    kvdb[bmid + ko] = lim1
    ec = 0
    while True:
        ec += 1
        fmin, fmax, snake_f, met = box.forward(fmin, fmax, odd, bmin, bmax)
        if met is not None:
            return met[0], met[1], True, True
        bmin, bmax, snake_b, met = box.backward(bmin, bmax, not odd, fmin, fmax)
        if met is not None:
            return met[0], met[1], True, True
        if need_min:
            continue
        if (snake_f or snake_b) and ec > _HEUR_MIN_COST:
            at = box.forward_snake(fmin, fmax, fmid, ec)
            if at is not None:
                return at[0], at[1], True, False
            at = box.backward_snake(bmin, bmax, bmid, ec)
            if at is not None:
                return at[0], at[1], False, True
        if ec >= mxcost:
            return box.furthest((fmin, fmax), (bmin, bmax))


def _myers(
    ha1: list[int], rindex1: list[int], chg1: bytearray, ha2: list[int], rindex2: list[int], chg2: bytearray
) -> None:
    """xdl_recs_cmp: mark changed records, iteratively instead of recursively."""
    n1, n2 = len(ha1), len(ha2)
    ndiags = n1 + n2 + 3
    kvdf = [0] * (ndiags + 2)
    kvdb = [0] * (ndiags + 2)
    ko = n2 + 1
    mxcost = max(_bogosqrt(ndiags), _MAX_COST_MIN)
    stack = [(0, n1, 0, n2, False)]
    while stack:
        off1, lim1, off2, lim2, need_min = stack.pop()
        if off1 < lim1 and off2 < lim2 and ha1[off1] == ha2[off2]:
            run = _run_fwd(ha1, ha2, off1, off2, min(lim1 - off1, lim2 - off2))
            off1 += run
            off2 += run
        if off1 < lim1 and off2 < lim2 and ha1[lim1 - 1] == ha2[lim2 - 1]:
            run = _run_bwd(ha1, ha2, lim1, lim2, min(lim1 - off1, lim2 - off2))
            lim1 -= run
            lim2 -= run
        if off1 == lim1:
            for k in range(off2, lim2):
                chg2[rindex2[k] + 1] = 1
        elif off2 == lim2:
            for k in range(off1, lim1):
                chg1[rindex1[k] + 1] = 1
        else:
            i1, i2, min_lo, min_hi = _split(
                ha1, off1, lim1, ha2, off2, lim2, kvdf, kvdb, ko, need_min, mxcost
            )
            stack.append((i1, lim1, i2, lim2, min_hi))
            stack.append((off1, i1, off2, i2, min_lo))


def _next_set(flags: bytearray, start: int) -> int:
    found = flags.find(1, start)
    return len(flags) if found < 0 else found


def _movable(ch: bytearray, recs: Sequence[Hashable]) -> bool:
    """Whether any group of changed records has an equal line just above it or at its end,
    the only groups :func:`_compact` can move (when none can, it changes nothing)."""
    gs = ch.find(1, 1) - 1
    while gs >= 0:
        ge = ch.find(0, gs + 2) - 1  # the zero sentinel after the last record is always found
        if _slides(recs, gs, ge):
            return True
        gs = ch.find(1, ge + 2) - 1
    return False


def _compact(ch: bytearray, recs: Sequence[Hashable], cho: bytearray) -> None:
    """xdl_change_compact without the indent heuristic (``git merge-file`` does not enable it).

    ``ch``/``cho`` hold one flag per record at index ``record + 1`` with a
    zero sentinel on either end, so ``ch[x + 1]`` is "record x changed".
    ``gs..ge`` is the current group of changed records in this file and
    ``os_..oe`` the group at the same place in the other file (groups may be
    empty); both advance in lockstep over unchanged records.
    """
    # Usually no group can move (a note's edits rarely border an equal line): then the
    # lockstep walk, which would change nothing, is skipped.
    if _movable(ch, recs):
        _compact_walk(ch, recs, cho)


def _compact_walk(ch: bytearray, recs: Sequence[Hashable], cho: bytearray) -> None:
    """:func:`_compact`'s walk over the groups of both files."""
    n = len(ch) - 2
    no = len(cho) - 2
    gs = ge = 0
    while ch[ge + 1]:
        ge += 1
    os_ = oe = 0
    while cho[oe + 1]:
        oe += 1
    while True:
        if ge != gs:
            # Only a group with an equal line just above or at its end can move.
            if (gs > 0 and recs[gs - 1] == recs[ge - 1]) or (ge < n and recs[gs] == recs[ge]):
                gs, ge, os_, oe = _slide(ch, recs, cho, (gs, ge, os_, oe))
        elif oe == os_:
            # Both groups are empty: skip the run of lines unchanged on both
            # sides in one step (each side advances by the same count).
            skip = min(_next_set(ch, ge + 2) - (ge + 2), _next_set(cho, oe + 2) - (oe + 2), n - ge, no - oe)
            if skip > 0:
                ge += skip
                gs = ge
                oe += skip
                os_ = oe
        if ge == n:
            break
        gs = ge = ge + 1
        while ch[ge + 1]:
            ge += 1
        if oe == no:
            raise AssertionError("group sync broken moving to next group")
        os_ = oe = oe + 1
        while cho[oe + 1]:
            oe += 1


def _group_end(flags: bytearray, start: int) -> int:
    """Where the group starting at record ``start`` ends (the first unchanged record
    from there): ``flags[end + 1]`` is the first zero flag after ``flags[start]``."""
    return flags.find(0, start + 1) - 1


_Groups = tuple[int, int, int, int]  # gs, ge, os_, oe as in _compact


def _slide(ch: bytearray, recs: Sequence[Hashable], cho: bytearray, at: _Groups) -> _Groups:
    """Slide one non-empty group up and down as equal lines allow, joining the
    groups it meets, and leave it at the lowest place facing a change in the other file."""
    n = len(ch) - 2
    gs, ge, os_, oe = at
    while True:
        groupsize = ge - gs
        end_matching_other = -1
        # Slide the group up as far as equal lines allow (joining groups it meets)...
        while gs > 0 and recs[gs - 1] == recs[ge - 1]:
            gs, ge, os_, oe = _up(ch, cho, (gs, ge, os_, oe), "group sync broken sliding up")
        earliest_end = ge
        if oe > os_:
            end_matching_other = ge
        # ...then down as far as possible, noting where it lines up with a change opposite.
        while ge < n and recs[gs] == recs[ge]:
            gs, ge, os_, oe = _down(ch, cho, (gs, ge, os_, oe))
            if oe > os_:
                end_matching_other = ge
        if groupsize == ge - gs:
            break
    if ge != earliest_end and end_matching_other != -1:
        # Move back up to the lowest position facing a change in the other file.
        while oe == os_:
            if not (gs > 0 and recs[gs - 1] == recs[ge - 1]):
                raise AssertionError("match disappeared")
            gs, ge, os_, oe = _up(ch, cho, (gs, ge, os_, oe), "group sync broken sliding to match")
    return gs, ge, os_, oe


def _up(ch: bytearray, cho: bytearray, at: _Groups, broken: str) -> _Groups:
    """The group one record up (joining a group above it), the other file's group in step."""
    gs, ge, os_, oe = at
    gs -= 1
    ch[gs + 1] = 1
    ge -= 1
    ch[ge + 1] = 0
    while ch[gs]:
        gs -= 1
    if os_ == 0:
        raise AssertionError(broken)
    oe = os_ - 1
    os_ = oe
    while cho[os_]:
        os_ -= 1
    return gs, ge, os_, oe


def _down(ch: bytearray, cho: bytearray, at: _Groups) -> _Groups:
    """The group one record down (joining a group below it), the other file's group in step."""
    gs, ge, os_, oe = at
    ch[gs + 1] = 0
    gs += 1
    ch[ge + 1] = 1
    ge += 1
    while ch[ge + 1]:
        ge += 1
    if oe == len(cho) - 2:
        raise AssertionError("group sync broken sliding down")
    os_ = oe + 1
    oe = _group_end(cho, os_)
    return gs, ge, os_, oe


def _build_script(ch1: bytearray, ch2: bytearray) -> list[Change]:
    """The hunks of two flag arrays (xdl_build_script): each run of changed records on either
    side at the same place, the unchanged records between runs paired in order."""
    n1 = len(ch1) - 2
    n2 = len(ch2) - 2
    out: list[Change] = []
    i1 = i2 = 0
    while True:
        # Skip the unchanged records up to the next change on either side (as many on both).
        next1 = ch1.find(1, i1 + 1)
        next2 = ch2.find(1, i2 + 1)
        if next1 < 0 and next2 < 0:
            return out
        skip = min(n1 - i1 if next1 < 0 else next1 - 1 - i1, n2 - i2 if next2 < 0 else next2 - 1 - i2)
        i1 += skip
        i2 += skip
        # Each run ends at the first unchanged record (the zero sentinel at the end at the latest).
        e1 = ch1.find(0, i1 + 1) - 1
        e2 = ch2.find(0, i2 + 1) - 1
        if e1 == i1 and e2 == i2:
            raise AssertionError("change flags out of step")
        out.append(Change(i1, i2, e1 - i1, e2 - i2))
        i1, i2 = e1, e2


def _prefix(a: Sequence[Hashable], b: Sequence[Hashable], limit: int) -> int:
    """How many leading records ``a`` and ``b`` share (at most ``limit``)."""
    k = 0
    while limit - k >= 64 and a[k : k + 64] == b[k : k + 64]:
        k += 64
    while k < limit and a[k] == b[k]:
        k += 1
    return k


def _suffix(a: Sequence[Hashable], b: Sequence[Hashable], limit: int) -> int:
    """How many trailing records ``a`` and ``b`` share (at most ``limit``)."""
    n1, n2 = len(a), len(b)
    k = 0
    while limit - k >= 64 and a[n1 - k - 64 : n1 - k] == b[n2 - k - 64 : n2 - k]:
        k += 64
    while k < limit and a[n1 - 1 - k] == b[n2 - 1 - k]:
        k += 1
    return k


def _slides(recs: Sequence[Hashable], gs: int, ge: int) -> bool:
    """Whether the group of changed records ``gs..ge`` (maybe empty) has an equal line just
    above it or at its end: only such a group can move in :func:`_compact`."""
    return ge > gs and (
        (gs > 0 and recs[gs - 1] == recs[ge - 1]) or (ge < len(recs) and recs[gs] == recs[ge])
    )


def _align(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[bytearray, bytearray, list[Change] | None]:
    """:func:`changed_flags`' work, plus the edit script when it is known without reading the
    flags (no change, or one hunk that compaction leaves where it is), else None.

    Records are lines (str or bytes) or hashable stand-ins for them: only their equality
    counts. The common leading and trailing records are trimmed first (xdl_trim_ends), on the
    records as they are; only a middle that needs Myers gets its records numbered.
    """
    n1, n2 = len(a), len(b)
    ch1 = bytearray(n1 + 2)
    ch2 = bytearray(n2 + 2)
    pre = _prefix(a, b, min(n1, n2))
    suf = _suffix(a, b, min(n1, n2) - pre)
    end1 = n1 - suf
    end2 = n2 - suf
    if end1 == pre and end2 == pre:
        return ch1, ch2, []
    if end1 == pre or end2 == pre or set(a[pre:end1]).isdisjoint(b[pre:end2]):
        # No record of one side's middle is in the other's (one may be empty: an insertion or a
        # deletion; or a line replaced): every alignment marks them all changed, so the counts and
        # Myers are skipped (the most common edit of a note; issue 30, the driver's cost).
        ch1[pre + 1 : end1 + 1] = b"\x01" * (end1 - pre)
        ch2[pre + 1 : end2 + 1] = b"\x01" * (end2 - pre)
        if not (_slides(a, pre, end1) or _slides(b, pre, end2)):
            return ch1, ch2, [Change(pre, pre, end1 - pre, end2 - pre)]
        _compact(ch1, a, ch2)
        _compact(ch2, b, ch1)
        return ch1, ch2, None
    # Matches are counted over the whole other file, trimmed ends included,
    # as xdl_cleanup_records does.
    ha1, rindex1 = _reduce(a, pre, end1 - 1, Counter(b), ch1)
    ha2, rindex2 = _reduce(b, pre, end2 - 1, Counter(a), ch2)
    # Myers compares ints: each distinct record it is given gets one.
    ids: dict[Hashable, int] = {}
    add = ids.setdefault
    _myers([add(x, len(ids)) for x in ha1], rindex1, ch1, [add(x, len(ids)) for x in ha2], rindex2, ch2)
    _compact(ch1, a, ch2)
    _compact(ch2, b, ch1)
    return ch1, ch2, None


def changed_flags(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[bytearray, bytearray]:
    """Per-record change flags for both sides (index ``record + 1``), after compaction."""
    ch1, ch2, _ = _align(a, b)
    return ch1, ch2


def diff(a: Sequence[Hashable], b: Sequence[Hashable]) -> list[Change]:
    """The edit script from ``a`` to ``b`` exactly as git's default diff computes it."""
    ch1, ch2, script = _align(a, b)
    return _build_script(ch1, ch2) if script is None else script


def diff_with_flags(a: Sequence[Hashable], b: Sequence[Hashable]) -> tuple[list[Change], bytearray]:
    """The edit script plus the new side's change flags (index ``record + 1``)."""
    ch1, ch2, script = _align(a, b)
    return (_build_script(ch1, ch2) if script is None else script), ch2
