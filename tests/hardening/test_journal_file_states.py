"""What a rollback finds at a path it may undo (apply/journalcheck.current_hash): a regular file's
hash; ABSENT; OTHER for a link, a folder or a FIFO (never something a journal wrote). Any other
error opening it is raised, an EINVAL of the file system's included: taken for "not a regular
file", it had made a rollback keep the path as "changed by someone else" (a helper's review)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from shardpy.apply import journalcheck
from shardpy.apply.journalcheck import FileState, current_hash
from shardpy.fsutil import sha256_bytes


def test_each_kind_of_path(tmp_path: Path) -> None:
    (tmp_path / "f.md").write_bytes(b"x\n")
    (tmp_path / "d").mkdir()
    os.mkfifo(tmp_path / "p")
    os.symlink(tmp_path / "f.md", tmp_path / "l.md")
    assert current_hash(tmp_path, "f.md") == sha256_bytes(b"x\n")
    assert current_hash(tmp_path, "none.md") is FileState.ABSENT
    assert current_hash(tmp_path, "f.md/under") is FileState.ABSENT
    for rel in ("d", "p", "l.md"):
        assert current_hash(tmp_path, rel) is FileState.OTHER, rel


def test_an_einval_from_the_file_system_is_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refused(path: str) -> int:
        raise OSError(errno.EINVAL, "Invalid argument", path)

    monkeypatch.setattr(journalcheck, "open_regular", refused)
    with pytest.raises(OSError) as caught:
        current_hash(tmp_path, "f.md")
    assert caught.value.errno == errno.EINVAL
