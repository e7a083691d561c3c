"""Issue 29: the first search after a refresh that changed a vector maps the vector file written
before it and reads from the table only the sections the refresh touched (it read the whole table
again: 0.9 s at 20,000 notes after each run of the write hook). Every answer must equal the one a
whole read gives, including when a refresh hands a freed section id out again."""

from __future__ import annotations

import os
from array import array
from pathlib import Path

import pytest

from shardpy import index
from shardpy.index import embed, store, vectors
from tests.index.conftest import write

NOTES = {
    "garden/Tomatoes.md": "# Tomatoes\n\nStake the vines early and water at the roots in July.\n",
    "kitchen/Bread.md": "# Bread\n\nA sourdough starter needs rye flour and a warm shelf.\n",
    "ops/Backups.md": "# Backups\n\nThe nightly job copies the database to cold storage.\n",
    "travel/Lisbon.md": "# Lisbon\n\nTrams climb the hills; the castle closes at dusk.\n",
}
QUERIES = ["growing vegetables", "baking", "restoring lost data", "a city trip", "database"]


def _answers(vault: Path) -> list[list[tuple[str, float]]]:
    return [
        [(h.path, round(h.score, 5)) for h in index.search(vault, q, mode="semantic", top=10).hits]
        for q in QUERIES
    ]


def _side(vault: Path) -> Path:
    return Path(f"{store.index_path(vault.resolve())}.vectors")


def _whole_read(vault: Path) -> list[list[tuple[str, float]]]:
    """The answers of a process with no vector file: the table read whole."""
    vectors._CACHE.clear()
    _side(vault).unlink(missing_ok=True)
    return _answers(vault)


def _new_process(vault: Path) -> tuple[list[list[tuple[str, float]]], vectors.Matrix]:
    vectors._CACHE.clear()
    got = _answers(vault)
    (kept,) = vectors._CACHE.values()
    return got, kept[1]


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    for rel, text in NOTES.items():
        write(root, rel, text)
    (root / ".obsidian").mkdir()
    index.refresh(root)
    _answers(root)  # the first search writes the vector file
    assert _side(root).exists()
    return root


def test_an_edit_reads_only_the_touched_rows_and_answers_as_a_whole_read(vault: Path) -> None:
    written = _side(vault).stat()
    write(vault, "garden/Tomatoes.md", NOTES["garden/Tomatoes.md"] + "\n## Pests\n\nAphids on the leaves.\n")
    index.refresh(vault, only=["garden/Tomatoes.md"])
    got, mat = _new_process(vault)
    assert mat.extra is not None and mat.hidden  # patched: the file's rows plus the touched ones
    again = _side(vault).stat()
    assert (again.st_ino, again.st_mtime_ns) == (written.st_ino, written.st_mtime_ns)  # not rewritten
    assert got == _whole_read(vault)


def test_a_freed_section_id_handed_out_again_is_not_the_old_vector(vault: Path) -> None:
    with store.reader(store.index_path(vault.resolve()), str(vault.resolve())) as conn:
        assert conn is not None
        newest = conn.execute(
            "SELECT f.path FROM chunks AS c JOIN files AS f ON f.id = c.file_id ORDER BY c.id DESC LIMIT 1"
        ).fetchone()[0]
    os.remove(vault / newest)
    index.refresh(vault)
    write(vault, "music/Cello.md", "# Cello\n\nBow hold, rosin, and the open C string.\n")
    index.refresh(vault)  # the new note's section takes the freed id
    got, mat = _new_process(vault)
    assert mat.extra is not None
    assert got == _whole_read(vault)
    paths = {p for hits in got for p, _s in hits}
    assert newest not in paths and "music/Cello.md" in paths


