"""The wheel carries the flagship: `shardpy install --defaults DIR` with no
source works from a non-editable install, i.e. from the wheel's own files and
not from this repository."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.shardkit import assert_equals_clone, clone_expectation

ROOT = Path(__file__).resolve().parents[2]


def _build_wheel(out: Path) -> Path:
    # hatchling is a test extra: building without isolation needs no network.
    done = subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = out.glob("shardpy-*.whl")
    return wheel


def test_wheel_installs_the_bundled_flagship(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path / "dist")
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        zf.extractall(site)
    assert "shardpy/_bundled/shard-template/.shardmind/shard.yaml" in names
    assert "shardpy/_bundled/.shardmindignore" in names
    assert any(n.startswith("shardpy/_bundled/migrations/") for n in names)
    assert not any(n.startswith(("tests/", "bench/")) for n in names)

    # The unpacked wheel comes first on the path; the dependencies come from this environment.
    env = {**os.environ, "PYTHONPATH": str(site), "HOME": str(tmp_path / "home")}
    where = subprocess.run(
        [sys.executable, "-c", "import shardpy; print(shardpy.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(site), where

    vault = tmp_path / "agent-vault"
    done = subprocess.run(
        [sys.executable, "-m", "shardpy", "install", "--defaults", str(vault)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    shutil.rmtree(vault / ".git", ignore_errors=True)  # the flagship's bootstrap hook runs `git init`
    assert_equals_clone(vault, clone_expectation(ROOT, ROOT / "shard-template"))
