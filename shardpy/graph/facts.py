"""Facts with validity: keyed observations that supersede, instants, ``as_of``.

A fact is one observation: its text, an optional key (``^[a-z0-9][a-z0-9_.-]*$``) and
its validity interval in epoch milliseconds. ``valid_from`` None means "always" (a
bullet added by hand carries no instant); ``valid_to`` None means live. A fact is
valid at ``t`` when ``valid_from <= t < valid_to`` (seed 003, "Facts change").
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, replace

from shardpy.errors import ShardpyError

KEY = re.compile(r"[a-z0-9][a-z0-9_.-]*")
KEY_MAX = 64
DAY_MS = 86_400_000
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_INSTANT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})")


@dataclass(frozen=True, slots=True)
class Fact:
    text: str
    key: str | None = None
    valid_from: int | None = None
    valid_to: int | None = None

    @property
    def shown(self) -> str:
        """The observation string the reference server's answers carry: ``[key] text`` for a keyed
        fact (so a client sees the key, and export writes the string it would have written)."""
        return f"[{self.key}] {self.text}" if self.key is not None else self.text

    @property
    def live(self) -> bool:
        return self.valid_to is None

    def valid_at(self, t: int) -> bool:
        return (self.valid_from is None or self.valid_from <= t) and (
            self.valid_to is None or t < self.valid_to
        )

    def closed(self, at: int) -> Fact:
        return replace(self, valid_to=at)

    def to_json(self) -> dict[str, object]:
        return {
            "text": self.text,
            "key": self.key,
            "valid_from": iso(self.valid_from) if self.valid_from is not None else None,
            "valid_to": iso(self.valid_to) if self.valid_to is not None else None,
        }


def check_key(key: str) -> str:
    if len(key) > KEY_MAX or not KEY.fullmatch(key):
        shown = key if len(key) <= 64 else key[:64] + "…"
        raise ShardpyError(
            "GRAPH_BAD_KEY",
            f"key {shown!r} is not a fact key",
            f"A key is a slug, ^[a-z0-9][a-z0-9_.-]*$, at most {KEY_MAX} characters (team, role.current).",
        )
    return key


def now_ms() -> int:
    return int(_dt.datetime.now(_dt.UTC).timestamp() * 1000)


def iso(ms: int) -> str:
    moment = _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def day(ms: int) -> str:
    return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).date().isoformat()


def parse_instant(text: str) -> int | None:
    """An ISO instant (``2025-09-13T10:00:00.000Z``, an offset allowed) in epoch ms, or None."""
    if not _INSTANT.fullmatch(text):
        return None
    try:
        moment = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return int(moment.timestamp() * 1000)


def parse_day(text: str) -> int | None:
    """The start (00:00 UTC) of an ISO day, in epoch ms, or None."""
    if not _DATE.fullmatch(text):
        return None
    try:
        d = _dt.date.fromisoformat(text)
    except ValueError:
        return None
    return int(_dt.datetime(d.year, d.month, d.day, tzinfo=_dt.UTC).timestamp() * 1000)


def parse_as_of(text: str, field: str = "as_of") -> int:
    """``as_of`` / ``valid_to``: an ISO instant, or a day meaning the end of that day (UTC):
    "what did we believe on 2025-09-16" includes everything written that day."""
    raw = text.strip()
    at = parse_instant(raw)
    if at is None:
        start = parse_day(raw)
        at = start + DAY_MS - 1 if start is not None else None
    if at is None:
        shown = raw if len(raw) <= 64 else raw[:64] + "…"
        raise ShardpyError(
            "GRAPH_BAD_AS_OF",
            f"{field} {shown!r} is not a date",
            f"Give {field} as a day (2025-09-16) or an ISO instant (2025-09-16T12:00:00Z).",
        )
    return at


def visible_facts(facts: list[Fact], as_of: int | None) -> list[Fact]:
    """The live facts, or those valid at ``as_of``."""
    if as_of is None:
        return [f for f in facts if f.live]
    return [f for f in facts if f.valid_at(as_of)]
