"""What a transaction makes durable before its journal says "committed".

A large transaction writes without per-file fsyncs and flushes the
filesystem once (syncfs); without syncfs it fsyncs every file it left
behind; a small one fsyncs as it goes. In every case the flush comes before
the commit record (power loss after "committed" must find every byte).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shardpy import fsutil
from shardpy.apply import transaction as tx_mod
from shardpy.apply.transaction import Op, Transaction
from shardpy.fsutil import TMP_MARK


class Recorder:
    """Order of fsyncs, syncfs calls and journal phases as the transaction runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, root: Path, *, syncfs: bool) -> None:
        self.events: list[tuple[str, str]] = []
        real_fsync = os.fsync
        real_save = Transaction._save_journal

        def fsync(fd: int) -> None:
            self.events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
            real_fsync(fd)

        def save(tx: Transaction) -> None:
            self.events.append(("journal", tx._journal["phase"]))
            real_save(tx)

        def fake_syncfs(folder: Path) -> bool:
            self.events.append(("syncfs", str(folder)))
            return syncfs

        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(Transaction, "_save_journal", save)
        monkeypatch.setattr(fsutil, "syncfs", fake_syncfs)
        self.root = root

    def before_commit(self) -> list[tuple[str, str]]:
        return self.events[: self.events.index(("journal", "committed"))]

    def fsynced(self) -> set[str]:
        prefix = str(self.root) + "/"
        return {
            p[len(prefix) :] for kind, p in self.before_commit() if kind == "fsync" and p.startswith(prefix)
        }


def _ops(n: int) -> list[Op]:
    return [Op.write(f"notes/d{i % 3}/n{i}.md", f"note {i}\n".encode()) for i in range(n)]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads fd paths from /proc")
def test_large_transaction_flushes_once_with_syncfs_before_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = Recorder(monkeypatch, tmp_path, syncfs=True)
    ops = _ops(tx_mod.SYNCFS_MIN + 10)
    Transaction(tmp_path, "t").run(ops)
    before = rec.before_commit()
    assert [e for e in before if e[0] == "syncfs"] == [("syncfs", str(tmp_path / "notes/d0"))]
    assert not {op.path for op in ops} & rec.fsynced()  # no per-file fsync
    assert all((tmp_path / op.path).read_bytes() == op.data for op in ops)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads fd paths from /proc")
def test_without_syncfs_every_file_and_folder_is_fsynced_before_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rec = Recorder(monkeypatch, tmp_path, syncfs=False)
    ops = _ops(tx_mod.SYNCFS_MIN + 10)
    Transaction(tmp_path, "t").run(ops)
    synced = rec.fsynced()
    assert {op.path for op in ops} <= synced
    assert {"notes/d0", "notes/d1", "notes/d2"} <= synced


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads fd paths from /proc")
def test_small_transaction_fsyncs_as_it_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rec = Recorder(monkeypatch, tmp_path, syncfs=True)
    ops = _ops(5)
    Transaction(tmp_path, "t").run(ops)
    assert not [e for e in rec.events if e[0] == "syncfs"]
    # fsync'd as temporary files, then renamed: every folder is fsynced before the commit.
    assert {"notes/d0", "notes/d1", "notes/d2"} <= rec.fsynced()
    temp_syncs = [p for kind, p in rec.before_commit() if kind == "fsync" and TMP_MARK in p]
    assert len(temp_syncs) >= len(ops)


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="reads fd paths from /proc")
@pytest.mark.parametrize("syncfs", [True, False])
def test_many_backups_are_on_disk_before_the_journal_says_applying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, syncfs: bool
) -> None:
    ops = _ops(tx_mod.SYNCFS_MIN + 10)
    Transaction(tmp_path, "first").run(ops)  # every file exists: the next run backs each one up
    rec = Recorder(monkeypatch, tmp_path, syncfs=syncfs)
    tx = Transaction(tmp_path, "second")
    tx.run([Op.write(op.path, b"changed\n") for op in ops])
    backing_up = rec.events[: rec.events.index(("journal", "applying"))]
    backups = f"{tmp_path}/{tx.backup_dir}/"
    fsynced = {p for kind, p in backing_up if kind == "fsync" and p.startswith(backups)}
    if syncfs:
        assert [p for kind, p in backing_up if kind == "syncfs"] == [f"{backups}notes/d0"]
        assert not fsynced  # one syncfs instead of a fsync per backup
    else:
        # every backup, and the folders holding them (their new entries)
        assert {f"{backups}{op.path}" for op in ops} <= fsynced
