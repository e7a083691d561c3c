"""Walking a vault's own files (the user's notes), the one way every
command does it: vault-relative POSIX paths, engine and tool folders
skipped, links never followed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from shardpy.vault.layout import is_engine_path

SKIP_DIRS = frozenset({".git", ".shardmind", ".obsidian", ".trash", "node_modules"})


def vault_files(vault: Path, *, suffix: str | None = None) -> Iterator[str]:
    """Every regular file of the vault outside the skipped folders (and not
    the engine's own files), optionally only those ending in ``suffix``."""
    for dirpath, dirnames, filenames in os.walk(vault):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        rel_dir = os.path.relpath(dirpath, vault)
        for name in filenames:
            if suffix is not None and not name.endswith(suffix):
                continue
            rel = name if rel_dir == "." else f"{rel_dir}/{name}".replace(os.sep, "/")
            if not is_engine_path(rel) and not os.path.islink(os.path.join(dirpath, name)):
                yield rel


def user_files(vault: Path, produced: set[str], *, suffix: str | None = None) -> Iterator[str]:
    """The vault's files the shard did not produce."""
    return (p for p in vault_files(vault, suffix=suffix) if p not in produced)
