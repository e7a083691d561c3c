"""Which notes ``shardpy purge --older-than DAYS`` deletes (issue 27: plans live in ``plan/``).

Pure over what the caller read (:func:`shardpy.sync.deletes.plan_purge`: the tracked
notes' texts): a note is purged when it is disabled (``disabled: true``, docs/GIT.md,
"Deletes") and its ``disabled_at`` lies at or before the cutoff; a disabled note without
a readable time counts as disabled since the epoch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from shardpy.vault.disabled import DISABLED, DISABLED_AT, is_disabled

__all__ = ["PurgePlan", "disabled_since", "plan_purge"]


@dataclass
class PurgePlan:
    vault: str  # the vault's folder (plan/ holds no path objects: tests/test_one_writer.py)
    days: float
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"vault": self.vault, "older_than_days": self.days, "notes": self.notes}


def disabled_since(text: str) -> datetime | None:
    """When the note was disabled (None: not disabled); a disabled note without a time: epoch."""
    from shardpy.merge.frontmatter import split_frontmatter
    from shardpy.merge.revisions import load_mapping

    if f"{DISABLED}:" not in text:
        return None
    fm, _ = split_frontmatter(text.replace("\r\n", "\n"))
    data = load_mapping(fm.inner) if fm is not None else None
    if not data or not is_disabled(data):
        return None
    when = data.get(DISABLED_AT)
    if not isinstance(when, datetime):
        try:  # a date or text a hand wrote: its ISO form (tests/sync/test_deletes.py)
            when = datetime.fromisoformat(str(when).replace("Z", "+00:00"))
        except ValueError:
            return datetime.fromtimestamp(0, UTC)
    # A time without a zone is UTC: compared with the aware cutoff it would raise.
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def plan_purge(vault: str, days: float, notes: Iterable[tuple[str, str]], now: datetime) -> PurgePlan:
    """The notes of ``notes`` (vault-relative path, text) disabled more than ``days`` before ``now``."""
    plan = PurgePlan(vault, days)
    try:
        cutoff = now - timedelta(days=days)
    except OverflowError:  # `--older-than inf` (or 1e309): no note was disabled that long ago
        return plan
    for rel, text in notes:
        since = disabled_since(text)
        if since is not None and since <= cutoff:
            plan.notes.append(rel)
    return plan
