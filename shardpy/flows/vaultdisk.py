"""The vault as the planners see it: file hashes computed once, in parallel."""

from __future__ import annotations

from pathlib import Path

from shardpy.fsutil import sha256_file
from shardpy.vault.ownership import hash_paths


class VaultDisk:
    """The vault as the planner sees it: hashes computed once, in parallel."""

    def __init__(self, root: Path, paths: set[str]) -> None:
        self.root = root
        self._hashes = hash_paths(root, sorted(paths))

    def hash(self, path: str) -> str | None:
        if path not in self._hashes:
            self._hashes[path] = sha256_file(self.root / path)
        return self._hashes[path]

    def read(self, path: str) -> bytes:
        return (self.root / path).read_bytes()
