"""Reading an agent's hook payload and answering it.

All three agents send one JSON object on stdin and read JSON from stdout.
The event names differ (Claude Code and Codex: UserPromptSubmit / PostToolUse /
PreCompact / Stop; Gemini CLI: BeforeAgent / AfterTool / PreCompress /
SessionEnd), the answer shape does not: `hookSpecificOutput.additionalContext`
adds text to the agent's context and `systemMessage` is shown to the user.
Scripts never crash an agent's turn: odd input becomes a warning on stderr.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any

PROMPT_EVENTS = frozenset({"UserPromptSubmit", "BeforeAgent"})
PRE_TOOL_EVENTS = frozenset({"PreToolUse", "BeforeTool"})
POST_TOOL_EVENTS = frozenset({"PostToolUse", "AfterTool"})
COMPACT_EVENTS = frozenset({"PreCompact", "PreCompress"})
END_EVENTS = frozenset({"Stop", "SessionEnd", "SubagentStop"})

MAX_STDIN_BYTES = 8 * 1024 * 1024


def warn(message: str) -> None:
    """A note for the human running the agent; never part of the JSON answer."""
    with contextlib.suppress(OSError, ValueError):
        print(f"[agent-vault] {message}", file=sys.stderr)


def read_payload() -> dict[str, Any]:
    """The agent's JSON object from stdin, or {} when there is none or it is not JSON."""
    stream = sys.stdin
    try:
        if stream is None or stream.closed or stream.isatty():
            return {}
        raw = stream.buffer.read(MAX_STDIN_BYTES + 1)
    except (OSError, ValueError, AttributeError):
        return {}
    if len(raw) > MAX_STDIN_BYTES:
        warn("hook input larger than 8 MiB; ignored")
        return {}
    text = raw.decode("utf-8", "replace").strip()
    if not text:
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        warn("hook input is not JSON; continuing without it")
        return {}
    if not isinstance(data, dict):
        warn("hook input is not a JSON object; continuing without it")
        return {}
    return data


def text_field(payload: dict[str, Any], *names: str) -> str:
    """The first of `names` that holds a string, else ''."""
    for name in names:
        value = payload.get(name)
        if isinstance(value, str):
            return value
    return ""


def event_name(payload: dict[str, Any], default: str) -> str:
    name = payload.get("hook_event_name")
    return name if isinstance(name, str) and name else default


def emit(obj: dict[str, Any]) -> None:
    """Write the one JSON answer. ASCII-escaped so any console encoding copes."""
    sys.stdout.write(json.dumps(obj, ensure_ascii=True) + "\n")
    sys.stdout.flush()


def emit_context(event: str, text: str) -> None:
    """Add `text` to the agent's context for this event (all three agents)."""
    emit({"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}})


def emit_nothing() -> None:
    """An empty answer that every agent parses as 'no change'."""
    emit({})
