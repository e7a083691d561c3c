"""The writes after a command's main transaction (the state saved after the
hooks, managed files a hook changed put back) are transactions of their own:
unchanged bytes are not rewritten, backups do not pile up, an error rolls
back, and a kill is undone by the next command's recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from shardpy.apply import transaction
from shardpy.apply.followup import commit_writes, restore_files
from shardpy.apply.transaction import Op, pending_journal, recover
from shardpy.vault.layout import BACKUPS, JOURNAL, STATE


def vault(tmp_path: Path) -> Path:
    root = tmp_path / "vault"
    (root / ".shardmind").mkdir(parents=True)
    (root / STATE).write_text('{"old": true}\n')
    (root / "note.md").write_text("managed\n")
    return root


def test_unchanged_bytes_are_not_written(tmp_path: Path) -> None:
    root = vault(tmp_path)
    assert commit_writes(root, "update-hooks", [Op.write(STATE, b'{"old": true}\n')]) == []
    assert not (root / BACKUPS).exists() and pending_journal(root) is None


def test_a_commit_leaves_no_journal_and_no_backup(tmp_path: Path) -> None:
    root = vault(tmp_path)
    (root / BACKUPS / "update-20260101T000000000000Z").mkdir(parents=True)  # the command's own
    assert restore_files(root, "hook-guard", {"note.md": b"managed\n", "other.md": b"x\n"}) == ["other.md"]
    assert commit_writes(root, "update-hooks", [Op.write(STATE, b"{}\n")]) == [STATE]
    assert (root / STATE).read_bytes() == b"{}\n"
    assert pending_journal(root) is None
    assert sorted(p.name for p in (root / BACKUPS).iterdir()) == ["update-20260101T000000000000Z"]


def test_an_error_while_writing_rolls_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = vault(tmp_path)
    real = transaction.Transaction._apply_op

    def fail_on_state(self: transaction.Transaction, op: Op, durable: bool) -> None:
        if op.path == STATE:
            raise OSError(28, "No space left on device")
        real(self, op, durable)

    monkeypatch.setattr(transaction.Transaction, "_apply_op", fail_on_state)
    with pytest.raises(Exception, match="Writing"):
        commit_writes(root, "update-hooks", [Op.write("note.md", b"restored\n"), Op.write(STATE, b"{}\n")])
    assert (root / "note.md").read_text() == "managed\n"
    assert (root / STATE).read_text() == '{"old": true}\n'
    assert pending_journal(root) is None


CHILD = """
import sys
from pathlib import Path
from shardpy.apply.followup import commit_writes
from shardpy.apply.transaction import Op
root = Path(sys.argv[1])
commit_writes(root, "update-hooks", [Op.write(f"n{i}.md", b"new\\n") for i in range(20)] + [Op.write(
    ".shardmind/state.json", b"{}\\n")])
"""


def test_a_kill_while_saving_is_undone_by_the_next_command(tmp_path: Path) -> None:
    root = vault(tmp_path)
    for i in range(20):
        (root / f"n{i}.md").write_text("old\n")
    env = {**os.environ, "SHARDPY_TEST_APPLY_DELAY": "0.05"}
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(root)], env=env)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # killed once it is writing the vault's files
        journal = pending_journal(root) if (root / JOURNAL).exists() else None
        if journal is not None and journal.get("phase") == "applying":
            break
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert json.loads((root / JOURNAL).read_text())["label"] == "update-hooks"
    report = recover(root)
    assert report is not None and report.action == "rolled-back"
    assert all((root / f"n{i}.md").read_text() == "old\n" for i in range(20))
    assert (root / STATE).read_text() == '{"old": true}\n'
    assert pending_journal(root) is None
