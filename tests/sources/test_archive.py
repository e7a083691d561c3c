"""Tarball sources: safe extraction, limits, top-level stripping, tree hashes."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.sources import fetch, parse_source, resolve
from shardpy.sources.archive import safe_extract, tree_hash
from tests.sources.support import dir_entry, file_entry, shard_tar_entries, tar_bytes


def write_tar(path: Path, entries: list[tuple[tarfile.TarInfo, bytes | None]], *, gzip: bool = True) -> Path:
    path.write_bytes(tar_bytes(entries, gzip=gzip))
    return path


def test_local_tarball_resolves_and_fetches(tmp_path: Path, scratch: Path) -> None:
    archive = write_tar(tmp_path / "shard.tar.gz", shard_tar_entries("acme-demo-1234567/"))
    spec = parse_source(str(archive), cwd=tmp_path)
    resolved = resolve(spec)
    assert (resolved.version, resolved.commit) == (None, None)
    fetched = fetch(resolved)
    try:
        assert fetched.root.name == "acme-demo-1234567"  # the single top directory is stripped
        assert (fetched.root / "brain" / "note.md").read_text() == "note\n"
        assert fetched.shard_root() == fetched.root
        assert fetched.remote is False
        assert fetched.archive_sha256 is not None and len(fetched.archive_sha256) == 64
        assert fetched.root.is_relative_to(scratch)
    finally:
        fetched.cleanup()
    assert list(scratch.iterdir()) == []
    assert archive.exists()  # the user's archive is never removed


def test_tarball_without_top_dir_and_dot_prefix(tmp_path: Path) -> None:
    for prefix, name in (("", "flat.tar.gz"), ("./", "dotted.tgz")):
        entries = shard_tar_entries(prefix)
        archive = write_tar(tmp_path / name, entries)
        with fetch(resolve(parse_source(str(archive), cwd=tmp_path))) as fetched:
            assert (fetched.root / ".shardmind" / "shard.yaml").is_file()
            assert fetched.shard_root() == fetched.root


def test_uncompressed_tar_and_subdir(tmp_path: Path) -> None:
    entries = [
        dir_entry("mono"),
        *shard_tar_entries("mono/shards/demo/")[1:],
        file_entry("mono/README", b"r"),
    ]
    archive = write_tar(tmp_path / "mono.tar", entries, gzip=False)
    with fetch(resolve(parse_source(f"{archive}//shards/demo", cwd=tmp_path))) as fetched:
        assert fetched.subdir == "shards/demo"
        assert fetched.shard_root() == fetched.root / "shards" / "demo"


def _symlink(name: str, target: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.SYMTYPE
    info.linkname = target
    return info, None


def _special(name: str, kind: bytes) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    if kind == tarfile.LNKTYPE:
        info.linkname = "pkg/Home.md"
    return info, None


@pytest.mark.parametrize(
    ("bad", "entry"),
    [
        (file_entry("/etc/evil", b"x"), "/etc/evil"),
        (file_entry("pkg/../../evil", b"x"), "pkg/../../evil"),
        (file_entry("../evil", b"x"), "../evil"),
        (_symlink("pkg/link", "/etc/passwd"), "pkg/link"),
        (_symlink("pkg/inner", "Home.md"), "pkg/inner"),
        (_special("pkg/hard", tarfile.LNKTYPE), "pkg/hard"),
        (_special("pkg/dev", tarfile.CHRTYPE), "pkg/dev"),
        (_special("pkg/blk", tarfile.BLKTYPE), "pkg/blk"),
        (_special("pkg/fifo", tarfile.FIFOTYPE), "pkg/fifo"),
    ],
)
def test_unsafe_entries_are_refused_and_nothing_is_left(
    tmp_path: Path, scratch: Path, bad: tuple[tarfile.TarInfo, bytes | None], entry: str
) -> None:
    # the bad entry comes last, after good files were already read
    archive = write_tar(tmp_path / "evil.tar.gz", [*shard_tar_entries(), bad])
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(str(archive), cwd=tmp_path)))
    assert err.value.code == "SOURCE_ARCHIVE_UNSAFE"
    assert err.value.details["entry"] == entry
    assert entry in err.value.message
    assert list(scratch.iterdir()) == []
    assert not (tmp_path / "evil").exists()


def test_size_cap(tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    archive = write_tar(
        tmp_path / "big.tar.gz", [*shard_tar_entries(), file_entry("pkg/big.bin", b"\0" * 5000)]
    )
    monkeypatch.setenv("SHARDPY_MAX_ARCHIVE_BYTES", "4096")
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(str(archive), cwd=tmp_path)))
    assert err.value.code == "SOURCE_ARCHIVE_TOO_LARGE"
    assert list(scratch.iterdir()) == []
    monkeypatch.setenv("SHARDPY_MAX_ARCHIVE_BYTES", "6000")
    with fetch(resolve(parse_source(str(archive), cwd=tmp_path))) as fetched:
        assert (fetched.root / "big.bin").stat().st_size == 5000


def test_entry_count_cap(tmp_path: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [*shard_tar_entries(), *(file_entry(f"pkg/n{i}.md", b"x") for i in range(20))]
    archive = write_tar(tmp_path / "many.tar.gz", entries)
    monkeypatch.setenv("SHARDPY_MAX_ARCHIVE_ENTRIES", "10")
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(str(archive), cwd=tmp_path)))
    assert err.value.code == "SOURCE_ARCHIVE_TOO_LARGE"
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("value", ["lots", "-1", "0"])
def test_bad_limit_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    archive = write_tar(tmp_path / "ok.tar.gz", shard_tar_entries())
    monkeypatch.setenv("SHARDPY_MAX_ARCHIVE_BYTES", value)
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(str(archive), cwd=tmp_path)))
    assert err.value.code == "SOURCE_SETTING_INVALID"


@pytest.mark.parametrize("payload", [b"", b"not a tarball at all", b"\x1f\x8b\x08\x00garbage"])
def test_corrupt_archive(tmp_path: Path, scratch: Path, payload: bytes) -> None:
    archive = tmp_path / "bad.tar.gz"
    archive.write_bytes(payload)
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(str(archive), cwd=tmp_path)))
    assert err.value.code == "SOURCE_ARCHIVE_INVALID"
    assert list(scratch.iterdir()) == []


def test_truncated_archive(tmp_path: Path, scratch: Path) -> None:
    whole = tar_bytes([*shard_tar_entries(), file_entry("pkg/blob", os.urandom(200_000))])
    archive = tmp_path / "cut.tar.gz"
    archive.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(ShardpyError) as err:
        fetch(resolve(parse_source(str(archive), cwd=tmp_path)))
    assert err.value.code == "SOURCE_ARCHIVE_INVALID"
    assert list(scratch.iterdir()) == []


def test_extracted_modes_are_tamed(tmp_path: Path) -> None:
    info, data = file_entry("pkg/script.sh", b"#!/bin/sh\n")
    info.mode = 0o4777  # setuid, world-writable
    archive = write_tar(tmp_path / "modes.tar.gz", [*shard_tar_entries(), (info, data)])
    root = safe_extract(archive, tmp_path / "out")
    mode = (root / "script.sh").stat().st_mode & 0o7777
    assert mode & 0o4000 == 0 and mode & 0o022 == 0


def test_versions_are_refused_for_archives(tmp_path: Path) -> None:
    archive = write_tar(tmp_path / "a.tar.gz", shard_tar_entries())
    spec = parse_source(str(archive), cwd=tmp_path).with_version("1.0.0")
    with pytest.raises(ShardpyError) as err:
        resolve(spec)
    assert err.value.code == "SOURCE_INVALID"


def test_tree_hash_tracks_content_not_git(tmp_path: Path) -> None:
    root = tmp_path / "t"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("one")
    first = tree_hash(root)
    assert tree_hash(root) == first
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref")
    assert tree_hash(root) == first
    (root / "a.md").write_text("two")
    second = tree_hash(root)
    assert second != first
    (root / "a.md").rename(root / "sub" / "a.md")
    assert tree_hash(root) not in (first, second)
    os.symlink("/etc", root / "link")  # hashed as a link, never followed
    with_link = tree_hash(root)
    os.unlink(root / "link")
    os.symlink("/usr", root / "link")
    assert tree_hash(root) != with_link
