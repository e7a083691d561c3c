"""`shardpy index` / `shardpy search` as real processes (the Typer-free fast path hooks use)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.index.conftest import write


def _shardpy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardpy", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )


def test_index_only_and_search_json_in_a_child_process(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\n## Plans\n\nlaunch the rocket\n")
    done = _shardpy("index", "--json", cwd=vault)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["indexed"] == 1
    write(vault, "b.md", "# B\n\nthe rocket is late\n")
    done = _shardpy("index", "--only", "b.md", cwd=vault)
    assert done.returncode == 0 and "Indexed 1 notes" in done.stdout, done.stdout + done.stderr
    done = _shardpy("search", "rocket launch", "--json", "--top", "5", "--mode", "lexical", cwd=vault)
    data = json.loads(done.stdout)
    assert [h["path"] for h in data["hits"]] == ["a.md"] and data["match"] == "all"
    done = _shardpy("search", "", "--json", cwd=vault)
    assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == "SEARCH_EMPTY_QUERY"
    assert "Traceback" not in done.stderr


def test_importing_the_package_is_cheap() -> None:
    code = "import sys, shardpy.index; print('sqlite3' in sys.modules, 'ruamel' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
