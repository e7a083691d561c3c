"""Telling a SOURCE from a DEST when `install` gets one positional argument."""

from __future__ import annotations

import re
from pathlib import Path

_REMOTE = re.compile(r"^(github:|git\+|https?://|ssh://|file://|git@)")
_REGISTRY = re.compile(r"^[a-z0-9-]+/[a-z0-9-]+(@\S+)?$")


def looks_like_source(text: str, *, cwd: Path) -> bool:
    """True when ``text`` clearly names a shard source rather than a folder to
    install into: a URL or scheme, an archive, a `.git` path, a version or
    ref suffix, a registry name that is not a local path, or an existing
    folder holding a shard (at its root or one level down)."""
    if _REMOTE.match(text) or text.endswith((".tar.gz", ".tgz", ".git")) or "//" in text:
        return True
    path = (cwd / text).expanduser()
    if "@" in text or "#" in text:
        return not path.exists() or (path / ".git").exists()
    if path.is_dir():
        from shardpy.vault.layout import find_vault_root

        vault = find_vault_root(path)
        if vault is not None and vault == path.resolve():
            # An installed vault named alone is where the bundled shard would go: install
            # then says it already holds one and points at update (tests/hardening/test_reinstall.py).
            return False
        if (path / ".shardmind" / "shard.yaml").is_file() or vault is not None:
            return True
        try:
            return any(
                (child / ".shardmind" / "shard.yaml").is_file() for child in path.iterdir() if child.is_dir()
            )
        except OSError:
            return False
    return not path.exists() and bool(_REGISTRY.match(text)) and not text.startswith(".")
