"""`--data KEY=VALUE` (repeatable) on install, update and adopt: values typed
as YAML scalars (a text value stays as typed), merged over --values."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shardkit import Cli, make_shard

SCHEMA = {
    "values": {
        "name": {"type": "string", "default": "Ada"},
        "zip": {"type": "string", "default": "00000"},
        "count": {"type": "number", "default": 1},
        "on": {"type": "boolean", "default": False},
        "tags": {"type": "list", "default": []},
    }
}
BODY = "{{ values.name }} {{ values.zip }} {{ values.count }} {{ values.on }} {{ values.tags | join(',') }}\n"


@pytest.fixture
def shard(tmp_path: Path) -> Path:
    return make_shard(tmp_path / "shard", schema=SCHEMA, files={"Home.md.njk": BODY})


def test_data_is_typed_and_wins_over_values(cli: Cli, shard: Path, tmp_path: Path) -> None:
    values = tmp_path / "v.yaml"
    values.write_text("name: FromFile\ncount: 5\n")
    args = ["--data", "zip=01234", "--data", "count=7", "--data", "on=true", "--data", "tags=[a, b]"]
    data = cli.install_json(shard, tmp_path / "v", "--defaults", "--values", values, *args)
    assert data["values"] == {"name": "FromFile", "zip": "01234", "count": 7, "on": True, "tags": ["a", "b"]}
    assert (tmp_path / "v" / "Home.md").read_text() == "FromFile 01234 7 True a,b\n"


@pytest.mark.parametrize(
    ("pair", "code"),
    [
        ("novalue", "DATA_INVALID"),
        ("=x", "DATA_INVALID"),
        ("count=[1", "DATA_INVALID"),
        ("count=x", "VALUES_INVALID"),
        ("nope=1", "VALUES_UNKNOWN_KEY"),
    ],
)
def test_bad_data_is_a_typed_error(cli: Cli, shard: Path, tmp_path: Path, pair: str, code: str) -> None:
    res = cli.run("install", shard, tmp_path / "v", "--defaults", "--data", pair, "--json")
    assert res.exit_code == 1 and res.error_code() == code, res.output


def test_update_data_changes_a_value(cli: Cli, shard: Path, tmp_path: Path) -> None:
    vault = tmp_path / "v"
    cli.install_json(shard, vault, "--defaults")
    res = cli.run("update", "--yes", "--data", "count=3", "--json", cwd=vault)
    assert res.exit_code == 0, res.output
    assert res.json()["values"]["changed"]["count"] == {"old": 1, "new": 3}
    assert (vault / "Home.md").read_text() == "Ada 00000 3 False \n"
    assert "count: 3" in (vault / "shard-values.yaml").read_text()


def test_adopt_data(cli: Cli, shard: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    clone.mkdir()
    (clone / "Home.md").write_text("Bob 00000 1 False \n")
    res = cli.run("adopt", shard, "--yes", "--data", "name=Bob", "--json", cwd=clone)
    assert res.exit_code == 0, res.output
    assert res.json()["summary"]["matched"] == 1
