"""shardpy's full-text index of the vault: keep it fresh after a write, and
tell the agent about `shardpy search` when qmd is not there.

The index lives in the user's cache folder, never in the vault. Every call
here is harmless when shardpy is not on PATH (nothing happens) and bounded in
time when it is (a one-note refresh takes milliseconds; the process start
dominates).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

REFRESH_TIMEOUT = 10.0
MAX_NOTES_PER_REFRESH = 50


def shardpy_bin() -> str | None:
    return shutil.which("shardpy")


def refresh_notes(root: Path, rels: list[str]) -> bool:
    """`shardpy index --only REL ...` for the notes just written (deleted ones are pruned).
    Returns whether it ran and succeeded."""
    shardpy = shardpy_bin()
    notes = [r for r in dict.fromkeys(rels) if r.lower().endswith((".md", ".markdown"))]
    if shardpy is None or not notes:
        return False
    argv = [shardpy, "index", str(root)]
    for rel in notes[:MAX_NOTES_PER_REFRESH]:
        argv += ["--only", str(root / rel)]
    try:
        done = subprocess.run(
            argv,
            cwd=str(root),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=REFRESH_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def qmd_ready(root: Path, manifest: dict[str, Any]) -> bool:
    """qmd is on PATH and bootstrap created this vault's qmd index."""
    from vaultlib.qmd import index_configured, index_name

    return shutil.which("qmd") is not None and index_configured(index_name(root, manifest))


def search_hint(root: Path, manifest: dict[str, Any]) -> str:
    """The briefing's line about searching, when qmd is absent and shardpy can search."""
    if shardpy_bin() is None or qmd_ready(root, manifest):
        return ""
    return (
        'Search: `shardpy search "terms"` (finds notes by words and by meaning, ranked sections; '
        "`--type`, `--path`, `--json`) — qmd is not set up here. Read a whole note only after a search "
        "pointed at it."
    )
