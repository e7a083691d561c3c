"""Shared code for agent-vault's lifecycle hooks (Python stdlib only).

The engine runs each hook as `python <script>` with the vault as working
directory and the context as JSON — in the file named by
SHARDPY_HOOK_CONTEXT (SHARDMIND_HOOK_CONTEXT for ShardMind) and on stdin.
The hooks import nothing from shardpy, so they also run under ShardMind's
Python hook support or by hand.

Personalisation lives here as pure text transforms so personalize.py and
post_update.py apply the same rule, and so a test can prove it idempotent.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

NORTH_STAR = "brain/North Star.md"
HOME = "Home.md"
NOT_SET = "(not set)"


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


def safe_path(root: Path, rel: str) -> Path:
    """`rel` inside the vault, refusing links on the way (never write through one)."""
    current = root
    for part in Path(rel).parts:
        if part in ("..", "") or os.path.isabs(part):
            raise HookError(f"refusing path {rel!r}")
        current = current / part
        if current.is_symlink():
            raise HookError(f"refusing to write through the link {current}")
    return current


def read(root: Path, rel: str) -> str | None:
    path = safe_path(root, rel)
    try:
        with path.open("r", encoding="utf-8", newline="") as fh:
            return fh.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise HookError(f"cannot read {rel}: {exc}") from None


def write_if_changed(root: Path, rel: str, old: str, new: str) -> bool:
    """Write `new` atomically when it differs from `old`; keeps line endings as given."""
    if new == old:
        return False
    path = safe_path(root, rel)
    tmp = path.with_name(f".{path.name}.hook-tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="") as fh:
            fh.write(new)
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()
    return True


# --- personalisation: pure text transforms --------------------------------------

# [^\r\n] and the captured \r keep a CRLF file CRLF.
_NS_HEADING = re.compile(r"^# North Star(?: — [^\r\n]*)?[ \t]*(\r?)$", re.MULTILINE)


def personalize_north_star(text: str, user_name: str) -> str:
    """`# North Star` → `# North Star — <name>`; a heading the user rewrote is left alone."""
    name = " ".join(user_name.split())
    if not name:
        return text
    return _NS_HEADING.sub(lambda m: f"# North Star — {name}{m.group(1)}", text, count=1)


def _card_line(label: str) -> re.Pattern[str]:
    return re.compile(rf"^(>[ \t]*\*\*{re.escape(label)}:\*\*)[ \t]*[^\r\n]*?[ \t]*(\r?)$", re.MULTILINE)


def personalize_home(text: str, vals: dict[str, Any]) -> str:
    """Fill the Home note's vault card: Owner, Organisation, Purpose."""
    fields = {
        "Owner": str(vals.get("user_name") or "").strip(),
        "Organisation": str(vals.get("org_name") or "").strip(),
        "Purpose": str(vals.get("vault_purpose") or "").strip(),
    }
    for label, value in fields.items():
        if not value:
            continue
        value = " ".join(value.split())
        line = value

        def fill(m: re.Match[str], line: str = line) -> str:
            return f"{m.group(1)} {line}{m.group(2)}"

        text = _card_line(label).sub(fill, text, count=1)
    return text


def personalize_file(root: Path, rel: str, vals: dict[str, Any]) -> str:
    """Apply the transform for `rel`; returns 'changed', 'unchanged' or 'missing'."""
    old = read(root, rel)
    if old is None:
        return "missing"
    if rel == NORTH_STAR:
        new = personalize_north_star(old, str(vals.get("user_name") or ""))
    elif rel == HOME:
        new = personalize_home(old, vals)
    else:
        return "unchanged"
    return "changed" if write_if_changed(root, rel, old, new) else "unchanged"


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
