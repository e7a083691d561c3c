"""Writing from the server: one memory (with the memories it supersedes) or one work note.

The plan is ``plan/memorywrite.py``'s (pure); every write is one transaction in the write
session (``apply/session.py``), waiting up to :data:`LOCK_WAIT` behind another writer: a new
note is created only if its path is still free once the lock is held (so two servers writing
the same title never both succeed and never tear a file), and a superseded memory is rewritten
only if it still holds the bytes the plan read.
"""

from __future__ import annotations

from pathlib import Path

from shardpy.apply.session import session
from shardpy.fsutil import read_regular
from shardpy.plan.memorywrite import Rewrite, WritePlan, mark_superseded, sha, write_ops

# The plan's names, kept importable here for the tools that build one.
__all__ = ["LOCK_WAIT", "Rewrite", "VaultWrites", "WritePlan", "apply_plan", "mark_superseded", "sha"]

LOCK_WAIT = 10.0  # seconds a write queues behind another before VAULT_LOCKED


class VaultWrites:
    """The vault as ``plan.memorywrite.write_ops`` sees it (read with the lock held)."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault

    def taken(self, path: str) -> bool:
        target = self.vault / path
        return target.exists() or target.is_symlink()

    def current(self, path: str) -> bytes:
        try:
            return read_regular(self.vault / path)
        except OSError:
            return b""


def apply_plan(vault: Path, plan: WritePlan) -> None:
    """Apply ``plan`` atomically; refuse (writing nothing) when the vault moved under it."""
    with session(vault, f"serve {plan.label}", wait=LOCK_WAIT) as writer:
        writer.run(write_ops(plan, VaultWrites(vault)), label=f"serve-{plan.label}")
