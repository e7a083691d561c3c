"""find_shard_root, ignore_chain and migrations_dir (CONTRACT §2)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.sources import find_shard_root, ignore_chain, migrations_dir
from tests.sources.support import write_shard


def test_root_itself(tmp_path: Path) -> None:
    write_shard(tmp_path, "1.0.0")
    (tmp_path / "other").mkdir()
    write_shard(tmp_path / "other", "9.9.9")  # the root's own manifest wins; no search below
    assert find_shard_root(tmp_path, None) == tmp_path


def test_one_level_down(tmp_path: Path) -> None:
    write_shard(tmp_path / "shard-template", "1.0.0")
    (tmp_path / "docs").mkdir()
    write_shard(tmp_path / "deep" / "er", "1.0.0")  # two levels down is not searched
    assert find_shard_root(tmp_path, None) == tmp_path / "shard-template"


def test_several_candidates_are_ambiguous(tmp_path: Path) -> None:
    write_shard(tmp_path / "a", "1.0.0")
    write_shard(tmp_path / "b", "1.0.0")
    with pytest.raises(ShardpyError) as err:
        find_shard_root(tmp_path, None)
    assert err.value.code == "SOURCE_AMBIGUOUS_SHARD"
    assert err.value.details["candidates"] == ["a", "b"]
    assert find_shard_root(tmp_path, "b") == tmp_path / "b"


def test_missing_manifest(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    with pytest.raises(ShardpyError) as err:
        find_shard_root(tmp_path, None)
    assert err.value.code == "SHARD_MANIFEST_MISSING"
    with pytest.raises(ShardpyError) as err:
        find_shard_root(tmp_path, "x")
    assert err.value.code == "SHARD_MANIFEST_MISSING"


def test_links_are_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    write_shard(outside, "1.0.0")
    src = tmp_path / "src"
    src.mkdir()
    os.symlink(outside, src / "linked")
    with pytest.raises(ShardpyError) as err:
        find_shard_root(src, None)
    assert err.value.code == "SHARD_MANIFEST_MISSING"
    with pytest.raises(ShardpyError) as err:
        find_shard_root(src, "linked")
    assert err.value.code == "SOURCE_SUBDIR_INVALID"
    # a manifest that is itself a link does not count
    inner = src / "inner" / ".shardmind"
    inner.mkdir(parents=True)
    os.symlink(outside / ".shardmind" / "shard.yaml", inner / "shard.yaml")
    with pytest.raises(ShardpyError):
        find_shard_root(src, "inner")


@pytest.mark.parametrize("subdir", ["../x", "a/../../b", "/abs", "", "a\\b"])
def test_subdir_must_stay_inside(tmp_path: Path, subdir: str) -> None:
    with pytest.raises(ShardpyError) as err:
        find_shard_root(tmp_path, subdir)
    assert err.value.code == "SOURCE_SUBDIR_INVALID"


def test_subdir_not_found(tmp_path: Path) -> None:
    with pytest.raises(ShardpyError) as err:
        find_shard_root(tmp_path, "nope/deeper")
    assert err.value.code == "SOURCE_SUBDIR_NOT_FOUND"


def test_nested_subdir(tmp_path: Path) -> None:
    write_shard(tmp_path / "shards" / "demo", "1.0.0")
    assert find_shard_root(tmp_path, "shards/demo/") == tmp_path / "shards" / "demo"


def test_ignore_chain_and_migrations(tmp_path: Path) -> None:
    shard = tmp_path / "a" / "b"
    write_shard(shard, "1.0.0")
    assert ignore_chain(tmp_path, shard) == [tmp_path, tmp_path / "a", shard]
    assert ignore_chain(tmp_path, tmp_path) == [tmp_path]
    assert migrations_dir(tmp_path, shard) is None
    (tmp_path / "migrations").mkdir()
    assert migrations_dir(tmp_path, shard) == tmp_path / "migrations"
    (tmp_path / "a" / "migrations").mkdir()
    assert migrations_dir(tmp_path, shard) == tmp_path / "a" / "migrations"
    (shard / "migrations").write_text("a file, not a directory")
    assert migrations_dir(tmp_path, shard) == tmp_path / "a" / "migrations"
    with pytest.raises(ValueError):
        ignore_chain(shard, tmp_path)


def test_bundled_layout_shape(tmp_path: Path) -> None:
    """The package ships _bundled/{shard-template,migrations,.shardmindignore}."""
    write_shard(tmp_path / "shard-template", "1.0.0")
    (tmp_path / "migrations").mkdir()
    (tmp_path / ".shardmindignore").write_text("x\n")
    shard = find_shard_root(tmp_path, None)
    assert shard == tmp_path / "shard-template"
    assert migrations_dir(tmp_path, shard) == tmp_path / "migrations"
    assert ignore_chain(tmp_path, shard) == [tmp_path, shard]
