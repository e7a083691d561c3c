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


def test_a_second_source_into_the_same_folder_is_refused_until_said(tmp_path: Path) -> None:
    """Two basic-memory projects, both with an index.md: the second import updated the first's
    note in place (the ledger knows a note by its path in the source, not by the source), and
    project ONE's index was gone. Now: IMPORT_OTHER_SOURCE, its own folder, or --new-source."""
    done = run_shardpy("install", "--defaults", tmp_path / "vault", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    vault = tmp_path / "vault"
    for name, words in (("p1", "Project ONE: work notes"), ("p2", "Project TWO: personal notes")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "index.md").write_text(f"---\ntitle: Index\n---\n{words}\n", encoding="utf-8")
    first = run_shardpy("import", "--from", "basic-memory", tmp_path / "p1", vault, "--apply", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    (note,) = (vault / "memories/basic-memory").rglob("Index.md")
    again = run_shardpy("import", "--from", "basic-memory", tmp_path / "p1", vault, "--apply", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr  # the same source: an ordinary re-run
    args = ("import", "--from", "basic-memory", tmp_path / "p2", vault, "--apply", "--json")
    other = run_shardpy(*args, cwd=tmp_path)
    assert other.returncode == 1 and json.loads(other.stdout)["error"]["code"] == "IMPORT_OTHER_SOURCE"
    assert "Project ONE" in note.read_text(encoding="utf-8")
    own = run_shardpy(*args[:-1], "--into", "memories/p2", cwd=tmp_path)
    assert own.returncode == 0, own.stdout + own.stderr
    assert "Project TWO" in (vault / "memories/p2/Index.md").read_text(encoding="utf-8")
    assert "Project ONE" in note.read_text(encoding="utf-8")
    said = run_shardpy(*args[:-1], "--new-source", cwd=tmp_path)
    assert said.returncode == 0, said.stdout + said.stderr
    assert "Project TWO" in note.read_text(encoding="utf-8")
