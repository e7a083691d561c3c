"""Whole-file three-way merge as ``shardpy update`` (and the importer) calls it.

:func:`merge_document` takes the three versions of one vault file as bytes —
``base`` (what the shard rendered last time), ``user`` (what is on disk)
and ``shard`` (what the new shard version renders) — and returns the bytes
to write plus everything needed to report the outcome. It never touches
the disk.

* Binary files (not valid UTF-8, or containing a NUL byte, on any side)
  are never text-merged: ``kind == "binary"`` and ``data`` is the user's
  bytes unchanged; the caller chooses "keep mine" or "take theirs".
* Text is compared after stripping a UTF-8 BOM and turning CRLF into LF;
  everything else is compared exactly (no Unicode normalisation), so
  emoji, CJK and accented text come back byte for byte.
* The output follows the user's file: BOM kept if the user's file had one;
  a file with one line-ending style gets that style throughout; in a file
  with mixed endings every output line that matches one of the user's
  lines (aligned with the same diff) keeps that line's ending and other
  lines get the prevailing one (CRLF when most of the user's line breaks
  are CRLF; with no line break at all, the shard's style decides).
* Frontmatter: if neither side changed the YAML block, the whole file is
  merged by lines (git's result exactly). If one side changed it (or both
  identically), that block is used verbatim and the rest of the note is
  merged by lines. If both changed it differently and all three blocks are
  YAML mappings (a missing base block counts as empty), the block is
  merged key by key (:mod:`shardpy.merge.frontmatter`) and the rest by
  lines; otherwise the whole file is merged by lines and
  ``frontmatter_fallback`` says why.
"""

from __future__ import annotations

import json

from shardpy.merge.frontmatter import (
    ABSENT,
    Frontmatter,
    FrontmatterMerge,
    KeyConflict,
    comments_kept,
    merge_frontmatter,
    same_data,
    split_frontmatter,
)
from shardpy.merge.text import BothAdded, ConflictRegion, MergeStats, TextMerge, merge3
from shardpy.merge.xdiff import changed_flags, diff, split_lines
from shardpy.record import Record, asdict, field

__all__ = [
    "DocumentMerge",
    "diff_stats",
    "is_binary",
    "merge_document",
    "unified_diff",
]

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any, Literal

    from shardpy.merge.text import Style

    Kind = Literal["clean", "conflict", "binary"]
    # What a frontmatter key both sides changed differently becomes: ``keep`` (the user's value,
    # reported in ``frontmatter_conflicts``; the merge stays clean) or ``markers`` (the user's
    # value stays in the YAML and both values are shown in a conflict block at the top of the
    # body: a conflict).
    KeyConflictMode = Literal["keep", "markers"]

_BOM = "\ufeff"


class DocumentMerge(Record, frozen=True):
    """The merged file and what happened.

    ``kind`` is ``"conflict"`` when ``data`` contains conflict markers,
    ``"binary"`` when the file was not merged, ``"clean"`` otherwise — a
    clean result can still carry ``frontmatter_conflicts`` (keys both sides
    changed; the user's values were kept), so check :attr:`has_conflicts`
    before writing without asking.
    """

    kind: Kind
    data: bytes
    stats: MergeStats = field(default_factory=MergeStats)
    conflicts: list[ConflictRegion] = field(default_factory=list)
    both_added: list[BothAdded] = field(default_factory=list)
    frontmatter_conflicts: list[KeyConflict] = field(default_factory=list)
    frontmatter_fallback: str | None = None

    @property
    def has_conflicts(self) -> bool:
        return bool(self.conflicts or self.frontmatter_conflicts)

    @property
    def is_binary(self) -> bool:
        return self.kind == "binary"

    def conflict_excerpts(self, context_lines: int = 3) -> list[str]:
        """Each conflict hunk with ``context_lines`` lines around it, numbered as in ``data``."""
        if self.kind == "binary" or not self.conflicts:
            return []
        lines = _normalise(self.data.decode("utf-8"))[0].split("\n")
        width = len(str(len(lines)))
        out: list[str] = []
        for c in self.conflicts:
            first = max(1, c.output_line - context_lines)
            last = min(len(lines), c.output_end + context_lines)
            out.append("\n".join(f"{n:>{width}} | {lines[n - 1]}" for n in range(first, last + 1)))
        return out

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary (no file content beyond conflicting lines) for ``--json`` reports."""
        return {
            "kind": self.kind,
            "has_conflicts": self.has_conflicts,
            "stats": asdict(self.stats),
            "conflicts": [
                {
                    "line": c.output_line,
                    "end_line": c.output_end,
                    "user": list(c.user),
                    "shard": list(c.shard),
                }
                for c in self.conflicts
            ],
            "both_added": [{"line": b.output_line, "lines": b.output_count} for b in self.both_added],
            "frontmatter_conflicts": [c.to_dict() for c in self.frontmatter_conflicts],
            "frontmatter_fallback": self.frontmatter_fallback,
        }

    def describe_conflicts(self, context_lines: int = 3) -> list[str]:
        """Frontmatter key conflicts (one line each), then the text conflict excerpts."""
        return [c.describe() for c in self.frontmatter_conflicts] + self.conflict_excerpts(context_lines)


def is_binary(data: bytes) -> bool:
    """Not UTF-8 text, or contains NUL: such a file is never merged by lines."""
    if b"\0" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


class _Text(Record, frozen=True):
    """A side's text with LF line ends, and what it had instead."""

    lf: str
    bom: bool
    raw: str  # the text as decoded, BOM removed
    eol: str | None  # the prevailing line end (CRLF only when most are), None without a line break
    mixed: bool  # both CRLF and LF-only line ends

    def eols(self) -> list[str]:
        """Original line ending of each LF line ("\r\n", "\n", or "" for a last line without one).

        Asked only for a file with mixed endings (the rest need ``eol`` alone: the merge
        driver decodes three versions of every note a sync merges, issue 30)."""
        parts = self.raw.split("\n")
        eols = ["\r\n" if p.endswith("\r") else "\n" for p in parts[:-1]]
        if parts[-1]:
            eols.append("")
        return eols


