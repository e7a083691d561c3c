"""What a shard's Python hook scripts (and a vault's own scripts) import.

    from shardpy import runtime

    ctx = runtime.hook_context()            # the hook's context (dict)
    values = runtime.load_values()          # shard-values.yaml
    missing = runtime.validate_frontmatter("people/Sam.md")

Everything here reads the vault and never writes it. Importing this module
is cheap: the YAML and schema machinery load only when a function needs
them. Every function taking ``vault`` accepts the vault root or any path
inside it; by default the vault is found from the hook context, else from
the current directory (hooks run with the vault as working directory).
"""

from __future__ import annotations

import json
import os
import sys
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shardpy.errors import ShardpyError
from shardpy.vault import layout

if TYPE_CHECKING:
    from shardpy.shard.schema import Schema

__all__ = [
    "active_signals",
    "find_vault_root",
    "hook_context",
    "included_modules",
    "load_schema",
    "load_state",
    "load_values",
    "validate_frontmatter",
]

_CONTEXT_ENV = ("SHARDPY_HOOK_CONTEXT", "SHARDMIND_HOOK_CONTEXT")
_stdin_context: dict[str, Any] | None = None


def find_vault_root(start: str | Path | None = None) -> Path | None:
    """The nearest directory at or above ``start`` (default: the current
    directory) that holds a shardpy vault; None when there is none."""
    return layout.find_vault_root(Path(start) if start is not None else Path.cwd())


def _context_from_env() -> dict[str, Any] | None:
    for name in _CONTEXT_ENV:
        raw = os.environ.get(name)
        if not raw:
            continue
        text = raw if raw.lstrip().startswith("{") else Path(raw).read_text(encoding="utf-8")
        data = json.loads(text)
        if isinstance(data, dict):
            return data
    return None


def hook_context() -> dict[str, Any]:
    """The context shardpy passed to the running hook: the JSON file named by
    ``SHARDPY_HOOK_CONTEXT`` (or ``SHARDMIND_HOOK_CONTEXT``), else the JSON
    document on stdin (read once, then remembered)."""
    global _stdin_context
    try:
        found = _context_from_env()
    except (OSError, json.JSONDecodeError) as exc:
        raise ShardpyError(
            "HOOK_CONTEXT_INVALID",
            f"The hook context named by SHARDPY_HOOK_CONTEXT cannot be read: {exc}",
            "Run the script as a shardpy hook, or point SHARDPY_HOOK_CONTEXT at a JSON file.",
        ) from None
    if found is not None:
        return found
    if _stdin_context is None and sys.stdin is not None and not sys.stdin.isatty():
        try:
            data = json.loads(sys.stdin.read() or "null")
        except json.JSONDecodeError as exc:
            raise ShardpyError(
                "HOOK_CONTEXT_INVALID",
                f"stdin does not hold the hook context JSON ({exc.msg})",
                "Run the script as a shardpy hook, or set SHARDPY_HOOK_CONTEXT.",
            ) from None
        if isinstance(data, dict):
            _stdin_context = data
    if _stdin_context is None:
        raise ShardpyError(
            "HOOK_CONTEXT_MISSING",
            "No hook context: SHARDPY_HOOK_CONTEXT is not set and stdin holds no context",
            "This function works inside a shardpy hook; to try a hook by hand, set "
            "SHARDPY_HOOK_CONTEXT to a JSON file with vault_root, values, modules, shard and slot.",
        )
    return _stdin_context


def _vault(vault: str | Path | None) -> Path:
    if vault is None:
        try:
            ctx = _context_from_env()
        except (OSError, json.JSONDecodeError):
            ctx = None
        if ctx and isinstance(ctx.get("vault_root"), str):
            vault = ctx["vault_root"]
    root = find_vault_root(vault)
    if root is None:
        where = Path(vault) if vault is not None else Path.cwd()
        raise ShardpyError(
            "VAULT_NOT_FOUND",
            f"No shardpy vault at or above {where}",
            "Run inside a vault (a folder holding .shardmind/state.json), or pass its path.",
        )
    return root


def load_values(vault: str | Path | None = None) -> dict[str, Any]:
    """The user's values (``shard-values.yaml``) as plain data."""
    from shardpy.shard.values import read_values_file

    return read_values_file(_vault(vault) / layout.VALUES_FILE, display=layout.VALUES_FILE)


def load_state(vault: str | Path | None = None) -> dict[str, Any]:
    """``.shardmind/state.json`` as plain data, checked (STATE_CORRUPT when
    it is not a state file)."""
    from shardpy.vault.state import parse_state

    root = _vault(vault)
    try:
        text = (root / layout.STATE).read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError):
        raise ShardpyError(
            "STATE_MISSING", f"No readable shardpy state in {root}", "Run `shardpy status` there."
        ) from None
    parse_state(text)
    data = json.loads(text)
    assert isinstance(data, dict)
    return data


@lru_cache(maxsize=8)
def _schema_at(path: str, mtime_ns: int, size: int) -> Schema:
    from shardpy.shard.schema import load_schema as _load

    return _load(Path(path), display=layout.CACHED_SCHEMA)


def load_schema(vault: str | Path | None = None) -> Schema:
    """The shard's schema as cached in the vault (parsed once per process
    while the file is unchanged)."""
    path = _vault(vault) / layout.CACHED_SCHEMA
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ShardpyError(
            "SHARD_SCHEMA_MISSING",
            f"{layout.CACHED_SCHEMA} is missing from the vault",
            "Re-install or run `shardpy update` to restore the cached schema.",
            path=layout.CACHED_SCHEMA,
        ) from None
    return _schema_at(str(path), st.st_mtime_ns, st.st_size)


def included_modules(vault: str | Path | None = None) -> list[str]:
    """Ids of the modules installed in the vault."""
    modules = load_state(vault).get("modules") or {}
    return [m for m, v in modules.items() if v == "included"]


def active_signals(vault: str | Path | None = None) -> list[dict[str, Any]]:
    """The schema's signals that apply: core ones and those whose module is
    included."""
    root = _vault(vault)
    included = set(included_modules(root))
    return [s.model_dump() for s in load_schema(root).signals if s.module is None or s.module in included]


def validate_frontmatter(note_path: str | Path, vault: str | Path | None = None) -> list[str]:
    """The frontmatter keys the schema requires of this note that it lacks
    (``global`` keys plus those of the note type its path matches).
    ``note_path`` is absolute or relative to the vault root. A missing note
    or one without frontmatter lacks every required key."""
    from shardpy.shard.rules import missing_keys

    root = _vault(vault)
    path = Path(note_path)
    absolute = path if path.is_absolute() else (root / path)
    try:
        rel = absolute.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise ShardpyError(
            "RUNTIME_PATH_OUTSIDE_VAULT",
            f"{note_path} is not inside the vault at {root}",
            "Pass a path inside the vault (absolute, or relative to the vault root).",
        ) from None
    try:
        text = absolute.read_text(encoding="utf-8")
    except (FileNotFoundError, UnicodeDecodeError, IsADirectoryError):
        text = ""
    return missing_keys(rel, text, load_schema(root))[1]
