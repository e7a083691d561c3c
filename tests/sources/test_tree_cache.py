"""The extracted-tree cache: a release fetched once is not extracted again,
and a reused tree is verified and read-only."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

import shardpy.sources.cache as cache_mod
from shardpy.errors import ShardpyError
from shardpy.sources import fetch, parse_source, resolve
from shardpy.sources.cache import TreeCache
from tests.sources.support import StubGitHub


def _extractions(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    calls: list[Path] = []
    real = cache_mod.safe_extract

    def counting(archive: Path, dest: Path) -> Path:
        calls.append(archive)
        return real(archive, dest)

    monkeypatch.setattr(cache_mod, "safe_extract", counting)
    return calls


def test_second_fetch_reuses_the_extracted_tree(
    github_stub: StubGitHub, tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = _extractions(monkeypatch)
    spec = parse_source("github:o/r@1.0.0", cwd=Path("/"))
    with fetch(resolve(spec)) as first:
        root, digest = first.root, first.archive_sha256
    with fetch(resolve(spec)) as second:
        assert second.root == root and second.archive_sha256 == digest
        assert (second.root / "Home.md").read_text() == "# Home 1.0.0\n"
    assert len(calls) == 1
    assert root.is_relative_to(tmp_path / "cache" / "trees" / str(digest))
    assert root.is_dir()  # cleanup leaves the cached tree in place
    assert list(scratch.iterdir()) == []
    modes = [stat.S_IMODE(p.stat().st_mode) for p in root.rglob("*")]
    assert modes and all(not m & 0o222 for m in modes)  # files and folders read-only


def test_changed_tree_is_extracted_again(github_stub: StubGitHub, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _extractions(monkeypatch)
    spec = parse_source("github:o/r@1.0.0", cwd=Path("/"))
    with fetch(resolve(spec)) as first:
        home = first.root / "Home.md"
    home.chmod(0o644)
    home.write_text("changed behind shardpy's back\n")
    with fetch(resolve(spec)) as second:
        assert (second.root / "Home.md").read_text() == "# Home 1.0.0\n"
    assert len(calls) == 2


def test_tree_without_record_is_replaced(github_stub: StubGitHub, tmp_path: Path) -> None:
    spec = parse_source("github:o/r@1.0.0", cwd=Path("/"))
    with fetch(resolve(spec)) as first:
        digest = str(first.archive_sha256)
    (tmp_path / "cache" / "trees" / f"{digest}.json").unlink()  # as if killed between the two renames
    with fetch(resolve(spec)) as second:
        assert (second.root / "Home.md").read_text() == "# Home 1.0.0\n"
    assert TreeCache(tmp_path / "cache").lookup(digest) == second.root


def test_unsafe_archive_leaves_no_tree(tmp_path: Path) -> None:
    from tests.sources.support import file_entry, tar_bytes

    archive = tmp_path / "bad.tar.gz"
    archive.write_bytes(tar_bytes([file_entry("../escape.md", b"x")]))
    trees = TreeCache(tmp_path / "cache")
    with pytest.raises(ShardpyError, match="climbs out"):
        trees.extract(archive, "0" * 64)
    assert [p.name for p in (tmp_path / "cache" / "trees").iterdir()] == []
