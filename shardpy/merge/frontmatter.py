"""Key-level three-way merge of a note's YAML frontmatter (beyond git).

A frontmatter block is what :func:`shardpy.notes.frontmatter.fences` reads
(the one splitter, issue 25): the note's first line ``---``, YAML lines, and
a closing ``---`` line (``...`` does not close, as in Obsidian and
basic-memory). When both the user and the shard changed the block,
:func:`merge_frontmatter` merges it key by key instead of line by line:

* a key only one side changed (value changed, key added or removed) takes
  that side's value; a key both sides changed the same way keeps it;
* a key whose value is a mapping on all sides (or added as a mapping on
  both) is merged recursively, key by key;
* a list of scalars changed on both sides (``tags``, ``aliases``...) merges
  as a three-way set: items either side removed stay removed, items either
  side added are added; the user's order is kept and new shard items are
  appended in the shard's order;
* any other key changed differently on both sides is a *key conflict*: the
  user's value (or the user's removal) stays and the conflict is reported —
  YAML never receives conflict markers.

Values are compared as data, not text: a change of quoting, flow/block
style or key order is not a change of value, while ``1``, ``1.0``,
``true`` and ``"1"`` all differ. The result starts from the user's
ruamel.yaml round-trip document so the user's comments, quoting, key order
and indentation survive; if nothing has to change, the user's text is
returned untouched. A block that is not valid YAML or not a mapping (or
has duplicate keys) cannot be merged this way: the result then carries a
``fallback_reason`` and the caller merges the whole file by lines.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import math
from collections import Counter
from collections.abc import Hashable, Mapping

from shardpy.record import Record, field

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = [
    "ABSENT",
    "Frontmatter",
    "FrontmatterMerge",
    "KeyConflict",
    "comments_kept",
    "merge_frontmatter",
    "same_data",
    "split_frontmatter",
]


class _Absent:
    """Marks a key that does not exist on one side."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __reduce__(self) -> str:
        return "ABSENT"


ABSENT: Final = _Absent()


class Frontmatter(Record, frozen=True):
    """A frontmatter block: ``block`` is the full text (delimiters included), ``inner`` the YAML."""

    block: str
    inner: str

    @property
    def line_count(self) -> int:
        return self.block.count("\n") + (0 if self.block.endswith("\n") else 1)


def split_frontmatter(text: str) -> tuple[Frontmatter | None, str]:
    """Split LF text into its frontmatter block (or None) and the rest of the note."""
    from shardpy.notes.frontmatter import fences

    found = fences(text)
    if found is None:
        return None, text
    return Frontmatter(block=text[: len(text) - len(found.body)], inner=found.yaml), found.body


class KeyConflict(Record, frozen=True):
    """A key both sides changed differently; the merged block keeps the user's value.

    ``key`` is the dotted path for nested keys. Values are plain Python data
    (dict, list, str, int, float, bool, None, dates) or :data:`ABSENT`.
    """

    key: str
    base: Any
    user: Any
    shard: Any

    def to_dict(self) -> dict[str, str | None]:
        """JSON-ready: each value as JSON text, or None when the key is absent on that side."""
        return {
            "key": self.key,
            "base": None if self.base is ABSENT else _show(self.base),
            "user": None if self.user is ABSENT else _show(self.user),
            "shard": None if self.shard is ABSENT else _show(self.shard),
        }

    def describe(self) -> str:
        return (
            f"frontmatter key '{self.key}': base {_show(self.base)}, "
            f"yours {_show(self.user)}, shard {_show(self.shard)} (kept yours)"
        )


class FrontmatterMerge(Record, frozen=True):
    """Outcome of a key-level merge; ``inner`` is the merged YAML text, None on fallback."""

    inner: str | None
    conflicts: list[KeyConflict] = field(default_factory=list)
    changed_keys: list[str] = field(default_factory=list)
    fallback_reason: str | None = None

    @property
    def merged(self) -> bool:
        return self.inner is not None


def _show(value: Any) -> str:
    if value is ABSENT:
        return "(absent)"
    return json.dumps(value, ensure_ascii=False, default=str)


def _yaml(mapping: int = 2, sequence: int = 2, offset: int = 0) -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    # Never re-wrap long scalars: the user's lines should come back as written.
    y.width = 1 << 16
    y.indent(mapping=mapping, sequence=sequence, offset=offset)
    return y


