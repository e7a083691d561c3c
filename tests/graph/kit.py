"""Replaying tool calls on the reference memory server and on ``shardpy serve``, side by side."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

Call = tuple[str, dict[str, Any]]


def answer(result: Any) -> dict[str, Any]:
    """What a client sees of one tool result: error flag, text, structured content."""
    text = "".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    return {"error": bool(result.is_error), "text": text, "structured": result.structured_content}


def as_sets(graph: dict[str, Any]) -> tuple[frozenset[str], frozenset[str]]:
    """A graph compared as sets (entity order and relation order are not part of the contract)."""
    entities = frozenset(
        json.dumps({**e, "observations": sorted(e["observations"])}, sort_keys=True)
        for e in graph["entities"]
    )
    relations = frozenset(json.dumps(r, sort_keys=True) for r in graph["relations"])
    return entities, relations


def same(ref: dict[str, Any], ours: dict[str, Any], tool: str) -> None:
    """Assert two answers agree: flag, text and structure (graphs as sets; a validation failure's
    wording is each server's own, so only its flag is compared)."""
    assert ours["error"] == ref["error"], (tool, ref, ours)
    if ref["error"]:
        if "Input validation error" not in ref["text"]:
            assert ours["text"] == ref["text"], (tool, ref, ours)
        return
    if tool in ("read_graph", "search_nodes", "open_nodes"):
        assert as_sets(ours["structured"]) == as_sets(ref["structured"]), (tool, ref, ours)
        assert as_sets(json.loads(ours["text"])) == as_sets(json.loads(ref["text"])), tool
        return
    assert ours["structured"] == ref["structured"], (tool, ref, ours)
    if ref["text"].startswith(("[", "{")):
        assert json.loads(ours["text"]) == json.loads(ref["text"]), (tool, ref, ours)
    else:
        assert ours["text"] == ref["text"], (tool, ref, ours)


async def replay(session: Any, calls: list[Call]) -> list[dict[str, Any]]:
    return [answer(await session.call_tool(tool, args)) for tool, args in calls]


def graph_manifest(vault: Path) -> None:
    vault.mkdir(parents=True, exist_ok=True)
    (vault / "vault-manifest.json").write_text(
        json.dumps({"template": "agent-vault", "memory_root": "memories", "user_content_roots": ["brain/"]}),
        encoding="utf-8",
    )
