"""Item 10: shell completion through the real entry point (the `shardpy`
console script), for bash, zsh and fish: candidates, never a traceback."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.shardkit import child_env

SHELLS = {
    "bash": lambda words, cword: {
        "_SHARDPY_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": cword,
    },
    "zsh": lambda words, cword: {"_SHARDPY_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": words},
    "fish": lambda words, cword: {
        "_SHARDPY_COMPLETE": "complete_fish",
        "_TYPER_COMPLETE_ARGS": words,
        "_TYPER_COMPLETE_FISH_ACTION": "get-args",
    },
}
CASES = [
    ("shardpy ", "1", "install"),
    ("shardpy up", "1", "update"),
    ("shardpy import --fr", "2", "--from"),
    # A choice's values, from the one option table (issue 27, shardpy.cli.options).
    ("shardpy update --on-conflict ", "3", "theirs"),
    ("shardpy adopt src --mode ", "4", "use-shard"),
]


def _script() -> str:
    found = shutil.which("shardpy", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.skip("the shardpy console script is not installed next to this Python")
    return found


@pytest.mark.parametrize("shell", sorted(SHELLS))
@pytest.mark.parametrize(("words", "cword", "expected"), CASES)
def test_completion_answers(tmp_path: Path, shell: str, words: str, cword: str, expected: str) -> None:
    env = child_env(SHELLS[shell](words, cword))
    done = subprocess.run([_script()], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and not done.stderr.strip(), done.stderr
    assert expected in done.stdout
