"""The MCP `search` tool ranks by words and meaning with the CLI's ranking (issue 29), over the SDK.

A withheld note never appears and its text never does, whatever the mode; a hybrid answer is the
answer the same vault gives without its withheld notes (a refused note changes no rank).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.security.test_serve_exposure import SERVED, WITHHELD_FILES, hostile_world
from tests.serve.kit import MANIFEST, Shared, build_world, shared

RUNBOOK = """# Release reversal runbook

## Steps

Pin the previous image tag in the environment file, then run the pipeline's
promote job against it. The database is never reverted: migrations are
expand/contract so the older build still runs on the newer schema.
"""
REWORDED = "how do we roll back a bad deploy?"  # no word of it is indexed in the runbook


def _ask(s: Shared, query: str, **extra: Any) -> dict[str, Any]:
    answer = s.call("search", {"query": query, **extra})
    answer.pop("query")
    return answer


def test_a_reworded_question_finds_its_note_first_over_mcp(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    (world.vault / "brain/Release reversal runbook.md").write_text(RUNBOOK, encoding="utf-8")
    with shared(world, cwd=world.repos["atlas"]) as s:
        found = _ask(s, REWORDED)
        by_words = _ask(s, REWORDED, mode="lexical")
        exact = _ask(s, "caches lie")
    assert found["mode"] == "hybrid" and found["hits"][0]["path"] == "brain/Release reversal runbook.md"
    assert found["hits"][0]["ranks"]["semantic"] == 1
    assert by_words["mode"] == "lexical"
    assert "brain/Release reversal runbook.md" not in [h["path"] for h in by_words["hits"][:1]]
    # Where the words match, that note stays first, and the hybrid list holds served notes only.
    assert exact["hits"][0]["path"] == "brain/Gotchas.md" and exact["match"] == "all"
    assert {h["path"] for h in found["hits"]} <= SERVED | {"brain/Release reversal runbook.md"}


def test_withheld_notes_change_no_hybrid_answer(tmp_path: Path) -> None:
    """The hostile vault (every withheld kind, plus a withheld note nearest the question) answers
    exactly what the same vault without its withheld files answers."""
    hostile = hostile_world(tmp_path / "hostile")
    (hostile.vault / "secrets/Rollback.md").write_text(RUNBOOK + "\nMARK-ROLLBACK\n", encoding="utf-8")
    clean = build_world(tmp_path / "clean")
    data = {**MANIFEST, "mcp_exposed_roots": [], "mcp_never_expose": ["SOUL.md", "secrets/"]}
    (clean.vault / "vault-manifest.json").write_text(json.dumps(data), encoding="utf-8")
    queries = [("hunter2", {}), ("caches hunter2", {}), (REWORDED, {}), ("pipeline", {"mode": "semantic"})]
    answers = []
    for world in (hostile, clean):
        with shared(world, cwd=world.repos["atlas"]) as s:
            answers.append([_ask(s, q, **extra) for q, extra in queries])
    assert answers[0] == answers[1]
    text = json.dumps(answers[0], ensure_ascii=False)
    assert "MARK-" not in text and "hunter2\\n" not in text and "sk-live" not in text
    assert all(a["mode"] != "lexical" and a["hits"] for a in answers[0])  # ranked by meaning: never empty
    assert answers[0][1]["match"] == "any"  # decided on readable notes: none holds both words
    assert not {h["path"] for a in answers[0] for h in a["hits"]} & (
        WITHHELD_FILES.keys() | {"secrets/Rollback.md"}
    )
