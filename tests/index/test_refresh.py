"""Incremental refresh: what is read, re-chunked, kept and pruned."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path

import pytest

from shardpy import index
from shardpy.errors import ShardpyError
from shardpy.index import build
from tests.index.conftest import manifest, write


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    write(root, "a.md", "# A\n\n## One\n\nalpha words\n\n## Two\n\nbeta words\n")
    write(root, "sub/b.md", "# B\n\ngamma words\n")
    write(root, "sub/c.md", "# C\n\ndelta words\n")
    return root


def paths(vault: Path, query: str) -> list[str]:
    return [h.path for h in index.search(vault, query, max_age=float("inf")).hits]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The notes the refresh opened (by name)."""
    seen: list[str] = []
    real = build._read

    def spy(path: Path) -> bytes:
        seen.append(path.name)
        return real(path)

    monkeypatch.setattr(build, "_read", spy)
    return seen


def test_cold_then_nothing_changed(vault: Path, reads: list[str]) -> None:
    first = index.refresh(vault)
    assert (first.indexed, first.unchanged, first.pruned, first.chunks) == (3, 0, 0, 4)
    assert sorted(reads) == ["a.md", "b.md", "c.md"]
    reads.clear()
    again = index.refresh(vault)
    assert (again.indexed, again.unchanged, again.pruned, again.chunks) == (0, 3, 0, 0)
    assert reads == []  # same mtime and size: not even read
    assert index.index_path(vault).is_file() and vault not in index.index_path(vault).parents


def test_edit_is_rechunked(vault: Path) -> None:
    index.refresh(vault)
    write(vault, "a.md", "# A\n\n## One\n\nepsilon words\n")
    report = index.refresh(vault)
    assert (report.indexed, report.unchanged, report.chunks) == (1, 2, 1)
    assert paths(vault, "epsilon") == ["a.md"] and paths(vault, "alpha") == []
    assert report.total_chunks == 3


def test_touch_without_change_is_not_rechunked(vault: Path) -> None:
    index.refresh(vault)
    os.utime(vault / "a.md", ns=(1, 1))
    report = index.refresh(vault)
    assert (report.indexed, report.unchanged, report.chunks) == (0, 3, 0)
    again = index.refresh(vault)  # the new stat was stored: not read again
    assert again.unchanged == 3


def test_delete_and_rename_are_pruned(vault: Path) -> None:
    index.refresh(vault)
    (vault / "sub/c.md").unlink()
    (vault / "sub/b.md").rename(vault / "moved.md")
    report = index.refresh(vault)
    assert (report.indexed, report.pruned) == (1, 2)
    assert paths(vault, "gamma") == ["moved.md"] and paths(vault, "delta") == []


def test_note_turned_into_symlink_outside_is_removed_and_not_read(
    vault: Path, tmp_path: Path, reads: list[str]
) -> None:
    secret = write(tmp_path / "outside", "secret.md", "# Secret\n\npassword hunter2\n")
    index.refresh(vault)
    (vault / "sub/b.md").unlink()
    (vault / "sub/b.md").symlink_to(secret)
    (vault / "linked").symlink_to(secret.parent, target_is_directory=True)
    reads.clear()
    report = index.refresh(vault)
    assert report.pruned == 1
    assert ("sub/b.md", "symbolic link (not followed)") in report.skipped
    assert reads == []
    assert paths(vault, "hunter2") == [] and paths(vault, "gamma") == []
    only = index.refresh(vault, only=["sub/b.md", "linked/secret.md"])
    assert only.indexed == 0 and reads == []


def test_only_refreshes_one_note(vault: Path, reads: list[str]) -> None:
    index.refresh(vault)
    write(vault, "sub/c.md", "# C\n\nzeta words\n")
    write(vault, "a.md", "# A\n\nnot refreshed yet\n")
    reads.clear()
    report = index.refresh(vault, only=["sub/c.md"])
    assert (report.indexed, report.unchanged, report.pruned) == (1, 0, 0)
    assert reads == ["c.md"]
    assert paths(vault, "zeta") == ["sub/c.md"]
    (vault / "sub/c.md").unlink()
    gone = index.refresh(vault, only=["./sub/c.md", str(vault / "new.md")])
    assert gone.pruned == 1 and paths(vault, "zeta") == []


def test_only_applies_the_walk_rules(vault: Path) -> None:
    write(vault, ".obsidian/x.md", "hidden words\n")
    write(vault, "STATE/transcripts/t.md", "hidden words\n")
    report = index.refresh(vault, only=[".obsidian/x.md", "STATE/transcripts/t.md", "../escape.md"])
    assert report.indexed == 0
    assert paths(vault, "hidden") == []


