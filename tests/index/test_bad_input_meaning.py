"""Issue 29's bad input for search by meaning that tests/index/test_semantic.py does not cover: a
vault of one note, a 100 MB note, a damaged vector file beside the index."""

from __future__ import annotations

from pathlib import Path

from shardpy import index
from shardpy.index import vectors
from tests.index.conftest import write


def test_a_vault_of_one_note(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "Only.md", "# Only\n\nFeed the sourdough starter with rye flour.\n")
    for mode in ("auto", "semantic"):
        found = index.search(vault, "baking bread at home", mode=mode)
        assert found.mode in ("hybrid", "semantic") and [h.path for h in found.hits] == ["Only.md"]
    assert index.search(vault, "kubernetes", mode="lexical").hits == []


def test_a_100_mb_note_is_skipped_and_search_by_meaning_still_answers(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "Bread.md", "# Bread\n\nFeed the sourdough starter with rye flour.\n")
    with open(vault / "Huge.md", "w", encoding="utf-8") as fh:
        line = "baking bread at home " * 50 + "\n"
        for _ in range(100 * 1024 * 1024 // len(line) + 1):
            fh.write(line)
    report = index.refresh(vault)
    assert [p for p, why in report.skipped if why.startswith("too large")] == ["Huge.md"]
    found = index.search(vault, "baking bread at home", mode="auto")
    assert found.mode == "hybrid" and [h.path for h in found.hits] == ["Bread.md"]


def test_a_damaged_vector_file_is_ignored_and_written_again(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "Bread.md", "# Bread\n\nFeed the sourdough starter with rye flour.\n")
    write(vault, "Cars.md", "# Cars\n\nChange the engine oil every ten thousand kilometres.\n")
    assert index.search(vault, "baking loaves", mode="semantic").hits[0].path == "Bread.md"
    side = Path(f"{index.index_path(vault)}.vectors")
    good = side.read_bytes()
    for damaged in (
        good[: len(good) // 2],
        b"garbage\n12\n" + b"\0" * 64,
        good.replace(b"format", b"f0rmat"),
        b"[" * 100_000 + b"\n12\n",  # a label nested past the JSON parser's depth
    ):
        side.write_bytes(damaged)
        vectors._CACHE.clear()  # as a new process would
        found = index.search(vault, "baking loaves", mode="semantic")
        assert [h.path for h in found.hits] == ["Bread.md", "Cars.md"]
        assert side.read_bytes() == good
