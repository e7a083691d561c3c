"""Issue 29: a hybrid search does not rank by words that weigh nothing. A word in at least half of
the sections gets no weight from BM25 (FTS5 clamps its IDF to 1e-6), so the list by words only
orders sections by how often they repeat it; ranking it cost a one-shot search over notes that all
hold the word most of its time. Such a query is ranked by meaning, says so, and keeps its marks;
a word that weighs something is fused as before, and without the model the words are ranked."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardpy import index
from shardpy.index import hybrid, searcher, store
from shardpy.index.query import translate
from tests.index.conftest import write

TOPICS = [
    "the sourdough starter wants rye flour and water twice a day",
    "the marathon plan adds two kilometres to the long run each week",
    "the router sits behind a firewall with cameras on their own network",
    "quarterly objectives are drafted three weeks before the quarter",
    "the release is rolled back by pinning the previous image tag",
    "the greenhouse tomatoes need staking before the first truss",
]


def _vault(root: Path) -> Path:
    """Twelve one-section notes, every one saying "report"; "wombat" in one."""
    for i in range(12):
        extra = " a wombat dug under the fence" if i == 5 else ""
        write(root, f"n{i:02}.md", f"# Note {i}\n\nReport: {TOPICS[i % len(TOPICS)]} ({i}).{extra}\n")
    index.refresh(root)
    return root


def _never_ranked(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_a: Any) -> Any:
        raise AssertionError("the words were ranked")

    monkeypatch.setattr(searcher, "_best_sections", refuse)


def test_words_in_half_the_sections_are_ranked_by_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "v")
    by_meaning = index.search(vault, "report dough", mode="semantic", max_age=float("inf"))
    _never_ranked(monkeypatch)
    got = index.search(vault, "report", mode="auto", max_age=float("inf"))
    assert got.mode == "hybrid" and got.match == "all" and len(got.hits) == 10
    assert hybrid.UNWEIGHED in got.notices
    # Every note holds the word: the list by words is the list by meaning, and so is the page.
    assert all(h.ranks == {"semantic": i, "lexical": i} for i, h in enumerate(got.hits, 1)), got.hits
    assert all("«Report»" in h.snippet for h in got.hits), [h.snippet for h in got.hits]
    # Two such words, one of them in no section: "any", and still by meaning alone.
    got = index.search(vault, "report dough", mode="auto", max_age=float("inf"))
    assert got.match == "any" and [h.path for h in got.hits] == [h.path for h in by_meaning.hits]


def test_the_notes_holding_the_words_are_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Which notes hold a word that weighs nothing still says something: they are fused as the list
    by words (in their order by meaning), so they come before a nearer note without the word, as the
    ranked list put them."""
    vault = tmp_path / "v"
    write(vault, "Release.md", "# Release process\n\nShip the build to the production servers.\n")
    write(vault, "Rollout.md", "# Rollout runbook\n\nPush the new version live, then watch the graphs.\n")
    write(vault, "Garden.md", "# Garden\n\nDeploy the tomato stakes in spring.\n")
    write(vault, "Bakery.md", "# Bakery\n\nDeploy the oven timer before the loaves go in.\n")
    index.refresh(vault)
    by_meaning = [h.path for h in index.search(vault, "deploy", mode="semantic", max_age=float("inf")).hits]
    assert by_meaning[0] in ("Release.md", "Rollout.md"), by_meaning  # a note without the word is nearest
    _never_ranked(monkeypatch)
    got = index.search(vault, "deploy", mode="auto", max_age=float("inf"))
    assert hybrid.UNWEIGHED in got.notices and got.match == "all"
    assert sorted(h.path for h in got.hits[:2]) == ["Bakery.md", "Garden.md"], got.hits
    assert all("«Deploy»" in h.snippet and "lexical" in (h.ranks or {}) for h in got.hits[:2])
    assert [h.path for h in got.hits[2:]] == [p for p in by_meaning if p not in ("Bakery.md", "Garden.md")]


