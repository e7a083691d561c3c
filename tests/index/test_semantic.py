"""Search by meaning (issue 29): the bundled model, vectors beside FTS5, hybrid ranking, offline."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from shardpy import index
from shardpy.index import embed, store
from tests.index.conftest import write

RUNBOOK = """# Release reversal runbook

## Steps

Pin the previous image tag in the environment file, then run the pipeline's
promote job against it. The database is never reverted: migrations are
expand/contract so the older build still runs on the newer schema.

## After

Clear the CDN only once the older build is serving.
"""
OTHERS = {
    "Sourdough starter care.md": "# Sourdough starter care\n\nFeed the starter with rye flour and water "
    "every twelve hours. A grey layer on top means it is hungry: pour it off and feed.\n",
    "Marathon training plan.md": "# Marathon training plan\n\nSixteen weeks to race day, four runs a "
    "week; the long run grows by two kilometres a week up to 32.\n",
    "Quarterly planning.md": "# Quarterly planning\n\nEach team drafts objectives three weeks before "
    "the quarter; capacity is counted at 70% of headcount.\n",
    "Home network.md": "# Home network\n\nThe router runs OPNsense; cameras sit on their own VLAN; "
    "Pi-hole answers DNS.\n",
}
REWORDED = "how do we roll back a bad deploy?"  # not one word of it is indexed in the runbook


def _vault(root: Path) -> Path:
    write(root, "ops/Release reversal runbook.md", RUNBOOK)
    for rel, text in OTHERS.items():
        write(root, rel, text)
    return root


def _db(vault: Path) -> sqlite3.Connection:
    return sqlite3.connect(index.index_path(vault))


class _Counting:
    """The real model, recording what it is asked to embed."""

    def __init__(self, inner: embed.Embedder) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.texts: list[str] = []

    def encode(self, texts: Sequence[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.encode(texts)


@pytest.fixture
def counting(monkeypatch: pytest.MonkeyPatch) -> _Counting:
    model = _Counting(embed.load())
    monkeypatch.setattr(embed, "load", lambda: model)
    return model


def test_a_reworded_question_finds_its_note_first_where_lexical_search_fails(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    lexical = index.search(vault, REWORDED, mode="lexical")
    assert not lexical.hits or lexical.hits[0].path != "ops/Release reversal runbook.md"
    result = index.search(vault, REWORDED, mode="auto")
    assert result.mode == "hybrid"
    assert result.hits[0].path == "ops/Release reversal runbook.md"
    assert result.hits[0].ranks is not None and result.hits[0].ranks["semantic"] == 1
    # Where the words match, the lexical answer stays first.
    exact = index.search(vault, "rye flour", mode="auto")
    assert exact.hits[0].path == "Sourdough starter care.md" and exact.hits[0].ranks == {
        "semantic": 1,
        "lexical": 1,
    }


def test_an_edit_re_embeds_only_the_edited_section(tmp_path: Path, counting: _Counting) -> None:
    vault = _vault(tmp_path / "v")
    index.refresh(vault)
    assert len(counting.texts) == 6  # every section once: the runbook's two, one per other note
    counting.texts.clear()
    write(vault, "ops/Release reversal runbook.md", RUNBOOK.replace("Clear the CDN", "Purge the CDN"))
    index.refresh(vault)
    assert len(counting.texts) == 1 and "Purge the CDN" in counting.texts[0]
    counting.texts.clear()
    assert index.refresh(vault).unchanged == 5 and counting.texts == []


def test_rename_and_delete_drop_the_vectors(tmp_path: Path, counting: _Counting) -> None:
    vault = _vault(tmp_path / "v")
    index.refresh(vault)
    counting.texts.clear()
    os.rename(vault / "Home network.md", vault / "House network.md")
    index.refresh(vault)
    assert counting.texts == []  # the same text under a new path keeps its vector
    (vault / "Marathon training plan.md").unlink()
    index.refresh(vault)
    with _db(vault) as conn:
        chunks = {r[0] for r in conn.execute("SELECT id FROM chunks")}
        vecs = {r[0] for r in conn.execute("SELECT chunk_id FROM vectors")}
    assert vecs == chunks and len(chunks) == 5
    paths = [h.path for h in index.search(vault, "getting ready for 42 km", mode="semantic").hits]
    assert "Marathon training plan.md" not in paths and "House network.md" in paths


@pytest.mark.parametrize(
    "query", ['"previous image"', "previous NOT sourdough", "promo*", "title:runbook", "(expand OR rye)"]
)
def test_fts5_syntax_keeps_its_lexical_meaning(tmp_path: Path, query: str) -> None:
    vault = _vault(tmp_path / "v")
    plain = index.search(vault, query)
    for mode in ("auto", "hybrid"):
        got = index.search(vault, query, mode=mode)
        assert got.mode == "lexical"
        assert [h.path for h in got.hits] == [h.path for h in plain.hits]


def test_hybrid_hits_carry_the_lexical_snippets_made_only_for_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A hybrid search ranks 50 notes by words to show `top`: FTS5's snippet() was made for all 50
    (4-9 ms of a one-shot search at 20,000 notes, issue 29). Now only the hits shown get one, and
    they are the snippets the lexical search gives, marks included; a page past the first too."""
    vault = _vault(tmp_path / "v")
    for k in range(14):
        write(vault, f"flour/Loaf {k:02}.md", f"# Loaf {k}\n\nWeigh the rye flour, then the water ({k}).\n")
    from shardpy.index import searcher

    made: list[int] = []
    real = searcher._snippets

    def counting(conn: sqlite3.Connection, expr: str, ids: list[int], *rest: Any) -> dict[int, str]:
        made.append(len(ids))
        return real(conn, expr, ids, *rest)

    lexical = {h.path: h.snippet for h in index.search(vault, "rye flour", top=20).hits}
    monkeypatch.setattr(searcher, "_snippets", counting)
    from shardpy.index import hybrid

    for offset, keep in ((0, None), (3, None), (0, lambda p: "Loaf 03" not in p)):  # keep: MCP's filter
        made.clear()
        got = hybrid.search(vault, "rye flour", mode="hybrid", top=4, offset=offset, keep=keep)
        assert got.mode == "hybrid" and len(got.hits) == 4
        assert sum(made) <= 4, made  # the page's, not the 50 ranked
        for hit in got.hits:
            assert hit.snippet == lexical[hit.path] and "«rye»" in hit.snippet, hit


