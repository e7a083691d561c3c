"""Apply writes notes in batches made durable together; an interrupted batch is finished or undone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shardpy.apply import executor as apply_mod
from shardpy.apply.batch import JOURNAL_NAME, incomplete_runs
from shardpy.flows import importflow as service
from shardpy.flows.importflow import abandon_run, resume
from tests.importers.fixtures import basic_memory_project, generated_project, tree_hash
from tests.importers.helpers import do_import


def _source(tmp_path: Path) -> Path:
    src = generated_project(tmp_path / "src", 90)
    basic_memory_project(src / "fixture", extras=False)
    return src


def _crash_after_truncated_writes(vault: Path) -> Any:
    """An execute() that leaves half-written notes (a rename that beat its data to disk) and dies."""

    def crash(journal: apply_mod.Journal, progress: Any = None, **kw: Any) -> None:
        rows = journal.conn.execute("SELECT target, new FROM steps ORDER BY idx LIMIT 5").fetchall()
        for target, new in rows:
            path = vault / target
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(bytes(new)[: len(new) // 2])
        raise RuntimeError("power cut")

    return crash


def _notes(vault: Path) -> dict[str, str]:
    return {k: v for k, v in tree_hash(vault).items() if not k.startswith(".shardmind")}


def test_resume_finishes_truncated_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _source(tmp_path)
    ref = tmp_path / "ref"
    ref.mkdir()
    do_import("basic-memory", src, ref, apply=True, now=service.utc_now())
    vault = tmp_path / "vault"
    vault.mkdir()
    monkeypatch.setattr(service, "execute", _crash_after_truncated_writes(vault))
    with pytest.raises(RuntimeError):
        do_import("basic-memory", src, vault, apply=True)
    monkeypatch.undo()
    assert incomplete_runs(vault)
    out = resume(vault)
    assert out.applied.changed == [] and out.applied.errors == []
    assert out.applied.written == out.total
    assert len(_notes(vault)) == len(_notes(ref))
    again = do_import("basic-memory", src, vault).plan.counts()
    assert again["create"] == again["update"] == again["error"] == again["collision"] == 0


def test_abandon_removes_truncated_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Mine.md").write_text("mine\n", encoding="utf-8")
    before = _notes(vault)
    monkeypatch.setattr(service, "execute", _crash_after_truncated_writes(vault))
    with pytest.raises(RuntimeError):
        do_import("basic-memory", src, vault, apply=True)
    monkeypatch.undo()
    _, res = abandon_run(vault)
    assert res.removed == 5 and res.left == []
    assert _notes(vault) == before


def test_a_fresh_run_leaves_a_file_that_merely_looks_truncated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Outside resume/abandon, a file that appeared at a target after planning is never overwritten."""
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    real = service.execute
    seen: dict[str, bytes] = {}

    def meanwhile(journal: apply_mod.Journal, progress: Any = None, **kw: Any) -> Any:
        target, new = journal.conn.execute("SELECT target, new FROM steps ORDER BY idx LIMIT 1").fetchone()
        (vault / target).parent.mkdir(parents=True, exist_ok=True)
        (vault / target).write_bytes(bytes(new)[:10])
        seen[target] = bytes(new)[:10]
        return real(journal, progress, **kw)

    monkeypatch.setattr(service, "execute", meanwhile)
    out = do_import("basic-memory", src, vault, apply=True)
    ((target, prefix),) = seen.items()
    assert out.applied is not None and out.applied.changed == [target]
    assert (vault / target).read_bytes() == prefix


@pytest.mark.parametrize("syncfs", [True, False])
def test_every_written_note_is_flushed_before_it_is_marked_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs: bool
) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    flushed: list[str] = []
    real = apply_mod._flush

    def spy(vault_: Path, written: list[str], pool: Any) -> None:
        flushed.extend(written)
        real(vault_, written, pool)

    monkeypatch.setattr(apply_mod, "_flush", spy)
    monkeypatch.setattr(apply_mod, "SYNC_EVERY", 16)
    if not syncfs:
        monkeypatch.setattr(apply_mod, "syncfs_all", lambda folders: False)
    else:
        monkeypatch.setattr(apply_mod, "SYNCFS_MIN", 1)
    out = do_import("basic-memory", src, vault, apply=True)
    assert out.applied is not None
    assert sorted(flushed) == sorted(r.vault_path for r in out.plan.notes if r.action == "create")
    assert out.applied.written == len(flushed)


