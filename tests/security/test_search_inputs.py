"""Issue 24, items 12, 13, 15: what a search query, a manifest's search section or one note can do.

Every query string gets an answer or a typed error (never an ``sqlite3`` traceback); a hostile
``search`` section is refused by key, quickly; one note nested 400 deep is indexed as plain text
and breaks nothing else (index, CLI, MCP search and expand).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardpy import index
from shardpy.errors import ShardpyError
from tests.shardkit import run_shardpy

# FTS5's own syntax, weighted so that most generated queries are mostly syntax.
_SYNTAX = ['"', "*", "(", ")", ":", "^", "+", "-", "{", "}", ",", " ", "AND", "OR", "NOT", "NEAR", "title"]
QUERIES = st.lists(st.one_of(st.sampled_from(_SYNTAX), st.text(max_size=3)), max_size=40).map("".join)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search-inputs") / "vault"
    (root / "brain").mkdir(parents=True)
    (root / "brain/Probes.md").write_text("# Probes\n\ncapacitive probes and title words\n", encoding="utf-8")
    index.refresh(root)
    return root


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES)
def test_any_query_string_answers_or_is_a_typed_error(vault: Path, query: str) -> None:
    try:
        result = index.search(vault, query, max_age=float("inf"))
    except ShardpyError:
        return
    assert result.match in ("all", "any")


@pytest.mark.parametrize("query", ['"', "*", "(" * 500, "^", ":", '"""'])
def test_fts5_syntax_without_words_answers_nothing_with_a_notice(vault: Path, query: str) -> None:
    result = index.search(vault, query, max_age=float("inf"))
    assert result.hits == [] and any("not understood" in n for n in result.notices)


def test_cli_never_prints_a_traceback_for_a_query(vault: Path, tmp_path: Path) -> None:
    for query in ('"', "*", "(" * 500):
        proc = run_shardpy("search", query, "--vault", vault, cwd=tmp_path)
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        assert proc.returncode == 0 and "No notes match" in proc.stdout
