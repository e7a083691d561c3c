"""Issue 26, item 11: `--data` with a key the shard does not declare is
VALUES_UNKNOWN_KEY for install, adopt and update alike (update used to drop
it with a warning and exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shardkit import Cli, make_shard

SCHEMA = {"values": {"size": {"type": "number", "default": 3, "message": "Size"}}}
FILES = {"Home.md": "# Home {{ size }}\n"}


@pytest.mark.parametrize("command", ["install", "update"])
def test_an_unknown_data_key_is_refused(tmp_path: Path, cli: Cli, command: str) -> None:
    shard = make_shard(tmp_path / "src", files=FILES, schema=SCHEMA)
    vault = tmp_path / "vault"
    if command == "update":
        assert cli.run("install", shard, vault, "--defaults").exit_code == 0
        args: tuple[str | Path, ...] = ("update", "--yes", "--data", "nokey=1", "--json")
        before = (vault / "Home.md").read_bytes()
    else:
        args = ("install", shard, vault, "--defaults", "--data", "nokey=1", "--json")
    res = cli.run(*args, cwd=vault if command == "update" else tmp_path)
    assert res.exit_code == 1, res.output
    error = res.json()["error"]
    assert error["code"] == "VALUES_UNKNOWN_KEY" and error["details"]["keys"] == ["nokey"]
    assert "size" in error["hint"]
    if command == "update":
        assert (vault / "Home.md").read_bytes() == before


def test_a_bad_data_value_names_the_flag(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "src", files=FILES, schema=SCHEMA)
    res = cli.run("install", shard, tmp_path / "vault", "--defaults", "--data", "size=many", "--json")
    error = res.json()["error"]
    assert error["code"] == "VALUES_INVALID"
    assert "--data size=" in error["hint"] and "shard-values.yaml" not in error["hint"]
