"""The JSON each agent sends its hooks, per event (shapes from the agents'
hook references: Claude Code, Codex CLI, Gemini CLI). Only the fields the
agents document; values are what a real session would carry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SESSION = "4f1c2b9e-7d3a-4c55-9a0e-2b6f8d1e0c42"


def _claude_common(vault: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(vault.parent / "claude-transcript.jsonl"),
        "cwd": str(vault),
        "permission_mode": "default",
        "hook_event_name": event,
    }


def _codex_common(vault: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "turn_id": "turn-7",
        "transcript_path": str(vault.parent / "codex-rollout.jsonl"),
        "cwd": str(vault),
        "model": "gpt-5-codex",
        "hook_event_name": event,
    }


def _gemini_common(vault: Path, event: str) -> dict[str, Any]:
    return {
        "session_id": SESSION,
        "transcript_path": str(vault.parent / "gemini-session.json"),
        "cwd": str(vault),
        "hook_event_name": event,
        "timestamp": "2026-11-29T09:00:00.000Z",
    }


def session_start(agent: str, vault: Path, source: str = "startup") -> dict[str, Any]:
    common = {"claude": _claude_common, "codex": _codex_common, "gemini": _gemini_common}[agent]
    return {**common(vault, "SessionStart"), "source": source}


def prompt(agent: str, vault: Path, text: str) -> dict[str, Any]:
    if agent == "claude":
        return {**_claude_common(vault, "UserPromptSubmit"), "prompt": text}
    if agent == "codex":
        return {**_codex_common(vault, "UserPromptSubmit"), "prompt": text}
    return {**_gemini_common(vault, "BeforeAgent"), "prompt": text}


def claude_write(vault: Path, rel: str, content: str, *, pre: bool = False) -> dict[str, Any]:
    path = str(vault / rel) if not rel.startswith("/") else rel
    payload = {
        **_claude_common(vault, "PreToolUse" if pre else "PostToolUse"),
        "tool_name": "Write",
        "tool_use_id": "toolu_01ABCDEF",
        "tool_input": {"file_path": path, "content": content},
    }
    if not pre:
        payload["tool_response"] = {"type": "create", "filePath": path, "content": content}
    return payload


def claude_edit(vault: Path, rel: str, old: str, new: str) -> dict[str, Any]:
    path = str(vault / rel)
    return {
        **_claude_common(vault, "PostToolUse"),
        "tool_name": "Edit",
        "tool_use_id": "toolu_01EDIT",
        "tool_input": {"file_path": path, "old_string": old, "new_string": new, "replace_all": False},
        "tool_response": {"filePath": path, "oldString": old, "newString": new},
    }


def codex_patch(vault: Path, patch: str, *, pre: bool = False) -> dict[str, Any]:
    payload = {
        **_codex_common(vault, "PreToolUse" if pre else "PostToolUse"),
        "tool_name": "apply_patch",
        "tool_use_id": "call_9X2",
        "tool_input": {"command": patch},
    }
    if not pre:
        payload["tool_response"] = "Success. Updated the following files:\n"
    return payload


def gemini_write(vault: Path, rel: str, content: str, *, pre: bool = False) -> dict[str, Any]:
    path = str(vault / rel) if not rel.startswith("/") else rel
    payload = {
        **_gemini_common(vault, "BeforeTool" if pre else "AfterTool"),
        "tool_name": "write_file",
        "tool_input": {"file_path": path, "content": content},
    }
    if not pre:
        payload["tool_response"] = {"llmContent": f"Successfully wrote to {path}", "returnDisplay": "ok"}
    return payload


def gemini_save_memory(vault: Path, fact: str) -> dict[str, Any]:
    return {**_gemini_common(vault, "BeforeTool"), "tool_name": "save_memory", "tool_input": {"fact": fact}}


def compact(agent: str, vault: Path, transcript: Path, trigger: str = "auto") -> dict[str, Any]:
    if agent == "claude":
        base = {**_claude_common(vault, "PreCompact"), "custom_instructions": ""}
    else:
        base = _gemini_common(vault, "PreCompress")
    return {**base, "transcript_path": str(transcript), "trigger": trigger}


def stop(agent: str, vault: Path, *, active: bool = False) -> dict[str, Any]:
    if agent == "claude":
        return {**_claude_common(vault, "Stop"), "stop_hook_active": active}
    if agent == "codex":
        return {**_codex_common(vault, "Stop"), "stop_hook_active": active, "last_assistant_message": "Done."}
    return {**_gemini_common(vault, "SessionEnd"), "reason": "exit"}
