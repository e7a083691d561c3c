"""The vault as the planners see it: file hashes computed once, in parallel."""

from __future__ import annotations

from pathlib import Path

from shardpy.fsutil import sha256_bytes, sha256_file
from shardpy.vault.ownership import hash_paths


class VaultDisk:
    """The vault as the planner sees it: hashes computed once, in parallel."""

    def __init__(self, root: Path, paths: set[str], overlay: dict[str, bytes] | None = None) -> None:
        """``overlay``: paths the vault holds in another form (a clone's raw
        template for its rendered file), seen as these bytes."""
        self.root = root
        self.overlay = overlay or {}
        self._hashes = hash_paths(root, sorted(paths - set(self.overlay)))
        self._hashes.update((p, sha256_bytes(data)) for p, data in self.overlay.items())

    def hash(self, path: str) -> str | None:
        if path not in self._hashes:
            self._hashes[path] = sha256_file(self.root / path)
        return self._hashes[path]

    def read(self, path: str) -> bytes:
        if path in self.overlay:
            return self.overlay[path]
        return (self.root / path).read_bytes()
