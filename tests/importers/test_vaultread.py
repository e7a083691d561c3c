"""Planning reads a target file of the vault without following a link and without blocking: a
FIFO or a link put in the file's place after it was looked at is refused, never waited on (the
read had been a plain ``open``, which waits for a FIFO's writer for good)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from shardpy.importers import vaultread


def _read_after_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str) -> tuple[str, str]:
    note = tmp_path / "note.md"
    note.write_text("hello\n", encoding="utf-8")
    real_lstat = os.lstat

    def lstat_then_swap(path: str) -> os.stat_result:
        st = real_lstat(path)
        if os.fspath(path) != os.fspath(note):  # only the note: every other caller sees os.lstat
            return st
        os.unlink(note)
        if swap == "fifo":
            os.mkfifo(note)
        else:
            (tmp_path / "elsewhere.md").write_text("secret\n", encoding="utf-8")
            os.symlink(tmp_path / "elsewhere.md", note)
        return st

    monkeypatch.setattr(os, "lstat", lstat_then_swap)
    answer: list[tuple[str, bytes | None, str]] = []
    reader = threading.Thread(target=lambda: answer.append(vaultread.read_vault_file(tmp_path, "note.md")))
    reader.daemon = True  # a read that blocks must not hold the test process open
    reader.start()
    reader.join(10)
    monkeypatch.undo()
    if not answer:
        with open(note, "wb"):  # the FIFO's writer: the blocked read ends
            pass
        pytest.fail("the read blocked on a FIFO put in the note's place")
    kind, data, reason = answer[0]
    assert data is None
    return kind, reason


@pytest.mark.parametrize("swap", ["fifo", "link"])
def test_a_file_swapped_after_the_look_is_refused_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swap: str
) -> None:
    kind, reason = _read_after_swap(tmp_path, monkeypatch, swap)
    assert kind == "bad" and reason.startswith("unreadable")


def test_a_plain_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "n.md").write_bytes(b"x\r\ny")
    assert vaultread.read_vault_file(tmp_path, "a/n.md") == ("file", b"x\r\ny", "")
    assert vaultread.read_vault_file(tmp_path, "a/none.md") == ("absent", None, "")
    os.symlink(tmp_path / "a" / "n.md", tmp_path / "l.md")
    assert vaultread.read_vault_file(tmp_path, "l.md")[0] == "bad"