def test_a_narrow_and_of_common_words_is_ranked(tmp_path: Path) -> None:
    """Each word in half the sections, but few sections holding both: which ones is news, so they
    are ranked as always (they were lost when they were not among the notes nearest by meaning;
    helper-found)."""
    vault = tmp_path / "v"
    sea = "The tide rolled over the shingle at dusk while gulls wheeled above the harbour; an old "
    for i in range(120):
        words = "invoice billing: accounts payable" if i % 2 else "vendor procurement: purchase order"
        write(vault, f"n{i:03}.md", f"# N{i}\n\n{words}, statement {i}\n")
    for i in range(2):
        write(vault, f"sea{i}.md", f"# Sea {i}\n\n{sea}fisherman sang of a vendor and an invoice.\n")
    index.refresh(vault)
    got = index.search(vault, "vendor invoice", mode="auto", max_age=float("inf"))
    assert got.match == "all" and hybrid.UNWEIGHED not in got.notices
    lexical = {h.path: (h.ranks or {}).get("lexical") for h in got.hits}
    assert {lexical.get("sea0.md"), lexical.get("sea1.md")} == {1, 2}, got.hits


def test_a_filtered_search_decides_all_words_on_the_notes_it_may_show(tmp_path: Path) -> None:
    """Under a filter the words are ranked, so "all" is decided over the notes shown: decided over
    the whole index it told an MCP caller that a note it may not read holds every word."""
    vault = tmp_path / "v"
    for i in range(4):
        write(vault, f"a/n{i}.md", f"# A{i}\n\nalpha beta {i}\n")
        write(vault, f"b/n{i}.md", f"# B{i}\n\n{'alpha' if i % 2 else 'beta'} {i}\n")
    index.refresh(vault)
    assert index.search(vault, "alpha beta", mode="auto", max_age=float("inf")).match == "all"
    assert index.search(vault, "alpha beta", mode="auto", path="b", max_age=float("inf")).match == "any"
    only_b = hybrid.search(vault, "alpha beta", max_age=float("inf"), keep=lambda p: p.startswith("b/"))
    assert only_b.match == "any" and all(h.path.startswith("b/") for h in only_b.hits)


def test_a_word_that_weighs_something_is_fused_as_before(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    for query in ("wombat", "report wombat"):
        got = index.search(vault, query, mode="auto", max_age=float("inf"))
        assert hybrid.UNWEIGHED not in got.notices
        assert got.hits[0].path == "n05.md" and got.hits[0].ranks == {"semantic": 1, "lexical": 1}
        assert "«wombat»" in got.hits[0].snippet


def test_without_the_model_the_words_are_ranked_after_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "v")
    lexical = index.search(vault, "report", mode="lexical", max_age=float("inf"))
    monkeypatch.setenv("SHARDPY_EMBED_MODEL", "off")
    got = index.search(vault, "report", mode="auto", max_age=float("inf"))
    assert got.mode == "lexical" and hybrid.UNWEIGHED not in got.notices
    assert [(h.path, h.snippet) for h in got.hits] == [(h.path, h.snippet) for h in lexical.hits]