def _normalise(text: str) -> tuple[str, bool]:
    bom = text.startswith(_BOM)
    if bom:
        text = text[1:]
    # "\r" is found by memchr; searching for "\r\n" costs as much as the whole merge of a
    # short note (most notes have no CR at all).
    return (text.replace("\r\n", "\n") if "\r" in text else text), bom


def _decode(data: bytes) -> _Text:
    raw = data.decode("utf-8")
    lf, bom = _normalise(raw)
    if bom:
        raw = raw[1:]
    if "\r" not in raw:  # most notes: no counting (the merge driver decodes three sides of each)
        return _Text(lf=lf, bom=bom, raw=raw, eol="\n" if "\n" in raw else None, mixed=False)
    crlf = raw.count("\r\n")
    lf_only = raw.count("\n") - crlf
    eol = ("\r\n" if crlf > lf_only else "\n") if crlf or lf_only else None
    return _Text(lf=lf, bom=bom, raw=raw, eol=eol, mixed=bool(crlf and lf_only))


def _default_eol(user: _Text, shard: _Text) -> str:
    for t in (user, shard):
        if t.eol is not None:
            return t.eol
    return "\n"


def _encode(text: str, user: _Text, eol: str) -> bytes:
    """The merged LF text in the user's encoding details (BOM, line endings)."""
    if not user.mixed:
        # The user's file has one line-ending style (or none): apply it to every line.
        if eol == "\r\n":
            text = text.replace("\n", "\r\n")
    else:
        # Mixed endings: a line that is one of the user's lines (aligned by the
        # same diff) keeps its own ending; new lines get the prevailing one.
        lines = split_lines(text)
        user_flags, out_flags = changed_flags(split_lines(user.lf), lines)
        out: list[str] = []
        user_eols = user.eols()
        k = 0
        for j, line in enumerate(lines):
            if out_flags[j + 1]:
                end = eol
            else:
                while user_flags[k + 1]:
                    k += 1
                end = user_eols[k] or eol
                k += 1
            out.append(line[:-1] + end if line.endswith("\n") else line)
        text = "".join(out)
    return ((_BOM if user.bom else "") + text).encode("utf-8")


