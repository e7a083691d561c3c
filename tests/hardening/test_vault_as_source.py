"""Item 2: an installed vault (a folder whose .shardmind/ holds state.json),
or a folder inside one, is refused as a shard source, pointing to update."""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from tests.shardkit import Cli, make_shard


@pytest.fixture
def vault(tmp_path: Path, cli: Cli) -> Path:
    shard = make_shard(tmp_path / "shard", files={"brain/a.md": "a\n", "b.md": "b\n"})
    cli.install_json(shard, tmp_path / "v1", "--defaults")
    return tmp_path / "v1"


@pytest.mark.parametrize("named", [".", "brain"])
def test_one_argument_naming_a_vault_or_a_folder_in_it(
    vault: Path, tmp_path: Path, cli: Cli, named: str
) -> None:
    here = tmp_path / "x"
    here.mkdir()
    res = cli.run("install", "--defaults", vault / named, "--json", cwd=here)
    assert res.exit_code == 1, res.output
    err = res.json()["error"]
    # The vault itself, named alone, is where the install would go (issue 26 item 6: the
    # README's command run twice); a folder inside it can only be a source.
    assert err["code"] == ("VAULT_ALREADY_INSTALLED" if named == "." else "SOURCE_IS_VAULT")
    assert "shardpy update" in err["hint"]
    assert list(here.iterdir()) == []
    assert not (vault / "brain" / ".shardmind").exists()


def test_a_vault_as_the_source_of_two_arguments(vault: Path, tmp_path: Path, cli: Cli) -> None:
    res = cli.run("install", vault, tmp_path / "y", "--defaults", "--json")
    assert res.json()["error"]["code"] == "SOURCE_IS_VAULT"
    assert not (tmp_path / "y").exists()


def test_a_vault_packed_as_an_archive(vault: Path, tmp_path: Path, cli: Cli) -> None:
    archive = tmp_path / "vault.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(vault, arcname="pkg")
    res = cli.run("install", archive, tmp_path / "z", "--defaults", "--json")
    assert res.json()["error"]["code"] == "SOURCE_IS_VAULT"
