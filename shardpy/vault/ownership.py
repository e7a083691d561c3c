"""What each produced file is now, decided by hashes (CONTRACT §1)."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from shardpy.fsutil import READ_FLAGS, read_regular, sha256_bytes, sha256_stream
from shardpy.vault.state import FileRecord

Live = Literal["managed", "modified", "volatile", "missing"]


@dataclass(frozen=True)
class Drift:
    path: str
    live: Live
    disk_hash: str | None
    unreadable: bool = False  # the file is there but cannot be read (permissions, I/O error)


def classify(record: FileRecord, disk_hash: str | None) -> Live:
    if disk_hash is None:
        return "missing"
    if record.volatile:
        return "volatile"
    return "managed" if record.holds(disk_hash) else "modified"


# Threads pay off only for big files (hashing releases the GIL); for the
# typical vault of small notes they cost several times more than they save.
PARALLEL_BYTES = 32 * 1024 * 1024


def disk_hash(path: Path) -> str | None:
    """sha256 of the file at ``path``, None when there is none (or a folder). A symbolic link is
    never followed: its hash is its link text's, the text being a link's content (a copier
    template's links are recorded so; tests/hardening/test_copier_links.py)."""
    try:
        fd = os.open(path, READ_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        return sha256_bytes(os.fsencode(os.readlink(path)))
    mode = os.fstat(fd).st_mode
    if stat.S_ISDIR(mode):
        os.close(fd)
        return None
    if not stat.S_ISREG(mode):  # a FIFO, a socket, a device: never read (a FIFO blocked status)
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    with open(fd, "rb") as fh:
        return sha256_stream(fh)


def disk_bytes(path: Path) -> bytes:
    """The bytes of the file at ``path``; a link's link text (never followed), as :func:`disk_hash`."""
    if os.path.islink(path):
        return os.fsencode(os.readlink(path))
    return read_regular(path)


def _total_size(root: Path, paths: list[str]) -> int:
    total = 0
    for p in paths:
        try:
            total += os.stat(root / p).st_size
        except OSError:
            continue
        if total > PARALLEL_BYTES:
            break
    return total


def hash_paths(root: Path, paths: Iterable[str]) -> dict[str, str | None]:
    """Hash many files: in a thread pool when there is a lot to read."""
    ordered = list(paths)
    if _total_size(root, ordered) <= PARALLEL_BYTES:
        return {p: disk_hash(root / p) for p in ordered}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=8) as pool:
        hashes = list(pool.map(lambda p: disk_hash(root / p), ordered))
    return dict(zip(ordered, hashes, strict=True))


def scan(root: Path, files: dict[str, FileRecord]) -> dict[str, Drift]:
    """Each produced file's drift; a file that cannot be read counts as modified (it is not what
    the shard wrote, as far as anyone can tell) and says so, instead of failing the whole scan.
    A file that differs only by the CRLF line ends git's ``core.autocrlf`` checks out is not
    modified (:func:`checked_out_as_written`)."""
    try:
        hashes = hash_paths(root, files)
        out = {p: Drift(p, classify(rec, hashes[p]), hashes[p]) for p, rec in files.items()}
    except OSError:  # one file unreadable (a FIFO, a permission): each read on its own
        out = {p: _drift_of(root, p, rec) for p, rec in files.items()}
    # Both ways: one unreadable file made every CRLF checkout "modified" (helper-found).
    for p, d in out.items():
        if d.live == "modified" and not d.unreadable and checked_out_as_written(root / p, files[p]):
            out[p] = Drift(p, "managed", d.disk_hash)
    return out


def checked_out_as_written(path: Path, record: FileRecord) -> bool:
    """The file is what shardpy wrote but for CRLF line ends (notes/written.lf_form)."""
    from shardpy.notes.written import lf_form

    try:
        lf = lf_form(disk_bytes(path))
    except OSError:
        return False
    return lf is not None and record.holds(sha256_bytes(lf))


def _drift_of(root: Path, path: str, record: FileRecord) -> Drift:
    try:
        found = disk_hash(root / path)
    except OSError:
        return Drift(path, "modified", None, unreadable=True)
    return Drift(path, classify(record, found), found)
