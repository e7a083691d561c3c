"""Read connections kept between searches never answer from a file that is no longer the index."""

from __future__ import annotations

import threading
from pathlib import Path

from shardpy import index
from shardpy.index import store
from tests.index.conftest import write

INF = float("inf")


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "a.md", "# Alpha\n\n## Probes\n\nCapacitive probes.\n")
    return root


def test_a_rebuilt_index_is_read_not_the_kept_connection(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    assert [h.path for h in index.search(root, "probes").hits] == ["a.md"]
    db = index.index_path(root)
    store.remove(db)  # what a rebuild does first: a new file takes the old one's name
    write(root, "b.md", "# Beta\n\n## Probes\n\nMore probes.\n")
    index.refresh(root)
    assert sorted(h.path for h in index.search(root, "probes", max_age=INF).hits) == ["a.md", "b.md"]


def test_a_file_overwritten_in_place_is_checked_again(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    index.search(root, "probes")
    db = index.index_path(root)
    store.remove(db)
    db.write_bytes(b"not a database at all" * 100)  # same name, garbage
    result = index.search(root, "probes", max_age=INF)
    assert [h.path for h in result.hits] == ["a.md"]
    assert any("rebuilt" in n for n in result.notices)


def test_commits_after_the_first_search_are_seen(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    index.search(root, "probes")
    write(root, "c.md", "# Gamma\n\n## Zebrafish\n\nZebrafish tanks.\n")
    index.refresh(root, only=["c.md"])
    assert [h.path for h in index.search(root, "zebrafish", max_age=INF).hits] == ["c.md"]


def test_searches_from_several_threads_at_once(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    index.search(root, "probes")
    found: list[list[str]] = []

    def run() -> None:
        for _ in range(20):
            found.append([h.path for h in index.search(root, "capacitive", max_age=INF).hits])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert found == [["a.md"]] * 80
