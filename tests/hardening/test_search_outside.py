"""Issue 26, item 7: `shardpy search` outside a vault, without `--vault`, does
not index a large folder without a word (`cd /tmp; shardpy search x` indexed
all of /tmp): off a terminal it is SEARCH_NOT_A_VAULT and nothing is indexed;
`--vault .`, an Obsidian vault or a small folder are searched as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shardkit import run_shardpy


def _folder(root: Path, notes: int) -> Path:
    for i in range(notes):
        (root / f"d{i % 7}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 7}" / f"n{i}.md").write_text(f"note {i} about zephyrs\n")
    return root


@pytest.fixture
def cache(tmp_path: Path) -> dict[str, str]:
    return {"SHARDPY_CACHE_DIR": str(tmp_path / "cache")}


def test_a_large_plain_folder_is_refused_and_not_indexed(tmp_path: Path, cache: dict[str, str]) -> None:
    big = _folder(tmp_path / "big", 600)
    for args in (("search", "zephyrs"), ("index",)):
        proc = run_shardpy(*args, "--json", cwd=big, env=cache)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert json.loads(proc.stdout)["error"]["code"] == "SEARCH_NOT_A_VAULT"
    assert not (tmp_path / "cache" / "index").exists() or not any((tmp_path / "cache" / "index").iterdir())


def test_the_hint_names_commands_that_work(tmp_path: Path, cache: dict[str, str]) -> None:
    """The refusal's hint named `--vault`, which `shardpy index` does not take (it takes the
    folder as an argument): each command the hint names must run."""
    big = _folder(tmp_path / "big", 600)
    hint = json.loads(run_shardpy("index", "--json", cwd=big, env=cache).stdout)["error"]["hint"]
    assert "`shardpy index .`" in hint and "`shardpy search --vault . QUERY`" in hint
    indexed = run_shardpy("index", ".", "--json", cwd=big, env=cache)
    assert indexed.returncode == 0, indexed.stdout + indexed.stderr
    asked = ("search", "--vault", ".", "zephyrs", "--mode", "lexical", "--json")
    found = run_shardpy(*asked, cwd=big, env=cache)
    assert found.returncode == 0 and json.loads(found.stdout)["hits"], found.stderr


def test_named_small_or_obsidian_folders_are_searched(tmp_path: Path, cache: dict[str, str]) -> None:
    big = _folder(tmp_path / "big", 600)
    named = run_shardpy(
        "search", "zephyrs", "--vault", ".", "--mode", "lexical", "--json", cwd=big, env=cache
    )
    assert named.returncode == 0 and json.loads(named.stdout)["hits"], named.stderr
    small = _folder(tmp_path / "small", 5)
    assert run_shardpy("search", "zephyrs", "--json", cwd=small, env=cache).returncode == 0
    obsidian = _folder(tmp_path / "obsidian", 600)
    (obsidian / ".obsidian").mkdir()
    assert run_shardpy("search", "zephyrs", "--json", cwd=obsidian, env=cache).returncode == 0
