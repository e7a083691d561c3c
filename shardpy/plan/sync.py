"""What a ``shardpy sync`` round would do (issue 27: plans live in ``plan/``; issue 30).

Pure: the record :func:`shardpy.sync.plan.plan_sync` fills from git (the vault's
repository, branch, remotes, this machine) and the round carries; nothing here reads or
writes. The round records in it what it changed (``changes``) and this machine's records
as it read them under the vault lock (``records``).
"""

from __future__ import annotations

from shardpy.record import Record, field

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any

    from shardpy.gitsync.repo import Repo

__all__ = ["SyncPlan"]


class SyncPlan(Record):
    """What a sync round would do in one vault."""

    vault: str  # the vault's folder (plan/ holds no path objects: tests/test_one_writer.py)
    repo: Repo
    branch: str
    machine: str
    host: str
    prefix: str  # the vault's folder in the repository ("" at its top, else ending in "/")
    remotes: list[str]
    changes: list[str]  # vault-relative paths a commit would take (dry run), or took (a round)
    setup_needed: bool
    push: bool = True
    dry_run: bool = False
    ahead_behind: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    # This machine's records as the round read them under the vault lock (sync/records.snapshot).
    records: dict[str, str] = field(default_factory=dict)
    # Repository paths of changed files the round's commit left out: this account may not read
    # them (sync/access.py); a merge git refuses over one is said to be about it.
    unreadable: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "vault": self.vault,
            "branch": self.branch,
            "machine": self.machine,
            "host": self.host,
            "remotes": self.remotes,
            "changes": self.changes,
            "setup_needed": self.setup_needed,
            "push": self.push,
            "dry_run": self.dry_run,
            "ahead_behind": {
                r: (None if ab is None else {"ahead": ab[0], "behind": ab[1]})
                for r, ab in self.ahead_behind.items()
            },
        }
