"""Facts about the vault: where it is, what its manifest says, which modules
are installed, and how its paths are classified.

vault-manifest.json is the one coordination file every script reads; when it
is missing or broken the scripts fall back to the defaults below and say so
on stderr, so a half-copied vault still gets a briefing.
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from .hookio import warn

MANIFEST = "vault-manifest.json"
STATE = ".shardmind/state.json"
VALUES = "shard-values.yaml"

DEFAULT_BUDGET = 32_000
MIN_BUDGET = 2_000
DEFAULT_COLLAPSE = 12

# Folders that are machinery, never notes: not listed, not link targets.
SKIP_DIRS = frozenset({"node_modules", "__pycache__"})
NOTE_SUFFIXES = (".md", ".base", ".canvas")


def vault_root() -> Path:
    """The vault these scripts live in: <vault>/.claude/scripts/vaultlib/."""
    return Path(__file__).resolve().parents[3]


def load_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        warn(f"{MANIFEST} not found; using built-in defaults")
        return {}
    except (OSError, ValueError) as exc:
        warn(f"{MANIFEST} unreadable ({exc.__class__.__name__}); using built-in defaults")
        return {}
    if not isinstance(data, dict):
        warn(f"{MANIFEST} is not a JSON object; using built-in defaults")
        return {}
    return data


def manifest_int(manifest: dict[str, Any], key: str, default: int, minimum: int = 0) -> int:
    value = manifest.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return max(value, minimum)


def manifest_list(manifest: dict[str, Any], key: str) -> list[str]:
    value = manifest.get(key)
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str) and v]


def installed_modules(root: Path) -> dict[str, bool] | None:
    """Module id → included, from .shardmind/state.json; None for a plain clone
    (no state: every module's files are present, so every module counts)."""
    path = root / STATE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        warn(f"{STATE} unreadable; treating every module as installed")
        return None
    modules = data.get("modules") if isinstance(data, dict) else None
    if not isinstance(modules, dict):
        return None
    return {str(k): v == "included" for k, v in modules.items()}


def module_active(modules: dict[str, bool] | None, module_id: str | None) -> bool:
    if module_id is None or modules is None:
        return True
    # A module the state does not mention was never offered for removal.
    return modules.get(module_id, True)


_SCALAR = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:\s*(.*?)\s*$")


def read_values(root: Path) -> dict[str, str]:
    """Top-level scalar values of shard-values.yaml (stdlib only: no YAML
    library, so nested values are skipped; the scripts need only scalars)."""
    try:
        text = (root / VALUES).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return {}
    out: dict[str, str] = {}
    for line in text.splitlines():
        if not line or line[0] in " \t#-":
            continue
        m = _SCALAR.match(line)
        if not m:
            continue
        key, raw = m.group(1), m.group(2)
        out[key] = _unquote(_strip_comment(raw))
    return out


def _strip_comment(raw: str) -> str:
    if raw[:1] in "\"'":
        return raw
    cut = raw.find(" #")
    return raw[:cut].rstrip() if cut >= 0 else raw


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
        inner = raw[1:-1]
        return inner.replace("''", "'") if raw[0] == "'" else inner.replace('\\"', '"')
    return raw


# --- globs -----------------------------------------------------------------


@lru_cache(maxsize=512)
def _glob_regex(pattern: str) -> re.Pattern[str]:
    """`*` stays inside one path segment, `**` crosses segments, `**/` may
    match no folder at all; a pattern ending in "/" matches everything below."""
    prefix = pattern.endswith("/")
    body = pattern[:-1] if prefix else pattern
    out: list[str] = []
    i = 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(body[i]))
            i += 1
    tail = "/.*" if prefix else ""
    return re.compile("^" + "".join(out) + tail + "$", re.DOTALL)


def glob_match(pattern: str, rel: str) -> bool:
    return bool(_glob_regex(pattern).match(rel))


def any_glob(patterns: list[str], rel: str) -> bool:
    return any(glob_match(p, rel) for p in patterns)


def is_infrastructure(manifest: dict[str, Any], rel: str) -> bool:
    """Template machinery (manuals, commands, templates, bases…), as opposed to notes."""
    if any_glob(manifest_list(manifest, "user_content_roots"), rel):
        return False
    return any_glob(manifest_list(manifest, "infrastructure"), rel)


def to_vault_rel(root: Path, path: str, cwd: str | None = None) -> str | None:
    """A tool's file path as a vault-relative POSIX path, or None when outside."""
    if not path:
        return None
    p = Path(os.path.expanduser(path))
    if not p.is_absolute():
        p = Path(cwd or root) / p
    try:
        resolved = Path(os.path.normpath(str(p)))
        rel = resolved.relative_to(Path(os.path.normpath(str(root))))
    except ValueError:
        try:
            rel = p.resolve().relative_to(root.resolve())
        except (ValueError, OSError):
            return None
    text = rel.as_posix()
    return None if text in ("", ".") or text.startswith("../") else text


# --- walking ----------------------------------------------------------------


def iter_files(root: Path) -> list[str]:
    """Every visible file of the vault (dot-folders and machinery skipped),
    as sorted vault-relative POSIX paths. Links are listed, never followed."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        base = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if base == "." else base + "/"
        for name in filenames:
            if not name.startswith("."):
                out.append(prefix + name)
    out.sort()
    return out


def iter_notes(root: Path) -> list[str]:
    return [p for p in iter_files(root) if p.lower().endswith(NOTE_SUFFIXES)]


def read_text(path: Path, limit: int = 1_048_576) -> str | None:
    """A note's text (at most `limit` bytes), or None for links, binaries and errors."""
    try:
        if path.is_symlink() or not path.is_file():
            return None
        with path.open("rb") as fh:
            raw = fh.read(limit)
    except OSError:
        return None
    return raw.decode("utf-8", "replace")