def test_many_touched_rows_or_a_new_log_read_the_table_whole(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "PATCH_MIN", 0)  # more than 1/8 of 4 rows: the whole table
    write(vault, "kitchen/Bread.md", NOTES["kitchen/Bread.md"] + "\nFeed it twice a day.\n")
    index.refresh(vault, only=["kitchen/Bread.md"])
    got, mat = _new_process(vault)
    assert mat.extra is None and not mat.hidden
    assert got == _whole_read(vault)
    monkeypatch.setattr(vectors, "PATCH_MIN", 4096)
    written = _side(vault).stat()
    db = store.index_path(vault.resolve())
    with store.reader(db, str(vault.resolve())) as conn:  # a table dropped and built again: a new log
        assert conn is not None
        vectors.drop(conn)
    index.refresh(vault)
    got, mat = _new_process(vault)
    assert mat.extra is None and _side(vault).stat().st_ino != written.st_ino
    assert got == _whole_read(vault)


def test_a_log_pruned_past_the_file_reads_the_table_whole(vault: Path) -> None:
    write(vault, "travel/Lisbon.md", NOTES["travel/Lisbon.md"] + "\nPasteis in Belem.\n")
    index.refresh(vault, only=["travel/Lisbon.md"])
    with store.reader(store.index_path(vault.resolve()), str(vault.resolve())) as conn:
        assert conn is not None
        conn.execute("DELETE FROM vectors_log")  # as if pruned: the file's point is gone
        conn.execute("INSERT INTO vectors_log (seq, chunk_id) VALUES (100000, 1)")
    got, mat = _new_process(vault)
    assert mat.extra is None
    assert got == _whole_read(vault)


def test_float32_rows_from_before_are_quantized_in_place_not_embedded_again(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index written before rows were stored as int8 holds float32 blobs and no ``vectors_dtype``:
    the next search has the refresh quantize them (no section embedded again) and answers as a
    fresh index does."""
    fresh = _answers(vault)
    db = store.index_path(vault.resolve())
    with store.reader(db, str(vault.resolve())) as conn:
        assert conn is not None
        for cid, vec in conn.execute("SELECT chunk_id, vec FROM vectors").fetchall():
            as_floats = array("f", [x / 127 for x in array("b", vec)])  # int8_rows gives these back
            conn.execute("UPDATE vectors SET vec = ? WHERE chunk_id = ?", (as_floats.tobytes(), cid))
        conn.execute("DELETE FROM meta WHERE key = 'vectors_dtype'")
    vectors._CACHE.clear()

    def embedded(model: object, texts: list[str]) -> object:
        assert not texts, "a section was embedded again"
        return iter(())

    monkeypatch.setattr(vectors, "_embedded", embedded)
    assert _answers(vault) == fresh
    with store.reader(db, str(vault.resolve())) as conn:
        assert conn is not None
        assert store.get_meta(conn, "vectors_dtype") == "int8"
        sizes = {len(v) for (v,) in conn.execute("SELECT vec FROM vectors")}
    assert sizes == {embed.query_model().dim}
    assert _side(vault).read_bytes().startswith(b'{"format": 3')


def test_a_row_of_another_size_in_an_old_table_is_embedded_again(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quantizing float32 rows in place, a row that is not ``dim`` floats (damaged) is dropped and
    its section queued: embedded again, alone."""
    fresh = _answers(vault)
    db = store.index_path(vault.resolve())
    with store.reader(db, str(vault.resolve())) as conn:
        assert conn is not None
        rows = conn.execute("SELECT chunk_id, vec FROM vectors ORDER BY chunk_id").fetchall()
        for cid, vec in rows:
            as_floats = array("f", [x / 127 for x in array("b", vec)]).tobytes()
            conn.execute("UPDATE vectors SET vec = ? WHERE chunk_id = ?", (as_floats, cid))
        conn.execute("UPDATE vectors SET vec = x'00' WHERE chunk_id = ?", (rows[0][0],))
        conn.execute("DELETE FROM meta WHERE key = 'vectors_dtype'")
    vectors._CACHE.clear()
    embedded_texts: list[str] = []
    real = vectors._embedded

    def counted(model: embed.Embedder, texts: list[str]) -> object:
        embedded_texts.extend(texts)
        return real(model, texts)

    monkeypatch.setattr(vectors, "_embedded", counted)
    assert _answers(vault) == fresh
    assert len(embedded_texts) == 1
