"""Two releases that match a hand-made vault equally (a helper's probe).

v1.0.0 and v1.1.0 differ only in a.md's line 7, and the user edited a.md's line 2: each release
matches the vault's d.md and no more. The tie went to the newer release, so a.md read as "you
changed it; the shard did not" and 1.1.0's line 7 never arrived (update then said up to date).
It goes to the older now, with a warning: 1.1.0's change is merged with the user's.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.adopt.test_adopt import commit_release, run
from tests.shardkit import Cli
from tests.sources.support import GIT_ENV, git

LINES = [f"line{n}\n" for n in range(1, 9)]


def _release(path: Path, version: str) -> None:
    a = list(LINES)
    if version == "1.1.0":
        a[6] = "line7 s\n"
    commit_release(path, {"brain/a.md": "".join(a), "brain/d.md": "".join(LINES)}, version)


def test_a_tie_goes_to_the_older_release_and_the_newer_change_arrives(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))
    repo = tmp_path / "shard"
    repo.mkdir()
    git(repo, "init", "-q", "--template=", "-b", "main")
    _release(repo, "1.0.0")
    vault = tmp_path / "vault"
    shutil.copytree(repo / "brain", vault / "brain")
    mine = list(LINES)
    mine[1] = "line2 mine\n"
    (vault / "brain/a.md").write_text("".join(mine), encoding="utf-8")
    _release(repo, "1.1.0")
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "merge", "--yes", "--defaults")
    assert code == 0, out
    assert out["detected_version"] == "1.0.0", out
    assert any("match this vault equally" in w for w in out["warnings"]), out["warnings"]
    text = (vault / "brain/a.md").read_text(encoding="utf-8")
    assert "line2 mine\n" in text and "line7 s\n" in text, text
    assert os.path.exists(vault / ".shardmind/state.json")
