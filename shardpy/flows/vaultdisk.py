"""The vault as the planners see it: file hashes computed once, in parallel;
and an install's destination folder (``plan.install.DestView``)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from shardpy.fsutil import safe_target, sha256_bytes, sha256_file
from shardpy.plan.install import EntryKind
from shardpy.vault.files import vault_files
from shardpy.vault.ownership import disk_bytes, disk_hash, hash_paths


class VaultDisk:
    """The vault as the planner sees it (``plan.update.DiskView``): hashes
    computed once, in parallel; everything else read on demand, and only here."""

    def __init__(self, root: Path, paths: set[str], overlay: dict[str, bytes] | None = None) -> None:
        """``overlay``: paths the vault holds in another form (a clone's raw
        template for its rendered file), seen as these bytes."""
        self.root = root
        self.overlay = overlay or {}
        self._hashes = hash_paths(root, sorted(paths - set(self.overlay)))
        self._hashes.update((p, sha256_bytes(data)) for p, data in self.overlay.items())

    def hash(self, path: str) -> str | None:
        if path not in self._hashes:
            self._hashes[path] = disk_hash(self.root / path)
        return self._hashes[path]

    def read(self, path: str) -> bytes:
        if path in self.overlay:
            return self.overlay[path]
        return disk_bytes(self.root / path)  # a link: its text, as its hash (never followed)

    def stored(self, path: str) -> bytes | None:
        target = self.root / path
        return target.read_bytes() if target.is_file() else None

    def exists(self, path: str) -> bool:
        return (self.root / path).exists()

    def files_under(self, folder: str) -> list[str]:
        base = self.root / folder
        if not base.is_dir() or base.is_symlink():
            return []
        return [
            p.relative_to(self.root).as_posix() for p in base.rglob("*") if p.is_file() and not p.is_symlink()
        ]

    def notes(self) -> list[str]:
        return list(vault_files(self.root, suffix=".md"))


class DestDisk:
    """The folder an install writes into, as ``plan.install`` sees it: read here only."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def kind(self, path: str) -> EntryKind:
        target = safe_target(self.root, path)  # PATH_SYMLINK for a link anywhere on the way
        try:
            mode = os.lstat(target).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return "missing"
        if stat.S_ISDIR(mode):
            return "folder"
        return "file" if stat.S_ISREG(mode) else "other"

    def hash(self, path: str) -> str | None:
        return sha256_file(self.root / path)

    def lexists(self, path: str) -> bool:
        return os.path.lexists(self.root / path)
