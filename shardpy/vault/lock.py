"""One writer per vault at a time.

The lock is an advisory ``flock`` on ``.shardmind/lock``: the kernel drops
it when the process dies, so a crash never leaves a stale lock behind. The
file's bytes never change, so taking the lock is not a visible write.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from shardpy.errors import ShardpyError

LOCK_NAME = "lock"


@contextlib.contextmanager
def vault_lock(vault_root: Path, *, command: str = "shardpy") -> Iterator[None]:
    """Hold the vault's write lock for the duration of the block.

    Creates ``.shardmind/`` when needed; raises ``VAULT_LOCKED`` at once
    (never waits) when another process holds the lock.
    """
    sidecar = vault_root / ".shardmind"
    if sidecar.is_symlink():
        raise ShardpyError(
            "PATH_SYMLINK",
            "Refusing to use .shardmind: it is a symbolic link",
            "Replace the link with a real directory.",
            path=".shardmind",
        )
    sidecar.mkdir(parents=True, exist_ok=True)
    fd = os.open(sidecar / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
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