def test_plan_json_is_streamed_as_the_same_object(tmp_path: Path, bm_project: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    plan = do_import("basic-memory", bm_project, vault).plan
    assert plan.notes and plan.links and plan.skipped
    text = "".join(plan.json_chunks())
    assert json.loads(text) == plan.to_dict()
    out = do_import("basic-memory", bm_project, vault, apply=True)
    written = json.loads(
        (vault / ".shardmind/imports" / str(out.plan.run_id) / "plan.json").read_text("utf-8")
    )
    assert written == out.plan.to_dict()


def test_many_conflicts_in_one_folder_are_all_backed_up(tmp_path: Path) -> None:
    """Writer threads back up replaced notes of one folder at the same time without tripping."""
    src = tmp_path / "src"
    (src / "one").mkdir(parents=True)
    for i in range(24):
        (src / "one" / f"n{i}.md").write_text(f"---\ntitle: N {i}\n---\n\nline {i}\n", encoding="utf-8")
    vault = tmp_path / "vault"
    vault.mkdir()
    do_import("basic-memory", src, vault, apply=True)
    for i in range(24):
        (src / "one" / f"n{i}.md").write_text(f"---\ntitle: N {i}\n---\n\nsource {i}\n", encoding="utf-8")
        note = vault / "memories/basic-memory/one" / f"N {i}.md"
        note.write_text(note.read_text("utf-8").replace(f"line {i}", f"mine {i}"), encoding="utf-8")
    out = do_import("basic-memory", src, vault, apply=True, on_conflict="theirs")
    assert out.applied is not None and out.applied.errors == [] and out.applied.written == 24
    backups = list((vault / ".shardmind/imports" / str(out.plan.run_id) / "backups").rglob("*.md"))
    assert len(backups) == 24
    assert all("mine" in p.read_text("utf-8") for p in backups)


@pytest.mark.parametrize("exclusive_rename", [True, False])
def test_a_file_that_appears_at_a_new_notes_path_is_never_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, exclusive_rename: bool
) -> None:
    """New notes are created without a read first; whatever is at the path by then stays (both ways)."""
    from shardpy import fsutil

    if not exclusive_rename:  # a system or filesystem without renameat2(RENAME_NOREPLACE)
        monkeypatch.setattr(fsutil, "_renameat2_function", lambda: None)
    src = _source(tmp_path)
    ref = tmp_path / "ref"
    ref.mkdir()
    now = service.utc_now()  # the same imported_at in both vaults
    do_import("basic-memory", src, ref, apply=True, now=now)
    vault = tmp_path / "vault"
    vault.mkdir()
    real = service.execute
    planted: dict[str, bytes] = {}

    def meanwhile(journal: apply_mod.Journal, progress: Any = None, **kw: Any) -> Any:
        rows = journal.conn.execute("SELECT target FROM steps ORDER BY idx LIMIT 3").fetchall()
        for (target,) in rows:
            (vault / target).parent.mkdir(parents=True, exist_ok=True)
            (vault / target).write_bytes(b"the user's own words\n")
            planted[target] = b"the user's own words\n"
        return real(journal, progress, **kw)

    monkeypatch.setattr(service, "execute", meanwhile)
    out = do_import("basic-memory", src, vault, apply=True, now=now)
    assert out.applied is not None and sorted(out.applied.changed) == sorted(planted)
    for target, data in planted.items():
        assert (vault / target).read_bytes() == data
    assert not [p for p in vault.rglob("*") if p.name.startswith(fsutil.TMP_MARK)]
    expected = {k: v for k, v in _notes(ref).items() if k not in planted}
    assert {k: v for k, v in _notes(vault).items() if k not in planted} == expected


def test_create_new_never_replaces_a_file_or_a_link(tmp_path: Path) -> None:
    import os

    from shardpy import fsutil

    (tmp_path / "there.md").write_bytes(b"old")
    (tmp_path / "link.md").symlink_to(tmp_path / "elsewhere.md")  # dangling: still a name taken
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        dev = os.fstat(fd).st_dev
        made = fsutil.create_new("new.md", b"new", dir_fd=fd, device=dev)
        if made is None:
            pytest.skip("no renameat2(RENAME_NOREPLACE) here")
        assert made is True and (tmp_path / "new.md").read_bytes() == b"new"
        assert fsutil.create_new("there.md", b"x", dir_fd=fd, device=dev) is False
        assert fsutil.create_new("link.md", b"x", dir_fd=fd, device=dev) is False
    finally:
        os.close(fd)
    assert (tmp_path / "there.md").read_bytes() == b"old"
    assert (tmp_path / "link.md").is_symlink() and not (tmp_path / "elsewhere.md").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.md", "new.md", "there.md"]


def test_a_journal_from_before_the_progress_table_resumes_where_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Older journals marked progress in ``steps`` itself; resume carries it over and finishes."""
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    real = service.execute

    def half(journal: apply_mod.Journal, progress: Any = None, **kw: Any) -> Any:
        monkeypatch.setattr(apply_mod, "SYNC_EVERY", 8)
        calls = {"n": 0}
        mark = apply_mod._Run.mark_done

        def dying(self: Any) -> None:
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("killed")
            mark(self)

        monkeypatch.setattr(apply_mod._Run, "mark_done", dying)
        return real(journal, progress, **kw)

    monkeypatch.setattr(service, "execute", half)
    with pytest.raises(RuntimeError):
        do_import("basic-memory", src, vault, apply=True)
    monkeypatch.undo()
    ((run_id, _),) = incomplete_runs(vault)
    conn = __import__("sqlite3").connect(vault / ".shardmind/imports" / run_id / JOURNAL_NAME)
    done = conn.execute("SELECT COUNT(*) FROM progress").fetchone()[0]
    assert done > 0  # some batches were recorded before the kill
    conn.executescript(  # the journal as shardpy before the progress table wrote it
        "ALTER TABLE steps ADD COLUMN done INTEGER NOT NULL DEFAULT 0;"
        " ALTER TABLE steps ADD COLUMN outcome TEXT; ALTER TABLE steps ADD COLUMN created_dirs TEXT;"
        " UPDATE steps SET done=1, outcome=(SELECT outcome FROM progress p WHERE p.idx=steps.idx),"
        " created_dirs=(SELECT created_dirs FROM progress p WHERE p.idx=steps.idx)"
        " WHERE idx IN (SELECT idx FROM progress); DROP TABLE progress;"
    )
    conn.close()
    out = resume(vault)
    assert out.applied.changed == [] and out.applied.errors == []
    assert out.total - out.remaining == done  # those marked the old way are not done again
    assert out.applied.written + out.applied.already == out.remaining
    again = do_import("basic-memory", src, vault).plan.counts()
    assert again["create"] == again["update"] == again["error"] == 0
