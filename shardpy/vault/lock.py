"""One writer per vault at a time.

The lock is an advisory ``flock`` on the vault directory itself: the kernel
drops it when the process dies, so a crash never leaves a stale lock, and
no lock file is ever created (a refused or failed command leaves nothing).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from shardpy.errors import ShardpyError


@contextlib.contextmanager
def vault_lock(vault_root: Path, *, command: str = "shardpy") -> Iterator[None]:
    """Hold the vault's write lock for the duration of the block; raise
    ``VAULT_LOCKED`` at once (never wait) when another process holds it."""
    fd = os.open(vault_root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ShardpyError(
                    "VAULT_LOCKED",
                    f"Another shardpy command is writing to this vault (this one was: {command})",
                    "Wait for it to finish, then run this command again.",
                ) from None
            raise
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
