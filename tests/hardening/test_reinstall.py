"""Issue 26, item 6: running the README's install command a second time on
the vault it made. The bootstrap ran `git init`, so the folder used to be read
as a git source ("no semver tag"); it is the vault, and the answer says so and
points at `shardpy update`, changing nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shardkit import run_shardpy, tree_snapshot


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    dest = tmp_path_factory.mktemp("again") / "vault"
    proc = run_shardpy("install", "--defaults", dest, cwd=dest.parent)
    assert proc.returncode == 0, proc.stderr
    assert (dest / ".git").is_dir()  # what made it look like a git source
    return dest


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("install", "--defaults", "{vault}"), "VAULT_ALREADY_INSTALLED"),  # the README's command again
        (("install", "--defaults"), "VAULT_ALREADY_INSTALLED"),  # inside the vault
        (("install", "{vault}", "{other}"), "SOURCE_IS_VAULT"),  # the vault named as a source
    ],
    ids=["readme-again", "in-the-vault", "as-source"],
)
def test_a_second_install_names_the_vault(
    vault: Path, tmp_path: Path, args: tuple[str, ...], code: str
) -> None:
    before = tree_snapshot(vault, skip=[".git"])
    argv = [a.format(vault=vault, other=tmp_path / "other") for a in args]
    proc = run_shardpy(*argv, "--json", cwd=vault)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f'"code": "{code}"' in proc.stdout, proc.stdout
    assert "shardpy update" in proc.stdout and "semver" not in proc.stdout
    assert tree_snapshot(vault, skip=[".git"]) == before
    assert not (tmp_path / "other").exists()
