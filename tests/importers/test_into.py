"""``--into`` given as an absolute path (a helper's probe of `shardpy import`).

Its leading "/" was stripped before the check, so ``--into /home/me/vault/imported`` wrote the
notes into the vault's ``home/me/vault/imported/``, exit 0. An absolute path inside the vault
now names that folder; one outside it is IMPORT_INTO_UNSAFE, as docs/ERRORS.md says.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shardkit import run_shardpy


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Path, Path]:
    done = run_shardpy("install", "--defaults", tmp_path / "vault", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    source = tmp_path / "project"
    source.mkdir()
    (source / "plan.md").write_text("---\ntitle: Plan\n---\nThe plan.\n", encoding="utf-8")
    return tmp_path / "vault", source


def test_an_absolute_into_inside_the_vault_is_that_folder(setup: tuple[Path, Path], tmp_path: Path) -> None:
    vault, source = setup
    into = str(vault / "imported")
    done = run_shardpy(
        "import", "--from", "basic-memory", source, vault, "--into", into, "--apply", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (vault / "imported/Plan.md").is_file()
    assert not any((vault / part).exists() for part in ("tmp", vault.parts[1]))


def test_an_absolute_into_outside_the_vault_is_refused(setup: tuple[Path, Path], tmp_path: Path) -> None:
    vault, source = setup
    args = ("import", "--from", "basic-memory", source, vault, "--into", str(tmp_path / "elsewhere"))
    done = run_shardpy(*args, "--apply", "--json", cwd=tmp_path)
    assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == "IMPORT_INTO_UNSAFE"
    assert not (tmp_path / "elsewhere").exists()
