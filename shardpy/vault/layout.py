"""Where things live inside an installed vault (CONTRACT §5)."""

from __future__ import annotations

import os
import re
from functools import cache
from pathlib import Path

SIDECAR = ".shardmind"
STATE = f"{SIDECAR}/state.json"
CACHED_MANIFEST = f"{SIDECAR}/shard.yaml"
CACHED_SCHEMA = f"{SIDECAR}/shard-schema.yaml"
TEMPLATES = f"{SIDECAR}/templates"
BACKUPS = f"{SIDECAR}/backups"
# Import runs (journal, plan, result of each) and the import ledger.
IMPORTS = f"{SIDECAR}/imports"
PINNED_BASES = f"{SIDECAR}/bases"
UPDATE_CHECK = f"{SIDECAR}/update-check.json"
# Machine-local facts (when this machine last updated the vault): never in git.
LOCAL = f"{SIDECAR}/local.json"
JOURNAL = f"{SIDECAR}/journal.json"
VAULT_ID = f"{SIDECAR}/vault-id"  # random, written by the first transaction; journals name it
VALUES_FILE = "shard-values.yaml"
# `shardpy serve`: the audit log of every call (JSON Lines) and its one rotated generation.
SERVE_AUDIT = f"{SIDECAR}/serve-audit.jsonl"
SERVE_AUDIT_OLD = f"{SIDECAR}/serve-audit.1.jsonl"


def template_cache_path(source_path: str) -> str:
    return f"{TEMPLATES}/{source_path}"


def pinned_base_path(path: str) -> str:
    return f"{PINNED_BASES}/{path}"


def find_vault_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` that is a vault's root.

    A vault root has a real ``.shardmind/`` folder (not a link) holding its
    state file, or, after an interrupted first install, a journal together
    with the vault id that transaction wrote, or the temporary file of either
    that a kill left before the journal existed (the fault harness's adopt
    trial: a first transaction killed while writing the vault id;
    tests/test_spine_session.py). A ``.shardmind/`` holding only a journal is
    content (a shard or a repository could ship one), not a vault: a journal
    is replayed, while a temporary file is only removed by the recovery.
    """
    current = start.resolve()
    return next((c for c in (current, *current.parents) if is_vault_root(c)), None)


def is_vault_root(folder: Path) -> bool:
    """``folder`` itself is a vault's root, by :func:`find_vault_root`'s rule."""
    side = folder / SIDECAR
    if side.is_symlink() or not side.is_dir():
        return False
    if _regular(side / "state.json") or (_regular(side / "journal.json") and _regular(side / "vault-id")):
        return True
    return bool(first_write_temps(side))


@cache
def _first_write_temp_name() -> re.Pattern[str]:
    """fsutil.atomic_write's temporary name for the journal or the vault id (8 hex digits
    between). fsutil (hashlib) is imported here, not with this module: the merge
    driver git starts once per file imports layout for its names alone (issue 30)."""
    from shardpy.fsutil import TMP_MARK

    names = "|".join(re.escape(Path(n).name) for n in (JOURNAL, VAULT_ID))
    return re.compile(re.escape(TMP_MARK) + f"[0-9a-f]{{8}}-(?:{names})")


def first_write_temps(side: Path) -> list[str]:
    """The temporary files a kill left in ``side`` (a vault's ``.shardmind/``) while the journal
    or the first transaction's vault id was being written: regular files, never through a link.
    The one test of those names: vault discovery and the transaction's recovery both ask it."""
    try:
        with os.scandir(side) as it:
            pattern = _first_write_temp_name()
            return [e.path for e in it if pattern.fullmatch(e.name) and e.is_file(follow_symlinks=False)]
    except OSError:
        return []


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def is_engine_path(path: str) -> bool:
    """Paths the engine owns that are never shard output or user notes."""
    return path in (SIDECAR, VALUES_FILE) or path.startswith(SIDECAR + "/")
