"""Issue 29: the first search after ``refresh_seconds`` stats the indexed notes instead of walking the
vault (a whole no-change refresh cost 0.5 s at 20,000 notes, five times the search). What a walk would
have caught must still be caught: an edit in place of a note that is not a hit, a rule of the manifest
that admits or withholds other notes, a vault with more folders than a search watches."""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from shardpy import index
from shardpy.index import build, store


def _vault(root: Path) -> Path:
    (root / "notes").mkdir(parents=True)
    (root / "projects").mkdir()
    (root / ".obsidian").mkdir()
    (root / "notes" / "quokka.md").write_text("# Quokka\n\nthe quokka census on Rottnest\n")
    (root / "notes" / "plain.md").write_text("# Plain\n\nnothing to see here\n")
    (root / "projects" / "secret.md").write_text("# Secret\n\nthe quokka budget\n")
    hour_ago = time.time_ns() - 3600 * 10**9
    for folder in (root, root / "notes", root / "projects"):  # written long before the walk
        os.utime(folder, ns=(hour_ago, hour_ago))
    return root


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    """The vault above, indexed."""
    root = _vault(tmp_path / "v")
    index.refresh(root)
    return root


def _age_out(vault: Path) -> None:
    """The index as if its last refresh were an hour ago."""
    with store.reader(store.index_path(store.resolve_vault(vault)), str(vault.resolve())) as conn:
        assert conn is not None
        store.set_meta(conn, "refreshed_at", repr(time.time() - 3600))


def _refreshes(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    calls: list[object] = []
    real = build.refresh

    def counted(*args: object, **kw: object) -> object:
        calls.append(args)
        return real(*args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(build, "refresh", counted)
    return calls


def _paths(vault: Path, query: str) -> list[str]:
    return [h.path for h in index.search(vault, query, mode="lexical").hits]


def test_nothing_changed_costs_a_stat_per_note_and_no_refresh(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _age_out(vault)
    calls = _refreshes(monkeypatch)
    before = time.time()
    assert sorted(_paths(vault, "quokka")) == ["notes/quokka.md", "projects/secret.md"]
    assert calls == []
    with store.reader(store.index_path(vault.resolve()), str(vault.resolve())) as conn:
        assert conn is not None
        assert float(store.get_meta(conn, "refreshed_at") or 0) >= before - 1  # fresh for the next interval


def test_an_edit_in_place_of_a_note_that_is_not_a_hit_is_seen(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plain = vault / "notes" / "plain.md"
    with open(plain, "r+") as fh:  # in place: the folder's time does not change
        fh.write("# Plain\n\nnow a quokka too!!\n")
    os.utime(plain, ns=(plain.stat().st_atime_ns, plain.stat().st_mtime_ns + 2_000_000_000))
    calls = _refreshes(monkeypatch)
    assert "notes/plain.md" not in _paths(vault, "quokka")  # within the interval: not a hit, not seen
    _age_out(vault)
    assert "notes/plain.md" in _paths(vault, "quokka")
    assert len(calls) == 1


def test_a_manifest_rule_that_withholds_notes_is_applied(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "projects/secret.md" in _paths(vault, "quokka")
    manifest = {"schema": 1, "search": {"exclude": ["projects/"]}}
    (vault / "vault-manifest.json").write_text(json.dumps(manifest))
    os.utime(vault, ns=(0, 0))  # the root folder's time says nothing changed: only the rule did
    _age_out(vault)
    calls = _refreshes(monkeypatch)
    assert _paths(vault, "quokka") == ["notes/quokka.md"]
    assert len(calls) == 1


def test_an_index_from_before_the_probe_or_with_too_many_folders_is_walked(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _refreshes(monkeypatch)
    monkeypatch.setattr(store, "MAX_WATCHED_FOLDERS", 2)  # the list was cut: a folder past it is unseen
    _age_out(vault)
    _paths(vault, "quokka")
    assert len(calls) == 1
    monkeypatch.setattr(store, "MAX_WATCHED_FOLDERS", 5000)
    with store.reader(store.index_path(vault.resolve()), str(vault.resolve())) as conn:
        assert conn is not None
        conn.execute("DELETE FROM meta WHERE key = 'rules'")  # as an index built before the probe
    _age_out(vault)
    _paths(vault, "quokka")
    assert len(calls) == 2
    _age_out(vault)
    _paths(vault, "quokka")  # the walk stamped its rules: the next interval is a probe
    assert len(calls) == 2


def test_a_note_replaced_by_a_link_is_walked_not_followed(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Walrus\n\nthe quokka census on Rottnest\n")  # the same size
    note = vault / "notes" / "quokka.md"
    os.utime(outside, ns=(note.stat().st_atime_ns, note.stat().st_mtime_ns))  # followed, it looks the same
    note.unlink()
    note.symlink_to(outside)
    os.utime(vault / "notes", ns=(0, 0))  # the folder's time hides the change: the probe must not
    _age_out(vault)
    calls = _refreshes(monkeypatch)
    assert "notes/quokka.md" not in _paths(vault, "quokka")
    assert len(calls) == 1


def test_a_read_only_cache_answers_without_the_stamp(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stamp is a saving, not the answer: a cache where the lock file cannot be made, or an
    index that cannot be written, still answers (and the next search probes again)."""
    calls = _refreshes(monkeypatch)

    @contextlib.contextmanager
    def no_lock(db: Path, *, wait: float = 0.0) -> Iterator[bool]:
        raise store.write_failed(db, PermissionError(13, "Permission denied"))
        yield True

    def read_only(conn: object, key: str, value: str) -> None:
        raise sqlite3.OperationalError("attempt to write a readonly database")

    for fault in ((store, "writer_lock", no_lock), (store, "set_meta", read_only)):
        with monkeypatch.context() as m:
            _age_out(vault)
            m.setattr(*fault)
            assert sorted(_paths(vault, "quokka")) == ["notes/quokka.md", "projects/secret.md"]
    assert calls == []


def test_a_note_added_as_the_walk_began_is_seen(vault: Path) -> None:
    """A folder's time comes from the file system's coarser clock: a note added just after the walk
    began can give its folder a time just before ``walked_at``. Past the interval no walk would ever
    see it then; a folder changed that close before the walk counts as changed."""
    with store.reader(store.index_path(vault.resolve()), str(vault.resolve())) as conn:
        assert conn is not None
        walked = float(store.get_meta(conn, "walked_at") or 0)
    (vault / "notes" / "late.md").write_text("# Late\n\na quokka seen as the walk began\n")
    coarse = int((walked - 0.5) * 10**9)
    os.utime(vault / "notes", ns=(coarse, coarse))
    _age_out(vault)
    assert "notes/late.md" in _paths(vault, "quokka")
