"""One writer per vault at a time.

The lock is an advisory ``flock`` on the vault directory itself: the kernel
drops it when the process dies, so a crash never leaves a stale lock, and
no lock file is ever created (a refused or failed command leaves nothing).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.fsutil import flock_within


@contextlib.contextmanager
def vault_lock(vault_root: Path, *, command: str = "shardpy", wait: float = 0.0) -> Iterator[None]:
    """Hold the vault's write lock for the duration of the block; raise
    ``VAULT_LOCKED`` when another process holds it: at once by default, after
    ``wait`` seconds of retrying otherwise (the MCP server's short writes
    queue behind each other instead of failing)."""
    fd = os.open(vault_root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        if not flock_within(fd, wait):
            raise ShardpyError(
                "VAULT_LOCKED",
                f"Another shardpy command is writing to this vault (this one was: {command})",
                "Wait for it to finish, then run this command again.",
            )
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
