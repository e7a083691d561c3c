"""A large refresh embeds its sections in forked workers (issue 29, the cold index's cost): the same
vectors as one process, every row where it belongs, and an edit afterwards still re-embeds only
what changed."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from shardpy import index, workers
from shardpy.index import embed, vectors
from tests.index.conftest import write


def _vault(root: Path) -> Path:
    for i in range(30):
        write(
            root,
            f"area-{i % 3}/Note {i:02}.md",
            f"# Note {i}\n\nPreamble {i} on kilns and glazes.\n\n## Firing\n\nCone {i} in a gas kiln, "
            f"reduction at {900 + i} degrees.\n\n## Notes  with  runs   of spaces \n\nsecond {i}  \n",
        )
    return root


def _vectors(cache: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(cache))
    index.refresh(vault)
    with sqlite3.connect(index.index_path(vault)) as conn:
        rows = conn.execute(
            "SELECT f.path, c.line, v.vec FROM vectors AS v JOIN chunks AS c ON c.id = v.chunk_id "
            "JOIN files AS f ON f.id = c.file_id"
        ).fetchall()
    return {f"{path}:{line}": bytes(vec) for path, line, vec in rows}


def test_a_large_refresh_embeds_in_workers_and_stores_what_one_process_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "v")
    assert getattr(embed.load(), "forkable", False)  # the bundled model: numpy and plain-Python BPE
    monkeypatch.setattr(vectors, "EMBED_STEP", 7)  # 90 sections: 13 steps, the last one short
    serial = _vectors(tmp_path / "serial", vault, monkeypatch)

    pids = tmp_path / "pids"
    rows = vectors._rows

    def recorded(work: tuple[embed.Embedder, list[str]], lo: int, hi: int) -> bytes:
        with open(pids, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
        return rows(work, lo, hi)

    monkeypatch.setattr(vectors, "_rows", recorded)
    monkeypatch.setattr(vectors, "PARALLEL_SECTIONS", 10)
    monkeypatch.setattr(workers, "available_workers", lambda: 2)
    parallel = _vectors(tmp_path / "parallel", vault, monkeypatch)

    seen = set(pids.read_text(encoding="utf-8").split())
    assert str(os.getpid()) not in seen and len(pids.read_text().split()) == 13  # every step, in workers
    assert len(serial) == 90 and parallel == serial  # byte for byte, each section's own vector

    # After the parallel build, an edit re-embeds one section, in this process (one is below the bar).
    pids.unlink()
    note = vault / "area-1/Note 04.md"
    note.write_text(note.read_text().replace("gas kiln", "wood kiln"), encoding="utf-8")
    assert index.refresh(vault).indexed == 1
    assert pids.read_text().split() == [str(os.getpid())]
