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
    the engine's own files), optionally only those ending in ``suffix``.

    scandir's entries carry each file's type from the directory listing, so
    telling a link from a file costs no extra system call per note.
    """
    pending = [("", os.fspath(vault))]
    while pending:
        rel_dir, folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue  # unreadable or vanished meanwhile, as os.walk would skip it
        subfolders: list[tuple[str, str]] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                if entry.name not in SKIP_DIRS:
                    subfolders.append((rel, entry.path))
            elif (
                entry.is_file(follow_symlinks=False)
                and (suffix is None or entry.name.endswith(suffix))
                and not is_engine_path(rel)
            ):
                yield rel
        pending.extend(reversed(subfolders))  # top-down, in listing order, as os.walk goes


def tree_files(folder: Path) -> list[str]:
    """Every regular file below ``folder`` (an engine folder: nothing skipped), links
    never followed, as ``/``-joined paths in Path order (by parts). One stat-free
    scandir per folder, where rglob + is_file + is_symlink stat each file twice."""
    found: list[str] = []
    pending = [("", os.fspath(folder))]
    while pending:
        rel_dir, here = pending.pop()
        try:
            entries = list(os.scandir(here))
        except OSError:
            continue
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir(follow_symlinks=False):
                pending.append((rel, entry.path))
            elif entry.is_file(follow_symlinks=False):
                found.append(rel)
    return sorted(found, key=lambda rel: rel.split("/"))


def user_files(vault: Path, produced: set[str], *, suffix: str | None = None) -> Iterator[str]:
    """The vault's files the shard did not produce."""
    return (p for p in vault_files(vault, suffix=suffix) if p not in produced)
