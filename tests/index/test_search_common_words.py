"""Issue 29: the any-word fallback leaves out the words found in at least half of the sections when
another word of the query is found: BM25 gives them no weight (FTS5 clamps their IDF), and ranking
their matches cost a question most of its time. A query of such words alone keeps them."""

from __future__ import annotations

from pathlib import Path

from shardpy import index
from shardpy.index import searcher, store
from shardpy.index.query import translate


def _vault(root: Path) -> Path:
    root.mkdir()
    (root / ".obsidian").mkdir()
    for i in range(12):
        words = "we do the dishes" if i < 8 else "plain words here"
        (root / f"n{i:02}.md").write_text(f"# Note {i}\n\n{words} number {i}\n")
    (root / "wombat.md").write_text("# Wombat\n\nthe wombat burrow, as we do\n")
    (root / "quokka.md").write_text("# Quokka\n\na quokka census\n")
    return root


def _search(vault: Path, query: str) -> tuple[str, list[str]]:
    got = index.search(vault, query, mode="lexical", max_age=float("inf"))
    return got.match, [h.path for h in got.hits]


def test_common_words_do_not_pad_an_any_word_answer(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    index.refresh(vault)
    # "we", "do" and "the" are each in more than half of the 14 sections; "wombat" and "quokka"
    # in one each; "zebu" in none (so no section holds every word).
    match, paths = _search(vault, "how do we find the wombat and the quokka zebu")
    assert match == "any"
    assert sorted(paths) == ["quokka.md", "wombat.md"]
    with store.reader(store.index_path(vault.resolve()), str(vault.resolve())) as conn:
        assert conn is not None
        tr = translate("how do we find the wombat and the quokka zebu")
        assert (
            searcher._weighed_fallback(conn, tr)
            == '"how" OR "find" OR "wombat" OR "and" OR "quokka" OR "zebu"'
        )
        # The full fallback ranks the same notes first: the common words only added the rest below.
        full = [r[2] for r in searcher._best_sections(conn, str(tr.fallback), _params(20))]
        assert sorted(full[:2]) == ["quokka.md", "wombat.md"] and len(full) == 10


def test_a_query_of_common_words_alone_keeps_them(tmp_path: Path) -> None:
    vault = _vault(tmp_path / "v")
    index.refresh(vault)
    match, paths = _search(vault, "we do zebu")  # zebu is nowhere: the common words still answer
    assert match == "any" and len(paths) == 9 and "wombat.md" in paths
    match, paths = _search(vault, "the dishes")  # every word in one note: no fallback at all
    assert match == "all" and len(paths) == 8


def _params(limit: int) -> dict[str, object]:
    return {"type": None, "path": None, "dir": None, "limit": limit, "offset": 0}