def merge_document(
    base: bytes,
    user: bytes,
    shard: bytes,
    *,
    shard_label: str,
    style: Style = "merge",
    user_label: str = "yours",
    key_conflicts: KeyConflictMode = "keep",
) -> DocumentMerge:
    """Merge one file three ways; see the module docstring for the rules."""
    # is_binary for each side, decoding each once.
    if b"\0" in base or b"\0" in user or b"\0" in shard:
        return DocumentMerge(kind="binary", data=user)
    try:
        bt, ut, st = _decode(base), _decode(user), _decode(shard)
    except UnicodeDecodeError:
        return DocumentMerge(kind="binary", data=user)
    eol = _default_eol(ut, st)
    labels = (user_label, shard_label)

    bfm, bbody = split_frontmatter(bt.lf)
    ufm, ubody = split_frontmatter(ut.lf)
    sfm, sbody = split_frontmatter(st.lf)
    bblock = bfm.block if bfm else ""
    ublock = ufm.block if ufm else ""
    sblock = sfm.block if sfm else ""

    found: list[KeyConflict] = []
    shown = ""
    fallback: str | None = None
    if ublock == bblock and sblock == bblock:
        return _whole(bt.lf, ut, st.lf, labels, style, eol, None)
    if bblock in (ublock, sblock) or ublock == sblock:
        # One side changed the block (or both alike): that block, verbatim.
        block = ublock if ublock != bblock else sblock
    else:
        fm = (
            merge_frontmatter(bfm.inner if bfm else None, ufm.inner, sfm.inner)
            if ufm is not None and sfm is not None
            else None
        )
        if fm is not None and fm.inner is not None:
            assert ufm is not None and sfm is not None
            block, found = _with_inner(fm.inner, ufm), fm.conflicts
            if key_conflicts == "markers":
                block, found, fallback = _nothing_lost(bfm, ufm, sfm, fm)
            if fallback is not None:
                block = ublock
                shown = _conflict_block(split_lines(ublock), split_lines(sblock), labels)
            elif key_conflicts == "markers" and found:
                shown = _conflict_block(_key_lines(found, "user"), _key_lines(found, "shard"), labels)
        else:
            reason = fm.fallback_reason if fm is not None else _REMOVED_BLOCK
            if key_conflicts == "keep":
                return _whole(bt.lf, ut, st.lf, labels, style, eol, reason)
            # Never markers inside YAML: the user's block stays, both blocks are shown below it.
            block = ublock
            shown = _conflict_block(split_lines(ublock), split_lines(sblock), labels)
            fallback = reason
    parts = (bblock, bbody, ubody, sbody)
    return _with_body(block, shown, found, parts, ut, labels, style, eol, fallback)


_REMOVED_BLOCK = "one side removed the frontmatter block the other side changed"
_COMMENTS_LOST = "a key-level merge would drop a comment one side added or removed"


def _with_inner(inner: str, side: Frontmatter) -> str:
    """A frontmatter block: ``inner`` between the opening line and ``side``'s closing line."""
    return "---\n" + inner + side.block[len("---\n") + len(side.inner) :]


def _nothing_lost(
    bfm: Frontmatter | None, ufm: Frontmatter, sfm: Frontmatter, fm: FrontmatterMerge
) -> tuple[str, list[KeyConflict], str | None]:
    """The driver's frontmatter block when both sides changed it: (block, key conflicts, fallback).

    Nothing either side wrote may vanish without a conflict (issue 24 item 11;
    tests/security/test_driver_shapes.py). The key-level merge rewrites the block from
    the user's document, so it keeps the user's comments and layout only. In order:
    git's line merge of the blocks, when clean and holding the same data (every line of
    both sides, as written); the key-level merge when it loses no comment; the key-level
    merge from the shard's document likewise; else a fallback (both blocks shown).
    """
    assert fm.inner is not None
    bblock, binner = (bfm.block, bfm.inner) if bfm else ("", None)
    block, found = _with_inner(fm.inner, ufm), fm.conflicts
    if not found:
        lines = merge3(bblock, ufm.block, sfm.block, shard_label="", user_label="")
        merged, _ = split_frontmatter(lines.text) if lines.clean else (None, "")
        if merged is not None and merged.block == lines.text and same_data(merged.inner, fm.inner):
            return lines.text, [], None
    if comments_kept(bblock, ufm.block, sfm.block, block):
        return block, found, None
    if not found:
        other = merge_frontmatter(binner, sfm.inner, ufm.inner)
        if other.inner is not None and not other.conflicts:
            theirs_first = _with_inner(other.inner, sfm)
            if comments_kept(bblock, ufm.block, sfm.block, theirs_first):
                return theirs_first, [], None
    return block, [], _COMMENTS_LOST


def _key_lines(conflicts: list[KeyConflict], side: Literal["user", "shard"]) -> list[str]:
    out = []
    for c in conflicts:
        value = getattr(c, side)
        out.append(f"# {c.key}: (removed)\n" if value is ABSENT else f"{c.key}: {_flow(value)}\n")
    return out


def _flow(value: Any) -> str:
    # JSON is YAML flow syntax: one exact line per value, whatever its type.
    return json.dumps(value, ensure_ascii=False, default=str)


def _conflict_block(user: list[str], shard: list[str], labels: tuple[str, str]) -> str:
    def side(lines: list[str]) -> str:
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)

    head, tail = f"<<<<<<< {labels[0]} frontmatter\n", f">>>>>>> {labels[1]} frontmatter\n"
    return f"{head}{side(user)}=======\n{side(shard)}{tail}"


