"""Download cache: archives stored by content hash, plus a small index.

Layout under the cache dir (``SHARDPY_CACHE_DIR`` or the platform's user
cache dir for "shardpy")::

    archives/<sha256>.tar.gz   the downloaded bytes, verified on every read
    archives/index.json        key -> {sha256, etag?, last_modified?}
    trees/<sha256>/            that archive extracted (read-only), so the next
                               command that needs the same release does not
                               extract it again
    trees/<sha256>.json        {tree: tree hash recorded at extraction, root}

Keys name what was downloaded: ``github:<api>/<owner>/<repo>@<commit>``
(immutable: a hit skips the network) or ``url:<url>`` (revalidated with
the stored ETag). Every write is a temp file then a rename, and the cache
is best effort: when it cannot be written, downloads go to a temp dir.

An extracted tree is keyed by the archive's content hash, so it can only
ever hold that archive's files. It is checked against the tree hash
recorded when it was extracted each time it is reused (a tree changed or
damaged since is removed and extracted again) and its files and folders
are read-only, so a program that writes into a source tree by mistake
fails instead of changing what the next command installs.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any

from shardpy.cachedir import cache_dir
from shardpy.errors import ShardpyError
from shardpy.fsutil import atomic_write, sha256_file
from shardpy.sources.archive import safe_extract, tree_hash
from shardpy.sources.model import remove_tree

_SHA_RE = re.compile(r"^[0-9a-f]{64}$")
__all__ = ["ArchiveCache", "cache_dir"]


class ArchiveCache:
    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_dir()) / "archives"

    @property
    def index_path(self) -> Path:
        return self.root / "index.json"

    def archive_path(self, sha256: str) -> Path:
        return self.root / f"{sha256}.tar.gz"

    def _read_index(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(self.index_path.read_text("utf-8"))
        except (OSError, ValueError):
            return {}
        entries = data.get("entries") if isinstance(data, dict) else None
        return {k: v for k, v in entries.items() if isinstance(v, dict)} if isinstance(entries, dict) else {}

    def entry(self, key: str) -> dict[str, Any] | None:
        return self._read_index().get(key)

    def lookup(self, key: str) -> tuple[Path, dict[str, Any]] | None:
        """The cached archive for ``key`` when present and intact (a corrupt one is dropped)."""
        entry = self.entry(key)
        sha = entry.get("sha256") if entry else None
        if not isinstance(sha, str) or not _SHA_RE.match(sha) or entry is None:
            return None
        path = self.archive_path(sha)
        try:
            actual = sha256_file(path)
        except OSError:
            return None
        if actual != sha:
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        return path, entry

    def temp_file(self) -> Path:
        """A fresh file for a download: in the cache when writable (same fs for the rename), else /tmp."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fd, name = tempfile.mkstemp(prefix=".download-", suffix=".part", dir=self.root)
        except OSError:
            fd, name = tempfile.mkstemp(prefix="shardpy-download-", suffix=".part")
        os.close(fd)
        return Path(name)

    def store(self, temp: Path, sha256: str, key: str | None, **meta: Any) -> Path:
        """Move a finished download into place and index it; returns where the archive now is.

        When the cache cannot take it the temp file is returned as is; the
        caller then removes it after use (see :meth:`is_cached`).
        """
        target = self.archive_path(sha256)
        try:
            if temp.parent != self.root:
                return temp
            os.replace(temp, target)
        except OSError:
            return temp
        if key is not None:
            self.record(key, sha256, **meta)
        return target

    def is_cached(self, path: Path) -> bool:
        return path.parent == self.root and _SHA_RE.match(path.name.removesuffix(".tar.gz")) is not None

    def record(self, key: str, sha256: str, **meta: Any) -> None:
        entries = self._read_index()
        entries[key] = {"sha256": sha256, **{k: v for k, v in meta.items() if v is not None}}
        payload = json.dumps({"version": 1, "entries": entries}, indent=1, sort_keys=True).encode()
        with contextlib.suppress(OSError):  # best effort: a cache
            _write_record(self.root, self.index_path.name, payload)


class TreeCache:
    """Extracted archives, keyed by the archive's sha256 (see the module doc)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = (root or cache_dir()) / "trees"

    def _paths(self, sha256: str) -> tuple[Path, Path]:
        if not _SHA_RE.match(sha256):
            raise ValueError(f"not a sha256: {sha256!r}")
        return self.root / sha256, self.root / f"{sha256}.json"

    def lookup(self, sha256: str) -> Path | None:
        """The source root of the extracted ``sha256`` archive when present and
        intact; a damaged or incomplete tree is removed (None is returned)."""
        folder, meta_path = self._paths(sha256)
        try:
            meta = json.loads(meta_path.read_text("utf-8"))
            recorded, rel = meta["tree"], meta["root"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        root = (folder / rel) if isinstance(rel, str) and rel and ".." not in rel.split("/") else None
        if root is None or not root.is_dir() or not isinstance(recorded, str):
            self.drop(sha256)
            return None
        if tree_hash(folder) != recorded:
            self.drop(sha256)
            return None
        return root

    def extract(self, archive: Path, sha256: str) -> Path | None:
        """Extract ``archive`` (already verified to hash to ``sha256``) into the
        cache; its source root, or None when the cache cannot be written (the
        caller extracts to a temp dir). Refusals of the archive itself
        (unsafe or invalid entries) propagate, leaving nothing behind."""
        folder, meta_path = self._paths(sha256)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix=".extract-", dir=self.root))
        except OSError:
            return None
        try:
            root = safe_extract(archive, work / "src")
            rel = root.relative_to(work).as_posix()
            payload = json.dumps({"tree": tree_hash(work), "root": rel}).encode()
            _make_read_only(work)
            if folder.exists():  # a tree without its record (an interrupted or raced extraction)
                found = self.lookup(sha256)
                if found is not None:
                    remove_tree(work)
                    return found
                self.drop(sha256)
            # The record first: a tree in place always has one (a record without
            # its tree is dropped by lookup).
            _write_record(self.root, meta_path.name, payload)
            os.rename(work, folder)
        except OSError:
            remove_tree(work)
            return self.lookup(sha256)  # another process put the same tree in place meanwhile, or None
        except BaseException:
            remove_tree(work)
            raise
        return folder / rel

    def drop(self, sha256: str) -> None:
        folder, meta_path = self._paths(sha256)
        with contextlib.suppress(OSError):
            meta_path.unlink()
        remove_tree(folder)


def _write_record(root: Path, name: str, payload: bytes) -> None:
    """A cache record written by fsutil's one atomic writer (issue 27), not flushed (a cache).

    A link or a read-only file in its place (which fsutil refuses with a typed error) is an
    OSError here, so the cache's own fallbacks apply.
    """
    try:
        atomic_write(root, name, payload, durable=False)
    except ShardpyError as exc:
        raise OSError(exc.message) from exc


def _make_read_only(top: Path) -> None:
    """Files 0444, folders 0555 (deepest first: a folder stays writable while its children change)."""
    for dirpath, dirnames, filenames in os.walk(top, topdown=False):
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o444)
        for name in dirnames:
            os.chmod(os.path.join(dirpath, name), 0o555)