def _load(text: str) -> Any:
    from ruamel.yaml.error import YAMLError

    from shardpy.yamlsafe import YamlTooLarge, load

    try:
        return load(text, _yaml())
    except YamlTooLarge as exc:
        raise _NotMergeable(f"refused YAML ({exc.message})") from exc
    except RecursionError as exc:
        # yamlsafe bounds nesting before the parser runs; this only backs it up (a merge
        # driver must answer, never print a traceback: tests/security/test_driver_shapes.py).
        raise _NotMergeable("refused YAML (nested too deep)") from exc
    except YAMLError as exc:
        raise _NotMergeable(
            f"not valid YAML ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})"
        ) from exc


def _dump(y: Any, data: Any) -> str:
    buf = io.StringIO()
    y.dump(data, buf)
    return buf.getvalue()


class _NotMergeable(Exception):
    pass


def _mapping(text: str | None, side: str) -> Any:
    from ruamel.yaml.comments import CommentedMap

    if text is None or not text.strip():
        return CommentedMap()
    try:
        data = _load(text)
    except _NotMergeable as exc:
        raise _NotMergeable(f"{side} frontmatter is {exc}") from exc
    if data is None:
        return CommentedMap()
    if not isinstance(data, Mapping):
        raise _NotMergeable(f"{side} frontmatter is not a YAML mapping")
    return data


def _formatter(user: str, shard: str) -> Any:
    """A dumper whose indentation reproduces the user's block (and the shard's, if possible).

    ruamel.yaml has one indentation setting per dumper, so we try the
    user's guessed style and the common ones, and keep the first that gives
    the user's text back unchanged.
    """
    from ruamel.yaml.util import load_yaml_guess_indent

    candidates: list[tuple[int, int, int]] = []
    # Guessing is best effort; the fixed candidates below still apply.
    with contextlib.suppress(Exception):
        _, ind, bsi = load_yaml_guess_indent(user)
        if isinstance(ind, int) and isinstance(bsi, int):
            candidates.append((ind, ind, bsi))
    candidates += [(2, 2, 0), (2, 4, 2), (4, 4, 2), (4, 4, 0), (2, 4, 0), (4, 6, 4)]
    user_ok: list[tuple[int, int, int]] = []
    for cand in candidates:
        y = _yaml(*cand)
        if not _round_trips(y, user):
            continue
        user_ok.append(cand)
        if shard.strip() and _round_trips(y, shard):
            return y
    return _yaml(*(user_ok[0] if user_ok else candidates[0]))


def _round_trips(y: Any, text: str) -> bool:
    # Any failure only means this dumper is not the right one for the text.
    try:
        return bool(_dump(y, y.load(text)) == text)
    except Exception:
        return False


def merge_frontmatter(base: str | None, user: str, shard: str) -> FrontmatterMerge:
    """Merge three frontmatter YAML texts (the inner text, without ``---`` lines).

    ``base`` is None when the base note had no frontmatter (merged as an
    empty mapping, so keys both sides added are compared with each other).
    """
    from ruamel.yaml.comments import CommentedMap

    try:
        bm = _mapping(base, "base")
        sm = _mapping(shard, "shard")
        _mapping(user, "user")
    except _NotMergeable as exc:
        return FrontmatterMerge(inner=None, fallback_reason=str(exc))

    y = _formatter(user, shard)
    um = y.load(user) if user.strip() else None
    if um is None:
        um = CommentedMap()
    conflicts: list[KeyConflict] = []
    changed: list[str] = []
    _merge_map(bm, um, sm, "", conflicts, changed)
    if not changed:
        return FrontmatterMerge(inner=user, conflicts=conflicts)
    inner = _dump(y, um) if len(um) else ""
    return FrontmatterMerge(inner=inner, conflicts=conflicts, changed_keys=changed)


def _merge_map(
    bm: Any, um: Any, sm: Any, prefix: str, conflicts: list[KeyConflict], changed: list[str]
) -> None:
    keys: list[Any] = list(um.keys())
    keys += [k for k in sm if k not in um]
    keys += [k for k in bm if k not in um and k not in sm]
    for k in keys:
        path = f"{prefix}{k}"
        b = bm.get(k, ABSENT)
        u = um.get(k, ABSENT)
        s = sm.get(k, ABSENT)
        if _same(s, b) or _same(u, s):
            continue
        if _same(u, b):
            _take_shard(um, sm, k, s)
            changed.append(path)
            continue
        if isinstance(u, Mapping) and isinstance(s, Mapping) and (b is ABSENT or isinstance(b, Mapping)):
            _merge_map({} if b is ABSENT else b, u, s, path + ".", conflicts, changed)
            continue
        if _scalar_list(u) and _scalar_list(s) and (b is ABSENT or _scalar_list(b)):
            if _set_merge([] if b is ABSENT else b, u, s):
                changed.append(path)
            continue
        conflicts.append(KeyConflict(key=path, base=_plain(b), user=_plain(u), shard=_plain(s)))