def _with_body(
    block: str,
    shown: str,
    found: list[KeyConflict],
    parts: tuple[str, str, str, str],
    ut: _Text,
    labels: tuple[str, str],
    style: Style,
    eol: str,
    fallback: str | None,
) -> DocumentMerge:
    """The chosen frontmatter block, the frontmatter conflict block (if any), then the merged body."""
    bblock, bbody, ubody, sbody = parts
    body = merge3(bbody, ubody, sbody, shard_label=labels[1], user_label=labels[0], style=style)
    unchanged, auto = _block_stats(bblock, block)
    n_block = unchanged + auto  # the block's lines
    n_shown = len(split_lines(shown))
    shown_conflicts = [ConflictRegion(n_block + 1, n_block + n_shown, (), (), ())] if shown else []
    stats = MergeStats(
        unchanged=body.stats.unchanged + unchanged,
        auto_merged=body.stats.auto_merged + auto,
        conflicted=body.stats.conflicted + max(0, n_shown - 3),
        both_added=body.stats.both_added,
    )
    shift = n_block + n_shown
    conflicts = shown_conflicts + [
        ConflictRegion(c.output_line + shift, c.output_end + shift, c.base, c.user, c.shard)
        for c in body.conflicts
    ]
    both = [BothAdded(b.output_line + shift, b.output_count, b.user, b.shard) for b in body.both_added]
    return DocumentMerge(
        kind="clean" if body.clean and not shown else "conflict",
        data=_encode(block + shown + body.text, ut, eol),
        stats=stats,
        conflicts=conflicts,
        both_added=both,
        frontmatter_conflicts=found,
        frontmatter_fallback=fallback,
    )


def _whole(
    base: str,
    user: _Text,
    shard: str,
    labels: tuple[str, str],
    style: Style,
    eol: str,
    fallback: str | None,
) -> DocumentMerge:
    r: TextMerge = merge3(base, user.lf, shard, shard_label=labels[1], user_label=labels[0], style=style)
    return DocumentMerge(
        kind="clean" if r.clean else "conflict",
        data=_encode(r.text, user, eol),
        stats=r.stats,
        conflicts=r.conflicts,
        both_added=r.both_added,
        frontmatter_fallback=fallback,
    )


def _block_stats(base_block: str, block: str) -> tuple[int, int]:
    """(unchanged, changed) lines of the chosen frontmatter block against the base's."""
    n = split_lines(block)
    added = sum(c.chg2 for c in diff(split_lines(base_block), n))
    return len(n) - added, added


def _byte_lines(data: bytes) -> list[bytes]:
    if not data:
        return []
    parts = data.split(b"\n")
    lines = [p + b"\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def diff_stats(old: bytes, new: bytes) -> tuple[int, int]:
    """(added, removed) line counts between two versions of a file, on the raw bytes' lines."""
    script = diff(_byte_lines(old), _byte_lines(new))
    return sum(c.chg2 for c in script), sum(c.chg1 for c in script)


def unified_diff(
    old: bytes, new: bytes, *, old_label: str = "a", new_label: str = "b", context: int = 3
) -> str:
    """A git-style unified diff for display; binary files get git's one-line notice."""
    if old == new:
        return ""
    if is_binary(old) or is_binary(new):
        return f"Binary files {old_label} and {new_label} differ\n"
    a = [line.decode("utf-8") for line in _byte_lines(old)]
    b = [line.decode("utf-8") for line in _byte_lines(new)]
    script = diff(_byte_lines(old), _byte_lines(new))
    out = [f"--- {old_label}\n", f"+++ {new_label}\n"]
    k = 0
    while k < len(script):
        # Changes closer than 2*context unchanged lines share a hunk, as in git.
        j = k
        while j + 1 < len(script) and script[j + 1].i1 - (script[j].i1 + script[j].chg1) <= 2 * context:
            j += 1
        first, last = script[k], script[j]
        lead = min(context, first.i1)
        s1, s2 = first.i1 - lead, first.i2 - lead
        tail = min(context, len(a) - (last.i1 + last.chg1), len(b) - (last.i2 + last.chg2))
        e1, e2 = last.i1 + last.chg1 + tail, last.i2 + last.chg2 + tail
        out.append(f"@@ -{_range(s1, e1 - s1)} +{_range(s2, e2 - s2)} @@\n")
        i1 = s1
        for c in script[k : j + 1]:
            out.extend(_emit(" ", a[i1 : c.i1]))
            out.extend(_emit("-", a[c.i1 : c.i1 + c.chg1]))
            out.extend(_emit("+", b[c.i2 : c.i2 + c.chg2]))
            i1 = c.i1 + c.chg1
        out.extend(_emit(" ", a[i1:e1]))
        k = j + 1
    return "".join(out)


def _range(start: int, count: int) -> str:
    first = start + 1 if count else start
    return str(first) if count == 1 else f"{first},{count}"


def _emit(prefix: str, lines: list[str]) -> list[str]:
    out = []
    for line in lines:
        if line.endswith("\n"):
            out.append(prefix + line)
        else:
            out.append(prefix + line + "\n\\ No newline at end of file\n")
    return out