def test_skipped_by_default_and_by_manifest(vault: Path) -> None:
    for rel in (
        ".obsidian/w.md",
        ".trash/old.md",
        ".git/x.md",
        ".shardmind/s.md",
        "STATE/transcripts/2026.md",
        "thinking/session-logs/log.md",
        "a.sync-conflict-20260101-123456-ABC.md",
        "brain/SOUL.md",
        "private/p.md",
        "archive/old.md",
        "notes.txt",
    ):
        write(vault, rel, "# X\n\nhiddenword here\n")
    write(vault, "brain/ok.md", "# ok\n\nvisibleword\n")
    manifest(vault, {"mcp_never_expose": ["soul.md", "Private/"], "search": {"exclude": ["archive/"]}})
    report = index.refresh(vault)
    assert report.indexed == 4
    assert paths(vault, "hiddenword") == [] and paths(vault, "visibleword") == ["brain/ok.md"]


def test_include_restricts(vault: Path) -> None:
    manifest(vault, {"search": {"include": ["sub/"]}})
    index.refresh(vault)
    assert paths(vault, "words") == ["sub/b.md", "sub/c.md"] or sorted(paths(vault, "words")) == [
        "sub/b.md",
        "sub/c.md",
    ]


def test_type_convention_change_retypes(vault: Path) -> None:
    index.refresh(vault)
    manifest(vault, {"frontmatter_required": {"thing": {"path_match": "sub/**"}}})
    report = index.refresh(vault)
    assert report.indexed == 3 and any("note types" in n for n in report.notices)
    assert [h.path for h in index.search(vault, "words", type="thing", max_age=float("inf")).hits] == [
        "sub/b.md",
        "sub/c.md",
    ] or len(index.search(vault, "words", type="thing").hits) == 2


def test_search_refreshes_a_stale_index(vault: Path) -> None:
    index.refresh(vault)
    write(vault, "new.md", "# New\n\nomega words\n")
    assert paths(vault, "omega") == []  # max_age inf: never refresh an existing index
    assert [h.path for h in index.search(vault, "omega", max_age=0).hits] == ["new.md"]


def test_search_without_an_index_builds_one(vault: Path) -> None:
    assert paths(vault, "alpha") == ["a.md"]


@pytest.mark.parametrize("damage", ["garbage", "foreign", "schema"])
def test_bad_database_is_rebuilt_with_a_notice(vault: Path, damage: str) -> None:
    index.refresh(vault)
    db = index.index_path(vault)
    if damage == "garbage":
        for suffix in ("-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        db.write_bytes(b"this is not sqlite at all" * 100)
    elif damage == "foreign":
        db.unlink()
        conn = sqlite3.connect(db)
        conn.execute("CREATE TABLE files (x)")
        conn.commit()
        conn.close()
    else:
        conn = sqlite3.connect(db)
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema'")
        conn.commit()
        conn.close()
    report = index.refresh(vault)
    assert report.indexed == 3
    assert report.notices and report.notices[0].startswith("index rebuilt")
    assert paths(vault, "alpha") == ["a.md"]


def test_one_writer_at_a_time(vault: Path) -> None:
    index.refresh(vault)
    db = index.index_path(vault)
    held = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with build.store.writer_lock(db):
            held.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    held.wait(10)
    try:
        with pytest.raises(ShardpyError) as err:
            build.refresh(vault, lock_wait=0.05)
        assert err.value.code == "INDEX_LOCKED"
        # A search never waits: it answers from the committed index and says so. (A note changed:
        # with none, the search's stat probe needs no refresh and no lock; tests/index/test_stat_probe.py.)
        (vault / "d.md").write_text("# D\n\nalpha again\n")
        result = index.search(vault, "alpha", max_age=0)
        assert [h.path for h in result.hits] == ["a.md"]
        assert any("being refreshed" in n for n in result.notices)
    finally:
        release.set()
        t.join()


def test_full_rebuilds_from_a_fresh_file(vault: Path, reads: list[str]) -> None:
    index.refresh(vault)
    reads.clear()
    report = index.refresh(vault, full=True)
    assert (report.indexed, report.unchanged, report.total_notes, report.total_chunks) == (3, 0, 3, 4)
    assert sorted(reads) == ["a.md", "b.md", "c.md"]
    assert paths(vault, "alpha") == ["a.md"]


def test_a_one_note_refresh_never_turns_into_a_rebuild(vault: Path) -> None:
    index.refresh(vault)
    manifest(vault, {"frontmatter_required": {"thing": {"path_match": "sub/**"}}})
    write(vault, "sub/b.md", "# B\n\ngamma words again\n")
    report = index.refresh(vault, only=["sub/b.md"])
    assert report.indexed == 1 and report.notices == []
    assert [h.type for h in index.search(vault, "gamma", max_age=float("inf")).hits] == ["thing"]
