"""Checks around a write, wired before and after the agent's file tools.

Before a write (PreToolUse / BeforeTool): refuse to file memories in an
agent's private memory directory (~/.claude/projects/*/memory/,
~/.codex/memories/, ~/.gemini/GEMINI.md, Gemini's save_memory tool). Durable
knowledge lives in the vault, in brain/ topic notes, where it is versioned,
searchable and shared by every agent. The refusal uses the one block signal
all three agents share: exit code 2 with the reason on stderr. The pointer
index MEMORY.md that Claude Code keeps there is allowed.

After a write (PostToolUse / AfterTool) to a .md note of the vault: the
frontmatter its note type requires (rules from vault-manifest.json), links
that resolve, and at least one link to another note. Problems go back to the
agent as additional context — the write already happened, the agent fixes it.
Infrastructure (manuals, commands, templates…) is not checked. Then the search
indexes catch up: qmd's (debounced, in the background) and shardpy's
full-text index (`shardpy index --only` the notes written, when shardpy is on
PATH).

Tools understood: Claude Code Write / Edit / MultiEdit (tool_input.file_path),
Gemini write_file / replace (file_path or absolute_path), Codex apply_patch
(the patch text in tool_input.command: *** Add File / Update File / Move to).
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import os  # noqa: E402
import re  # noqa: E402
from pathlib import Path, PurePosixPath  # noqa: E402
from typing import Any  # noqa: E402

from vaultlib.hookio import (  # noqa: E402
    POST_TOOL_EVENTS,
    PRE_TOOL_EVENTS,
    emit,
    emit_context,
    emit_nothing,
    event_name,
    read_payload,
    text_field,
    warn,
)
from vaultlib.notes import LinkIndex, check_note  # noqa: E402
from vaultlib.qmd import refresh as qmd_refresh  # noqa: E402
from vaultlib.search import refresh_notes  # noqa: E402
from vaultlib.vault import is_infrastructure, iter_files, load_manifest, read_text, to_vault_rel, vault_root  # noqa: E402

BLOCK_EXIT = 2
PATCH_TARGET = re.compile(r"^\*\*\* (?:Add File|Update File|Move to): (.+?)\s*$", re.MULTILINE)
MEMORY_TOOLS = frozenset({"save_memory"})
REFUSAL = (
    "Not filed: {what} is an agent's private memory store. Durable knowledge goes into the vault "
    "so every agent and the user can find it: add it to the matching brain/ topic note "
    "(brain/Gotchas.md, brain/Patterns.md, brain/Key Decisions.md, or a new note linked from "
    "brain/Memories.md). MEMORY.md there may only hold pointers to vault notes."
)


def target_paths(payload: dict[str, Any]) -> list[str]:
    """Every file path a tool call writes, whatever agent sent it."""
    tool_input = payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return []
    paths: list[str] = []
    for key in ("file_path", "absolute_path", "path", "notebook_path"):
        value = tool_input.get(key)
        if isinstance(value, str) and value:
            paths.append(value)
    edits = tool_input.get("edits")
    if isinstance(edits, list):
        for edit in edits:
            if isinstance(edit, dict) and isinstance(edit.get("file_path"), str):
                paths.append(edit["file_path"])
    for key in ("command", "patch", "input"):
        value = tool_input.get(key)
        if isinstance(value, list):
            value = "\n".join(v for v in value if isinstance(v, str))
        if isinstance(value, str) and "*** " in value:
            paths.extend(m.group(1) for m in PATCH_TARGET.finditer(value))
    return list(dict.fromkeys(paths))  # de-duplicated, first occurrence first


def private_memory(path: str) -> bool:
    """A file inside an agent's own memory store (outside any vault)."""
    parts = [p.lower() for p in PurePosixPath(path.replace("\\", "/")).parts]
    name = parts[-1] if parts else ""
    for i, part in enumerate(parts):
        tail = parts[i + 1 :]
        if part == ".claude":
            if len(tail) >= 3 and tail[0] == "projects" and tail[2] == "memory":
                return name != "memory.md" or len(tail) != 4
            if tail[:1] == ["memory"]:
                return True
        if part == ".codex" and tail[:1] == ["memories"]:
            return True
        if part == ".gemini" and tail == ["gemini.md"]:
            return True
    return False


def refuse(what: str) -> int:
    sys.stderr.write(REFUSAL.format(what=what) + "\n")
    sys.stderr.flush()
    return BLOCK_EXIT


def before_write(payload: dict[str, Any], root: Path) -> int:
    tool = text_field(payload, "tool_name")
    if tool in MEMORY_TOOLS:
        return refuse(f"the {tool} tool")
    cwd = text_field(payload, "cwd") or str(root)
    for path in target_paths(payload):
        absolute = Path(os.path.expanduser(path))
        if not absolute.is_absolute():
            absolute = Path(cwd) / absolute
        if to_vault_rel(root, str(absolute)) is None and private_memory(str(absolute)):
            return refuse(str(absolute))
    emit_nothing()
    return 0


def after_write(payload: dict[str, Any], root: Path) -> int:
    event = event_name(payload, "PostToolUse")
    cwd = text_field(payload, "cwd") or str(root)
    manifest = load_manifest(root)
    rules = manifest.get("frontmatter_required")
    rules = rules if isinstance(rules, dict) else {}
    findings: list[str] = []
    index: LinkIndex | None = None
    written: list[str] = []
    for path in target_paths(payload):
        absolute = Path(os.path.expanduser(path))
        if not absolute.is_absolute():
            absolute = Path(cwd) / absolute
        rel = to_vault_rel(root, str(absolute))
        if rel is None:
            if private_memory(str(absolute)):
                findings.append(
                    REFUSAL.format(what=str(absolute)) + " Move what you wrote there into the vault."
                )
            continue
        if not rel.lower().endswith(".md") or any(part.startswith(".") for part in rel.split("/")[:-1]):
            continue
        written.append(rel)
        if is_infrastructure(manifest, rel):
            continue
        text = read_text(root / rel)
        if text is None:
            continue
        if index is None:
            index = LinkIndex(iter_files(root))
        for problem in check_note(text, rel, rules, index):
            findings.append(f"{rel}: {problem}")
    try:
        qmd_refresh(root, manifest)
    except Exception as exc:
        warn(f"qmd refresh not started: {exc}")
    try:
        refresh_notes(root, written)  # shardpy's full-text index: just these notes
    except Exception as exc:
        warn(f"shardpy index refresh failed: {exc}")
    if not findings:
        emit_nothing()
        return 0
    emit_context(event, "Vault check after your write:\n" + "\n".join(f"- {f}" for f in findings))
    return 0


def main() -> int:
    payload = read_payload()
    root = vault_root()
    event = event_name(payload, "PostToolUse")
    if event in PRE_TOOL_EVENTS:
        return before_write(payload, root)
    if event in POST_TOOL_EVENTS or "tool_input" in payload:
        return after_write(payload, root)
    emit_nothing()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception as exc:  # a checker bug must not break the agent's turn
        warn(f"validate_write failed: {exc.__class__.__name__}: {exc}")
        emit({})
        sys.exit(0)
