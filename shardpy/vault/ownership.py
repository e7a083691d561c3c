"""What each produced file is now, decided by hashes (CONTRACT §1)."""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from shardpy.fsutil import sha256_file
from shardpy.vault.state import FileRecord

Live = Literal["managed", "modified", "volatile", "missing"]


@dataclass(frozen=True)
class Drift:
    path: str
    live: Live
    disk_hash: str | None


def classify(record: FileRecord, disk_hash: str | None) -> Live:
    if disk_hash is None:
        return "missing"
    if record.volatile:
        return "volatile"
    if disk_hash == record.rendered_hash or (
        record.installed_hash is not None and disk_hash == record.installed_hash
    ):
        return "managed"
    return "modified"


def hash_paths(root: Path, paths: Iterable[str]) -> dict[str, str | None]:
    """Hash many files in parallel (I/O bound; threads release the GIL)."""
    ordered = list(paths)
    with ThreadPoolExecutor(max_workers=8) as pool:
        hashes = list(pool.map(lambda p: sha256_file(root / p), ordered))
    return dict(zip(ordered, hashes, strict=True))


def scan(root: Path, files: dict[str, FileRecord]) -> dict[str, Drift]:
    hashes = hash_paths(root, files)
    return {p: Drift(p, classify(rec, hashes[p]), hashes[p]) for p, rec in files.items()}
