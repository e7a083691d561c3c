"""The vault writes that follow a command's main transaction: managed files
a hook changed put back (CONTRACT §6 invariant 3), and the state re-hashed
after the hooks saved. Each runs as a transaction of its own, journaled like
the main one, so a kill while it writes is rolled back or finished by the
next command instead of leaving a torn ``state.json``.

Their backups serve only that rollback: once committed they are removed, so
these small writes never push a command's own backups out of the last
:data:`~shardpy.apply.transaction.KEEP_BACKUPS`.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path

from shardpy.apply import journalcheck as jc
from shardpy.apply.transaction import Op, Transaction
from shardpy.fsutil import safe_target


def _holds(root: Path, op: Op) -> bool:
    """The vault already holds exactly what ``op`` would write (a regular file, not a link)."""
    try:
        target = safe_target(root, op.path)
        return target.is_file() and not target.is_symlink() and target.read_bytes() == op.data
    except (OSError, ValueError):
        return False


def commit_writes(root: Path, label: str, ops: list[Op]) -> list[str]:
    """Run the writes among ``ops`` that change something, as one transaction;
    the paths written (none: no transaction at all)."""
    needed = [op for op in ops if op.kind != "write" or not _holds(root, op)]
    if not needed:
        return []
    tx = Transaction(root, label)
    tx.run(needed)
    if jc.real_folder(root, tx.backup_dir):  # never through a link
        shutil.rmtree(root / tx.backup_dir, ignore_errors=True)
    return [op.path for op in needed]


def restore_files(root: Path, label: str, files: Mapping[str, bytes]) -> list[str]:
    """Put ``files`` back to these bytes where they differ now; the paths restored."""
    return commit_writes(root, label, [Op.write(path, data) for path, data in files.items()])
