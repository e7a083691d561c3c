"""A search index in a cache folder this account may not write (a helper's probe).

A clean close leaves an index without its WAL ``-shm`` file, and SQLite needs one to read a WAL
database: in a read-only cache every search failed with INDEX_UNWRITABLE, where a built index
should answer (docs/SEARCH.md). It is now opened as it is (immutable: nobody here can write it).
As root, the search runs without the capabilities that let root write anything (``setpriv``).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hardening.faults import as_a_user
from tests.shardkit import child_env, run_shardpy, shardpy_argv


@pytest.fixture
def read_only_index(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    env = {"SHARDPY_CACHE_DIR": str(tmp_path / "cache"), "HOME": str(tmp_path / "home")}
    assert (
        run_shardpy(
            "install", "--defaults", tmp_path / "vault", cwd=tmp_path, env=env, timeout=300
        ).returncode
        == 0
    )
    assert run_shardpy("index", cwd=tmp_path / "vault", env=env).returncode == 0
    folder = tmp_path / "cache/index"
    files = list(folder.iterdir())
    for f in files:
        f.chmod(0o444)
    folder.chmod(0o555)
    try:
        yield tmp_path / "vault", env
    finally:
        folder.chmod(0o755)
        for f in files:
            f.chmod(0o644)


def test_a_built_index_in_a_read_only_cache_answers(read_only_index: tuple[Path, dict[str, str]]) -> None:
    vault, env = read_only_index
    done = subprocess.run(
        [*as_a_user(), *shardpy_argv("search", "--mode", "lexical", "--json", "vault")],
        cwd=vault,
        env=child_env(env),
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["hits"], done.stdout
