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
import time
from collections.abc import Iterator
from pathlib import Path

from shardpy.errors import ShardpyError


@contextlib.contextmanager
def vault_lock(vault_root: Path, *, command: str = "shardpy", wait: float = 0.0) -> Iterator[None]:
    """Hold the vault's write lock for the duration of the block; raise
    ``VAULT_LOCKED`` when another process holds it: at once by default, after
    ``wait`` seconds of retrying otherwise (the MCP server's short writes
    queue behind each other instead of failing)."""
    fd = os.open(vault_root, os.O_RDONLY | os.O_DIRECTORY)
    deadline = time.monotonic() + wait
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
                if time.monotonic() < deadline:
                    time.sleep(0.01)
                    continue
                raise ShardpyError(
                    "VAULT_LOCKED",
                    f"Another shardpy command is writing to this vault (this one was: {command})",
                    "Wait for it to finish, then run this command again.",
                ) from None
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
