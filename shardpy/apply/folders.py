"""The batched apply's folder descriptors: each vault folder a run writes into, opened once.

Writer threads write by name relative to these descriptors (``fsutil.atomic_write``
with ``folder_fd``), so no path is resolved again per note and a folder
swapped for a link meanwhile cannot redirect a write.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
from pathlib import Path

from shardpy import fsutil
from shardpy.fsutil import make_parents


class Folders:
    """Descriptors of the vault folders a run writes into, opened once each, never through a link.

    Each folder is reached from the vault root one component at a time with
    ``O_NOFOLLOW``, so a symbolic link on the way is refused (as
    ``fsutil.safe_target`` does) and later writes cannot be redirected by a
    folder swapped for a link. Missing folders are created (and reported, for
    abandon). Only the applying thread opens folders; writer threads use the
    descriptors, which stay open until ``close``.
    """

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.fds: dict[str, int] = {"": os.open(vault, os.O_RDONLY | os.O_DIRECTORY)}
        self.devices: dict[int, int] = {}  # descriptor -> st_dev (which filesystem rules its renames)
        try:
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        except (OSError, ValueError):
            soft = 1024
        # Leave room for the writers' files, sqlite and the rest; beyond it, writes take the path way.
        self.limit = max(0, (soft if soft > 0 else 1024) - 256)

    def fd(self, folder: str) -> tuple[int | None, list[str]]:
        """(descriptor of ``folder`` or None when too many are open, folders created on the way)."""
        found = self.fds.get(folder)
        if found is not None:
            return found, []
        if len(self.fds) >= self.limit:
            return None, make_parents(self.vault, f"{folder}/x") if folder else []
        parent, _, name = folder.rpartition("/")
        parent_fd, made = self.fd(parent)
        if parent_fd is None:
            return None, [*made, *make_parents(self.vault, f"{folder}/x")]
        try:
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
        except FileNotFoundError:
            os.mkdir(name, dir_fd=parent_fd)
            made.append(folder)
            fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise fsutil.symlink_refused(folder) from None
            if exc.errno == errno.ENOTDIR:
                raise fsutil.not_a_directory(
                    folder, f"Cannot write into {folder}: it is not a directory"
                ) from None
            raise
        self.fds[folder] = fd
        return fd, made

    def device(self, fd: int) -> int:
        found = self.devices.get(fd)
        if found is None:
            found = self.devices[fd] = os.fstat(fd).st_dev
        return found

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()
