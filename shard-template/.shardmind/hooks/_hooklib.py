"""Shared code for agent-vault's lifecycle hooks (Python stdlib only).

The engine runs each hook as `python <script>` with the vault as working
directory and the context as JSON — in the file named by
SHARDPY_HOOK_CONTEXT (SHARDMIND_HOOK_CONTEXT for ShardMind) and on stdin.
The hooks import nothing from shardpy, so they also run under ShardMind's
Python hook support or by hand.

The values (name, organisation, purpose) are not written by a hook: the
Home card and the North Star heading are templates the engine renders and
re-renders on update.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any


class HookError(Exception):
    """A problem the user should see; the hook exits non-zero (a warning)."""


def load_context() -> dict[str, Any]:
    """The engine's context: from the context file if named, else stdin."""
    for var in ("SHARDPY_HOOK_CONTEXT", "SHARDMIND_HOOK_CONTEXT"):
        path = os.environ.get(var)
        if path:
            try:
                data = json.loads(Path(path).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                raise HookError(f"cannot read hook context {path}: {exc}") from None
            if isinstance(data, dict):
                return data
            raise HookError(f"hook context {path} is not a JSON object")
    if sys.stdin is not None and not sys.stdin.isatty():
        raw = sys.stdin.read()
        if raw.strip():
            try:
                data = json.loads(raw)
            except ValueError as exc:
                raise HookError(f"hook context on stdin is not JSON: {exc}") from None
            if isinstance(data, dict):
                return data
    raise HookError("no hook context: this script is run by shardpy (install, update, adopt)")


def vault_root(ctx: dict[str, Any]) -> Path:
    root = ctx.get("vault_root")
    path = Path(root) if isinstance(root, str) and root else Path.cwd()
    if not path.is_dir():
        raise HookError(f"vault root {path} is not a directory")
    return path


def values(ctx: dict[str, Any]) -> dict[str, Any]:
    raw = ctx.get("values")
    return raw if isinstance(raw, dict) else {}


# --- qmd ----------------------------------------------------------------------------


def slugify(name: str) -> str:
    """The index-name rule of .claude/scripts/vaultlib/qmd.py (a test keeps them equal)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    return slug or "vault"


def qmd_index(root: Path) -> str:
    try:
        manifest = json.loads((root / "vault-manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    pinned = manifest.get("qmd_index") if isinstance(manifest, dict) else None
    if isinstance(pinned, str) and pinned.strip():
        return slugify(pinned.strip())
    return slugify(root.name)


def ignore_filters(root: Path) -> list[str]:
    """`.obsidian/app.json` → userIgnoreFilters: the one list Obsidian and QMD share."""
    try:
        data = json.loads((root / ".obsidian" / "app.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    raw = data.get("userIgnoreFilters") if isinstance(data, dict) else None
    return [f for f in raw if isinstance(f, str) and f.strip()] if isinstance(raw, list) else []


def qmd_ignore_globs(filters: list[str]) -> list[str]:
    """Obsidian filters are path prefixes (a folder ends in "/"); QMD wants globs."""
    out: list[str] = []
    for f in filters:
        f = f.strip().lstrip("/")
        if f.startswith("/") or not f:
            continue
        glob = f + "**" if f.endswith("/") else f
        if glob not in out:
            out.append(glob)
    return out


def _depth(line: str) -> int:
    return len(line) - len(line.lstrip())


def set_collection_ignore(config_text: str, collection: str, globs: list[str]) -> str | None:
    """Replace the `ignore:` list of `collections.<collection>` in QMD's index
    YAML. Edits only that block, line by line (no YAML library in a hook);
    None when the file does not have the expected shape, so the caller can
    say so instead of guessing."""
    lines = config_text.splitlines()
    try:
        top = next(i for i, ln in enumerate(lines) if re.match(r"^collections:\s*$", ln))
    except StopIteration:
        return None
    start = None
    indent = ""
    for i in range(top + 1, len(lines)):
        ln = lines[i]
        if ln.strip() and not ln[0].isspace():
            break
        m = re.match(r"^(\s+)['\"]?([^'\":]+)['\"]?:\s*$", ln)
        if m and m.group(2).strip() == collection and (not indent or len(m.group(1)) == len(indent)):
            start, indent = i, m.group(1)
            break
        if m and not indent:
            indent = m.group(1)
    if start is None:
        return None
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or _depth(lines[end]) > len(indent)):
        end += 1
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    block = lines[start + 1 : end]
    child = next((ln[: _depth(ln)] for ln in block if ln.strip()), indent + "  ")
    kept: list[str] = []
    i = 0
    while i < len(block):
        ln = block[i]
        if ln.strip().startswith("ignore:") and _depth(ln) == len(child):
            # Drop the key and its value: deeper lines, or "- item" lines at
            # the key's own depth (both are valid YAML for a block list).
            i += 1
            while i < len(block) and (
                not block[i].strip()
                or _depth(block[i]) > len(child)
                or (_depth(block[i]) == len(child) and block[i].lstrip().startswith("- "))
            ):
                i += 1
            continue
        kept.append(ln)
        i += 1
    if globs:
        kept.append(f"{child}ignore:")
        kept.extend(f"{child}  - {json.dumps(g)}" for g in globs)
    new_lines = lines[: start + 1] + kept + lines[end:]
    trailing = "\n" if config_text.endswith("\n") else ""
    return "\n".join(new_lines) + trailing