def test_a_search_by_meaning_alone_ranks_no_words(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vault = _vault(tmp_path / "v")
    lexical = index.search(vault, "wombat*", mode="lexical", max_age=float("inf"))
    _never_ranked(monkeypatch)
    got = index.search(vault, "wombat", mode="semantic", max_age=float("inf"))
    assert got.mode == "semantic" and got.hits[0].path == "n05.md"
    assert "«wombat»" in got.hits[0].snippet  # the words marked where a section holds them
    monkeypatch.undo()
    # FTS5 syntax is searched by words, whatever the mode asked.
    got = index.search(vault, "wombat*", mode="semantic", max_age=float("inf"))
    assert got.mode == "lexical" and [h.path for h in got.hits] == [h.path for h in lexical.hits]


def test_a_note_edited_in_place_is_shown_as_it_is_now(tmp_path: Path) -> None:
    """The page by meaning is checked as a ranked page is: a note shown that changed since it was
    indexed (an edit in place, which no folder's time shows) gets the index refreshed first, so its
    new text is shown (helper-found: the unranked page had no hits of its own to check)."""
    for mode in ("auto", "semantic"):
        vault = _vault(tmp_path / mode)
        old = time.time() - 600
        os.utime(vault, (old, old))  # the folder's time says nothing changed
        (vault / "n09.md").write_text("# Note 9\n\nReport: the zebu herd moved to the hill pasture.\n")
        got = index.search(vault, "report", mode=mode, top=12)
        shown = {h.path: h.snippet for h in got.hits}
        assert "zebu" in shown["n09.md"], (mode, shown["n09.md"])


def test_sections_waiting_for_vectors_are_found_by_their_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refresh whose model could not load leaves the new note without a vector: the list by
    meaning cannot hold it, so the words are ranked and find it (helper-found)."""
    vault = _vault(tmp_path / "v")
    write(vault, "wombat.md", "# Wombat\n\nReport report report: the wombat report.\n")
    monkeypatch.setenv("SHARDPY_EMBED_MODEL", str(tmp_path / "no-such-model"))
    index.refresh(vault)
    monkeypatch.delenv("SHARDPY_EMBED_MODEL")
    got = index.search(vault, "report", mode="auto", top=20, max_age=float("inf"))
    assert got.mode == "hybrid" and hybrid.UNWEIGHED not in got.notices
    assert "wombat.md" in [h.path for h in got.hits], got.hits


def test_a_refresh_that_fails_is_said_and_the_page_not_made_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "v")
    old = time.time() - 600
    os.utime(vault, (old, old))
    (vault / "n09.md").write_text("# Note 9\n\nReport: the zebu herd moved to the hill pasture.\n")
    from shardpy.errors import ShardpyError
    from shardpy.index import build

    def full(*_a: Any, **_k: Any) -> Any:
        raise ShardpyError("DISK_FULL", "The disk is full", "Free some space.")

    made: list[int] = []
    real = hybrid._with_meaning
    monkeypatch.setattr(build, "refresh", full)
    monkeypatch.setattr(hybrid, "_with_meaning", lambda *a: made.append(1) or real(*a))
    got = index.search(vault, "report", mode="auto", top=12)
    assert made == [1] and got.hits  # the index as it is answers, once (helper-found)
    assert any("could not be refreshed" in n for n in got.notices), got.notices


def test_the_model_said_unavailable_once_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The refresh that finds the model gone says so once (it is stored); the search that ran it
    must pass it on, also when it ranks the words again for sections without vectors
    (helper-found: the second ranking's notices replaced the first's)."""
    vault = _vault(tmp_path / "v")
    write(vault, "new.md", "# New\n\nReport: a new note.\n")
    monkeypatch.setenv("SHARDPY_EMBED_MODEL", str(tmp_path / "no-such-model"))
    got = index.search(vault, "report", mode="auto")
    assert got.mode == "lexical"
    assert [n for n in got.notices if "search by meaning unavailable" in n], got.notices


def test_a_filtered_caller_ranks_its_words(tmp_path: Path) -> None:
    """An MCP caller (``keep``) or a --type/--path search ranks the words, over the notes it may
    show: the fusion is the one words that weigh something get."""
    vault = _vault(tmp_path / "v")
    kept = hybrid.search(vault, "report", max_age=float("inf"), keep=lambda p: p != "n03.md")
    under = index.search(vault, "report", mode="auto", path="n03.md", max_age=float("inf"))
    for got in (kept, under):
        assert hybrid.UNWEIGHED not in got.notices and got.hits
        assert all("lexical" in (h.ranks or {}) for h in got.hits)
    assert "n03.md" not in [h.path for h in kept.hits] and [h.path for h in under.hits] == ["n03.md"]


def _scores(conn: sqlite3.Connection, expression: str) -> list[float]:
    return [float(r[0]) for r in conn.execute("SELECT rank FROM fts WHERE fts MATCH ?", (expression,))]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes=st.integers(1, 9), holding=st.data())
def test_the_rule_is_fts5s_own_clamp(
    tmp_path_factory: pytest.TempPathFactory, notes: int, holding: Any
) -> None:
    """Unweighed exactly when FTS5's bm25 gives every match of the word a score of its clamped IDF
    (1e-6 times at most k1 + 1 times the heaviest column weight), so the rule follows FTS5's
    arithmetic, not a copy of it that could drift."""
    k = holding.draw(st.integers(1, notes))
    root = tmp_path_factory.mktemp("v")
    for i in range(notes):
        write(root, f"n{i}.md", "ibis walk\n" if i < k else "plain walk\n")
    index.refresh(root)
    with store.reader(store.index_path(root.resolve()), str(root.resolve())) as conn:
        assert conn is not None
        sections = int(conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
        scores = _scores(conn, '"ibis"')
        unweighed = searcher._unweighed(conn, translate("ibis"))
    assert len(scores) == k and sections == notes
    clamped = max(abs(s) for s in scores) < 1e-5
    assert (unweighed is not None) == clamped == (2 * k >= notes), (k, notes, scores)
