"""Extraction without tarfile's "data" filter (Python before 3.11.4, as Debian 12's 3.11.2):
``filter=`` was a TypeError there, so every tarball source failed with a traceback. The files come
out with the modes and owner the filter would give them, and the filter's refusals are
``_check_member``'s (tests/sources/test_archive.py)."""

from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardpy.sources import archive
from shardpy.sources.archive import data_mode, safe_extract
from tests.sources.support import dir_entry, file_entry, tar_bytes

MODES = [0o644, 0o600, 0o400, 0o000, 0o777, 0o4755, 0o2775, 0o1777, 0o711, 0o070, 0o007]


NO_FILTER = not hasattr(tarfile, "data_filter")


@pytest.mark.skipif(NO_FILTER, reason="this Python has no data filter to compare with")
@given(st.integers(0, 0o7777))
def test_data_mode_is_the_data_filters_rule(mode: int) -> None:
    info = tarfile.TarInfo("a/f.md")
    info.mode = mode
    assert data_mode(mode) == tarfile.data_filter(info, "/dest").mode


# Forcing the old path on a Python that has the filter: its warning that the filter is not used is expected.
@pytest.mark.filterwarnings("ignore:Python 3.14 will, by default, filter:DeprecationWarning")
@pytest.mark.parametrize("has_filter", [True, False])
def test_extracted_modes_and_owner_are_the_filters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, has_filter: bool
) -> None:
    if has_filter and NO_FILTER:
        pytest.skip("this Python has no data filter")
    monkeypatch.setattr(archive, "_HAS_DATA_FILTER", has_filter)
    entries = [dir_entry("pkg/")]
    for i, mode in enumerate(MODES):
        info, data = file_entry(f"pkg/f{i}.md", b"x\n")
        info.mode, info.uid, info.gid, info.uname, info.gname = mode, 4242, 4242, "someone", "others"
        entries.append((info, data))
    src = tmp_path / "s.tar.gz"
    src.write_bytes(tar_bytes(entries))
    root = safe_extract(src, tmp_path / "out")
    for i, mode in enumerate(MODES):
        st_ = os.stat(root / f"f{i}.md")
        assert stat.S_IMODE(st_.st_mode) == data_mode(mode), oct(mode)
        assert (st_.st_uid, st_.st_gid) == (os.getuid(), os.getgid())
        assert (root / f"f{i}.md").read_bytes() == b"x\n"


@pytest.mark.filterwarnings("ignore:Python 3.14 will, by default, filter:DeprecationWarning")
@pytest.mark.parametrize("has_filter", [True, False])
@pytest.mark.parametrize("umask", [0o022, 0o077])
def test_folders_get_the_default_mode_and_the_destination_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, has_filter: bool, umask: int
) -> None:
    """The filter gives a folder no mode of the archive's (a helper's review: the fallback set 0o755,
    and an archive's "./" entry opened the destination to 0o755)."""
    if has_filter and NO_FILTER:
        pytest.skip("this Python has no data filter")
    monkeypatch.setattr(archive, "_HAS_DATA_FILTER", has_filter)
    entries = [dir_entry("./"), dir_entry("a/"), dir_entry("a/open/"), file_entry("a/deep/f.md", b"x\n")]
    entries[1][0].mode, entries[2][0].mode = 0o700, 0o777
    src = tmp_path / "s.tar.gz"
    src.write_bytes(tar_bytes(entries))
    before = os.umask(umask)
    try:
        safe_extract(src, tmp_path / "out")
    finally:
        os.umask(before)
    out = tmp_path / "out"
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o700  # safe_extract's own, untouched by "./"
    for folder in ("a", "a/open", "a/deep"):
        assert stat.S_IMODE(os.stat(out / folder).st_mode) == 0o777 & ~umask, folder
    assert (out / "a" / "deep" / "f.md").read_bytes() == b"x\n"
