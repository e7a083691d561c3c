"""What the last update check saw, for status's "update available" hint.

An applied update records it in the vault (``.shardmind/update-check.json``,
inside its transaction). A dry run, or an update that found the vault up to
date, writes nothing into the vault; what it saw is kept in the user's cache
folder (``update-checks.json``, keyed by the vault's path) instead.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from shardpy.cachedir import cache_dir
from shardpy.errors import ShardpyError
from shardpy.fsutil import atomic_write
from shardpy.vault import layout

_FILE = "update-checks.json"


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(vault: Path, latest: str, checked_at: str) -> None:
    """Record a sighting outside the vault (best effort: a cache, never an error)."""
    path = cache_dir() / _FILE
    seen = _read(path)
    seen[str(vault.resolve())] = {"checked_at": checked_at, "latest": latest}
    with contextlib.suppress(OSError, ShardpyError):  # a cache: a lost sighting is only a re-check
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path.parent, path.name, json.dumps(seen, indent=1).encode("utf-8"), durable=False)


def last_check(vault: Path) -> dict[str, Any] | None:
    """The newer of the vault's own record and the cache's sighting."""
    own = _read(vault / layout.UPDATE_CHECK) or None
    sighted = _read(cache_dir() / _FILE).get(str(vault.resolve()))
    candidates = [c for c in (own, sighted) if isinstance(c, dict) and c.get("latest")]
    return max(candidates, key=lambda c: str(c.get("checked_at", "")), default=None)
