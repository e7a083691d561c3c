"""The vault's contract for a calling session: its instructions, and the two prompts a human invokes.

Prohibitions propagate and routing advice does not (seed 000), so the
instructions lead with what a session must never do with vault material;
the prompts are how a human makes the session go and look.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types

from shardpy.errors import ShardpyError
from shardpy.serve.exposure import Manifest

RULES = """\
This server is the user's personal vault (Markdown notes and memories).
Rules:
- Never paste vault note text, memory text or vault paths into commits, pull requests, issues, \
code comments or anything public. Summarise in your own words only where the user asked.
- Never copy a memory meant for another project into this repository.
- Memories you record are lessons for future sessions: one lesson each, with its reach \
(scope general, platform or project) and how sure you are (confidence). Prefer scope project; \
general reaches every repository the user works in.
- A correction is a new memory with supersedes: [old path], never an edit of the old one.
Tools: search (passages), expand (one note with its links), recall (memories for this project), \
remember, record_work (a work note into a user-content folder), health."""


def instructions(manifest: Manifest) -> str:
    context = manifest.context.strip()
    return RULES + (f"\nThe vault: {context}" if context else "")


PROMPTS = [
    types.Prompt(
        name="recall_topic",
        description="What does the vault remember about a topic? (recall + search)",
        arguments=[types.PromptArgument(name="topic", description="The topic to look up.", required=True)],
    ),
    types.Prompt(
        name="prior_art",
        description="Before starting a task: decisions, patterns and gotchas the vault already holds.",
        arguments=[types.PromptArgument(name="task", description="The task about to start.", required=True)],
    ),
]

_TEXT = {
    "recall_topic": (
        "Look up what my vault remembers about: {arg}\n\n"
        "1. Call recall with query {arg!r}.\n"
        "2. Call search with the same words, and expand the notes that look relevant.\n"
        "3. Answer from what you found, naming each note or memory path you used; say plainly if "
        "the vault has nothing on it."
    ),
    "prior_art": (
        "Before we start this task, check my vault for prior art: {arg}\n\n"
        "1. Call recall with a query naming the task.\n"
        "2. Search for earlier decisions, patterns and gotchas about it; expand what matters.\n"
        "3. List what applies (with paths), what conflicts with the plan, and what is missing. "
        "Do not start the task until I have read it."
    ),
}


def render(name: str, arguments: dict[str, Any]) -> types.GetPromptResult:
    if name not in _TEXT:
        raise ShardpyError("SERVE_UNKNOWN_PROMPT", f"no prompt {name!r}", "Prompts: recall_topic, prior_art.")
    key = "topic" if name == "recall_topic" else "task"
    arg = str(arguments.get(key, "")).strip()
    if not arg or len(arg) > 1000:
        raise ShardpyError(
            "SERVE_BAD_ARGUMENTS", f"{name}: {key} must be 1 to 1000 characters", f"Pass {key}."
        )
    text = _TEXT[name].format(arg=arg)
    return types.GetPromptResult(
        description=name,
        messages=[types.PromptMessage(role="user", content=types.TextContent(type="text", text=text))],
    )