def test_json_hits_carry_the_mode_and_the_rank_of_each_signal(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    data = index.search(vault, "rye flour", mode="hybrid").to_json()
    assert data["mode"] == "hybrid"
    assert data["hits"][0]["mode"] == "hybrid" and data["hits"][0]["ranks"] == {"semantic": 1, "lexical": 1}
    assert "mode" not in index.search(vault, "rye flour").to_json()  # the plain API answers as before


def test_without_the_model_search_says_so_once_and_answers_by_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "v")
    monkeypatch.setenv(embed.ENV, str(tmp_path / "removed-model"))
    first = index.search(vault, "rye flour", mode="auto")
    assert first.mode == "lexical" and [h.path for h in first.hits] == ["Sourdough starter care.md"]
    assert sum("search by meaning unavailable" in n for n in first.notices) == 1
    again = index.search(vault, "rye flour", mode="auto")
    assert again.mode == "lexical" and not any("unavailable" in n for n in again.notices)


def test_a_damaged_vector_table_is_rebuilt_with_a_notice(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    index.refresh(vault)
    with _db(vault) as conn:
        conn.execute("UPDATE vectors SET vec = x'00'")
    result = index.search(vault, REWORDED, mode="auto")
    assert any("vector table was damaged" in n for n in result.notices)
    assert result.mode == "hybrid" and result.hits[0].path == "ops/Release reversal runbook.md"
    with _db(vault) as conn:
        assert (
            conn.execute("SELECT count(*) FROM vectors WHERE length(vec) = 256").fetchone()[0] == 6
        )  # int8 rows


def test_another_model_rebuilds_the_vectors(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path / "v")
    index.refresh(vault)
    monkeypatch.setenv(embed.ENV, "off")
    assert index.search(vault, REWORDED, mode="auto").mode == "lexical"
    index.refresh(vault, only=["Home network.md"])
    with _db(vault) as conn:
        assert store.get_meta(conn, "embed_model") is None
    monkeypatch.delenv(embed.ENV)
    assert index.search(vault, REWORDED, mode="auto").hits[0].path == "ops/Release reversal runbook.md"


_NO_NETWORK = """
import socket

def _refuse(*args, **kwargs):
    raise OSError("network blocked by the test")

socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
socket.create_connection = _refuse
socket.getaddrinfo = _refuse
"""


def test_the_cli_searches_by_meaning_with_the_network_blocked(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    blocker = tmp_path / "blocker"
    write(blocker, "sitecustomize.py", _NO_NETWORK)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")])}
    for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", embed.ENV):
        env.pop(key, None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "shardpy", *args], cwd=vault, env=env, capture_output=True, text=True
        )

    probe = run("index", "--json")
    assert probe.returncode == 0 and "Traceback" not in probe.stderr, probe.stderr
    done = run("search", REWORDED, "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["mode"] == "hybrid" and data["hits"][0]["path"] == "ops/Release reversal runbook.md"
    check = subprocess.run(
        [sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9))"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert "network blocked by the test" in check.stderr  # the blocker was in force


def test_mcp_recall_orders_each_group_by_meaning_and_keeps_superseded_last(tmp_path: Path) -> None:
    from tests.serve.kit import build_world, shared

    world = build_world(tmp_path / "world")
    with shared(world, cwd=world.repos["atlas"]) as s:
        for title, body in (
            ("Alpha release reversal", "Pin the previous image tag in the environment file and promote it."),
            ("Bread starter", "Feed the sourdough starter with rye flour every twelve hours."),
        ):
            assert s.call("remember", {"title": title, "body": body, "scope": "project"})["recorded"]
        plain = s.call("recall", {"limit": 50})["memories"]
        asked = s.call("recall", {"limit": 50, "query": REWORDED})["memories"]
    assert asked[0]["title"] == "Alpha release reversal"  # no word of the question is in the memory
    assert sorted(m["path"] for m in asked) == sorted(m["path"] for m in plain)  # never filters
    live = [m["superseded_by"] in ("", None) for m in asked]
    assert live == sorted(live, reverse=True)  # a superseded memory is never lifted above a live one


@pytest.mark.parametrize(
    "query", ["x", "a" * 1000, "the and of", "🎉🎉", "数据库 复制 and русский", REWORDED]
)
def test_odd_queries_and_vaults_answer_by_meaning_without_a_traceback(tmp_path: Path, query: str) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert index.search(empty, query, mode="auto").hits == []
    vault = _vault(tmp_path / "v")
    (vault / "binary.md").write_bytes(b"\x00\x01" * 1000)
    write(vault, "mixed.md", "# Mixed\n\n数据库 复制 and Ελληνικά and русский 🎉 text\n")
    result = index.search(vault, query, mode="auto")
    assert result.mode == "hybrid" and result.hits and "binary.md" not in [h.path for h in result.hits]


def test_heavy_imports_only_where_a_model_is_needed(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    index.refresh(vault)
    probe = (
        "import sys\nfrom pathlib import Path\nfrom shardpy import index\n"
        f"v = Path({str(vault)!r})\n"
        "assert index.refresh(v).unchanged == 5\n"  # nothing changed: the model is not loaded
        "index.search(v, 'rye flour', mode='lexical')\n"
        "assert 'numpy' not in sys.modules and 'tokenizers' not in sys.modules, 'heavy import'\n"
        "assert index.search(v, 'rye flour', mode='auto').mode == 'hybrid'\n"
        # the search by meaning scans with SimSIMD: numpy is an indexing import (issue 29)
        "assert 'simsimd' in sys.modules and 'numpy' not in sys.modules, 'numpy in a search'\n"
        "assert 'tokenizers' not in sys.modules, 'tokenizers in a search'\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=os.environ.copy()
    )
    assert done.returncode == 0, done.stderr
