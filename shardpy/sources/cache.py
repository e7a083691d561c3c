"""Download cache: archives stored by content hash, plus a small index.

Layout under the cache dir (``SHARDPY_CACHE_DIR`` or the platform's user
cache dir for "shardpy")::

    archives/<sha256>.tar.gz   the downloaded bytes, verified on every read
    archives/index.json        key -> {sha256, etag?, last_modified?}

Keys name what was downloaded: ``github:<api>/<owner>/<repo>@<commit>``
(immutable: a hit skips the network) or ``url:<url>`` (revalidated with
the stored ETag). Every write is a temp file then a rename, and the cache
is best effort: when it cannot be written, downloads go to a temp dir.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import tempfile
from pathlib import Path
from typing import Any

from shardpy.cachedir import cache_dir
from shardpy.sources.archive import file_sha256

_SHA_RE = re.compile(r"^[0-9a-f]{64}$")


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
            actual = file_sha256(path)
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
        tmp = self.root / f".index-{secrets.token_hex(4)}.tmp"
        try:
            tmp.write_bytes(payload)
            os.replace(tmp, self.index_path)
        except OSError:
            with contextlib.suppress(OSError):
                tmp.unlink()
