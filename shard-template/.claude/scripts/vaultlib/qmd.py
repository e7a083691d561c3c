"""QMD (local semantic search) — one resolver for the index name, and a
debounced, detached refresh.

Every caller asks `index_name` — the manifest's `qmd_index` when pinned,
otherwise the vault folder's name as a slug — because two callers that
derive the name differently index into one store and search another, and
nothing reports an error. The bootstrap hook repeats the same rule (tested
equal) because hooks run from the shard source, not from the vault.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

DEBOUNCE_SECONDS = 30.0


def slugify(name: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "vault"


def index_name(root: Path, manifest: dict[str, Any]) -> str:
    pinned = manifest.get("qmd_index")
    if isinstance(pinned, str) and pinned.strip():
        return slugify(pinned.strip())
    return slugify(root.name)


def config_home() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME")
    return Path(base) if base else Path.home() / ".config"


def index_configured(name: str) -> bool:
    """True once bootstrap created the index (qmd keeps one YAML per index)."""
    return (config_home() / "qmd" / f"{name}.yml").is_file()


def refresh(root: Path, manifest: dict[str, Any], *, debounce: float = DEBOUNCE_SECONDS) -> bool:
    """Start `qmd --index <name> update` in the background when qmd is on
    PATH and this vault's index exists. Returns whether a refresh started.
    A burst of hook events shares one sentinel, so it starts at most one
    refresh per debounce window; the hook itself returns at once."""
    qmd = shutil.which("qmd")
    if qmd is None:
        return False
    name = index_name(root, manifest)
    if not index_configured(name):
        return False
    stamp = Path(tempfile.gettempdir()) / f"agent-vault-qmd-{name}.stamp"
    try:
        if debounce > 0 and stamp.exists() and time.time() - stamp.stat().st_mtime < debounce:
            return False
        stamp.touch()
    except OSError:
        pass
    try:
        subprocess.Popen(
            [qmd, "--index", name, "update"],
            cwd=str(root),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return False
    return True
