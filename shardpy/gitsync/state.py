"""Merging two machines' ``.shardmind/state.json`` entry by entry.

state.json is written deterministically (sorted keys, fixed indentation, no
wall-clock field that changes unless the content does), so two machines that
ran the same update hold identical bytes and git never calls this. When they
did different things, the two states are merged key by key against the
common ancestor:

* ``files``, ``modules``, ``values`` and ``hooks`` entry by entry: an entry
  only one side changed (added, changed, removed) takes that side; both
  machines' knowledge is kept;
* an entry (or any other key: ``version``, ``resolved_commit``…) both sides
  changed differently is a real disagreement: ours is kept and the merge is
  reported as a conflict — the file stays valid JSON, never markers;
* ``installed_at``, ``updated_at`` and ``engine`` changed differently on
  both sides take the later value: a clock or a shardpy version is not a
  disagreement about the vault.

The result is serialised as :meth:`shardpy.vault.state.State.to_json` does,
so it is the same bytes whichever side is ours.
"""

from __future__ import annotations

import json
from typing import Any

from shardpy.gitsync.result import FileKind, FileMerge

_ENTRY_MAPS = frozenset({"files", "modules", "values", "hooks"})
_LATEST = frozenset({"installed_at", "updated_at", "engine"})


class _Absent:
    def __repr__(self) -> str:
        return "(absent)"


_ABSENT: Any = _Absent()


def _load(data: bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(data.decode("utf-8")) if data.strip() else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None
    return value if isinstance(value, dict) else None


def _pick(key: str, b: Any, o: Any, t: Any, disagree: list[str]) -> Any:
    if o == t or t == b:
        return o
    if o == b:
        return t
    if key.split(".")[0] in _LATEST and isinstance(o, str) and isinstance(t, str):
        return max(o, t)
    disagree.append(f"{key}: ours {_show(o)}, theirs {_show(t)}")
    return o


def _show(value: Any) -> str:
    return "(removed)" if value is _ABSENT else json.dumps(value, sort_keys=True, default=str)[:120]


def _entries(key: str, b: Any, o: Any, t: Any, disagree: list[str]) -> Any:
    if not all(isinstance(x, dict) or x is _ABSENT for x in (b, o, t)) or _ABSENT in (o, t):
        return _pick(key, b, o, t, disagree)
    base = {} if b is _ABSENT else b
    out: dict[str, Any] = {}
    for k in sorted(set(base) | set(o) | set(t)):
        v = _pick(f"{key}.{k}", base.get(k, _ABSENT), o.get(k, _ABSENT), t.get(k, _ABSENT), disagree)
        if v is not _ABSENT:
            out[k] = v
    return out


def _render(merged: dict[str, Any]) -> bytes:
    from shardpy.errors import ShardpyError
    from shardpy.vault.state import parse_state

    text = json.dumps(merged, ensure_ascii=False)
    try:
        return parse_state(text).to_json().encode("utf-8")
    except ShardpyError:
        return (json.dumps(merged, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


def _derive_values_hash(merged: dict[str, Any], o: dict[str, Any], t: dict[str, Any]) -> None:
    """``values_hash`` follows ``values``: the side's hash whose values won, else recomputed."""
    from shardpy.vault.state import values_hash

    values = merged.get("values", _ABSENT)
    for side in (o, t):
        if values == side.get("values", _ABSENT):
            if "values_hash" in side:
                merged["values_hash"] = side["values_hash"]
            return
    if isinstance(values, dict):
        merged["values_hash"] = values_hash(values)


def merge_state(base: bytes, ours: bytes, theirs: bytes) -> FileMerge:
    b, o, t = _load(base) or {}, _load(ours), _load(theirs)
    if o is None or t is None:
        side = "ours" if o is None else "theirs"
        return FileMerge(
            FileKind.STATE, ours, False, [f"state.json ({side}) is not a JSON object: kept ours"]
        )
    disagree: list[str] = []
    merged: dict[str, Any] = {}
    for key in sorted((set(b) | set(o) | set(t)) - {"values_hash"}):
        bv, ov, tv = b.get(key, _ABSENT), o.get(key, _ABSENT), t.get(key, _ABSENT)
        merge = _entries if key in _ENTRY_MAPS else _pick
        value = merge(key, bv, ov, tv, disagree)
        if value is not _ABSENT:
            merged[key] = value
    _derive_values_hash(merged, o, t)
    messages = [f"state.json: both machines changed {d}; kept ours" for d in disagree]
    return FileMerge(FileKind.STATE, _render(merged), not disagree, messages)
