"""Issue 29: the flagship tells agents that `shardpy search` finds notes by meaning, not only by words
(its manuals, the vault-search skill, the session briefing and the bootstrap hook's qmd-absent line)."""

from __future__ import annotations

import re

import pytest

from tests.shardkit import REPO_ROOT

SHARD = REPO_ROOT / "shard-template"


@pytest.mark.parametrize(
    "rel",
    [
        "CLAUDE.md",
        "AGENTS.md",
        "GEMINI.md",
        ".claude/skills/vault-search/SKILL.md",
        ".claude/scripts/vaultlib/search.py",
        ".shardmind/hooks/bootstrap.py",
    ],
)
def test_the_flagship_says_shardpy_search_finds_by_meaning(rel: str) -> None:
    text = " ".join((SHARD / rel).read_text(encoding="utf-8").split())
    text = re.sub(r'"\s*"', "", text)  # Python's adjacent string literals read as one
    assert re.search(r"shardpy search[^.]{0,80}by words and by meaning", text), rel
    assert "falls back to grep" not in text and "(full-text)" not in text, rel