def _take_shard(um: Any, sm: Any, key: Any, value: Any) -> None:
    if value is ABSENT:
        del um[key]
        return
    if key in um:
        um[key] = value
        return
    # A new key goes after the nearest key that precedes it in the shard's order.
    order = list(sm.keys())
    pos = 0
    for prev in reversed(order[: order.index(key)]):
        if prev in um:
            pos = list(um.keys()).index(prev) + 1
            break
    um.insert(pos, key, value)


def _set_merge(base: Any, user: Any, shard: Any) -> bool:
    """Three-way set merge of scalar lists, in place on the user's sequence; True if it changed."""
    bk = {_norm(x) for x in base}
    sk = {_norm(x) for x in shard}
    uk = {_norm(x) for x in user}
    removed = bk - sk
    changed = False
    for idx in reversed(range(len(user))):
        if _norm(user[idx]) in removed:
            del user[idx]
            changed = True
    seen: set[Hashable] = set()
    for item in shard:
        key = _norm(item)
        if key not in bk and key not in uk and key not in seen:
            user.append(item)
            seen.add(key)
            changed = True
    return changed


def _scalar_list(value: Any) -> bool:
    return isinstance(value, list) and all(not isinstance(x, (list, Mapping)) for x in value)


def _same(a: Any, b: Any) -> bool:
    return _norm(a) == _norm(b)


def _norm(value: Any) -> Hashable:
    """A hashable, type-tagged form of a YAML value for comparison (1, 1.0, True and "1" differ)."""
    if value is ABSENT:
        return ("absent",)
    if value is None:
        return ("null",)
    if isinstance(value, bool) or type(value).__name__ == "ScalarBoolean":
        return ("bool", bool(value))
    if isinstance(value, int):
        return ("int", int(value))
    if isinstance(value, float):
        f = float(value)
        return ("float", "nan" if math.isnan(f) else f)
    if isinstance(value, str):
        return ("str", str(value))
    if isinstance(value, _dt.datetime):
        return ("datetime", value.isoformat())
    if isinstance(value, _dt.date):
        return ("date", value.isoformat())
    if isinstance(value, Mapping):
        items = [(_norm(k), _norm(v)) for k, v in value.items()]
        return ("map", tuple(sorted(items, key=repr)))
    if isinstance(value, (list, tuple)):
        return ("seq", tuple(_norm(x) for x in value))
    return ("other", type(value).__name__, repr(value))


def _plain(value: Any) -> Any:
    """ruamel's round-trip types as plain Python data (for reports)."""
    if value is ABSENT or value is None:
        return value
    if isinstance(value, bool) or type(value).__name__ == "ScalarBoolean":
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, Mapping):
        return {
            (_plain(k) if isinstance(k, (str, int, float, bool)) else str(k)): _plain(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [_plain(x) for x in value]
    return value


def _comment_start(line: str) -> int:
    """Where a YAML comment starts on ``line`` (a ``#`` first or after a blank), else -1.

    Textual: a ``#`` after a blank inside a quoted or block scalar counts too. Such a
    "comment" can only make :func:`comments_kept` say no (a conflict), never hide one.
    """
    for i, ch in enumerate(line):
        if ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return i
    return -1


def _comments(block: str) -> Counter[str]:
    out: Counter[str] = Counter()
    for line in block.split("\n"):
        i = _comment_start(line)
        if i >= 0:
            out[line[i:].rstrip()] += 1
    return out


def comments_kept(base: str, user: str, shard: str, merged: str) -> bool:
    """Each comment of the merged YAML text appears as often as a three-way merge says.

    A key-level merge starts from one side's document, so a comment only the other side
    added (``title: T  # the title``) or removed would vanish without a word
    (issue 24 item 11; tests/security/test_driver_shapes.py). Per comment text: a count
    only one side changed takes that side's; both changed differently is never kept.
    """
    counts = [_comments(t) for t in (base, user, shard, merged)]
    for text in set().union(*counts):
        b, u, s, m = (c[text] for c in counts)
        if u != b and s != b and u != s:
            return False
        if m != (u if u != b else s):
            return False
    return True


def same_data(a: str, b: str) -> bool:
    """The two YAML texts hold the same data (False when either is not a mergeable mapping)."""
    try:
        return _norm(_mapping(a, "a")) == _norm(_mapping(b, "b"))
    except _NotMergeable:
        return False
