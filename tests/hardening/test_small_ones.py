"""Item 16, the smaller ones: the missing --values file's hint, a value that
is new is not "None → 5", a source named as a sentence would ("the folder
X", not "local X" or "bundled bundled//…"), no empty module folder left
after removing the module, and `pytest -n 2` without pytest-xdist says which
package is missing."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from shardpy.cli.render import _value_change
from tests.shardkit import REPO_ROOT, Cli, child_env, make_shard

SCHEMA = {
    "values": {"size": {"type": "number", "default": 3, "message": "Size"}},
    "modules": {"gemini": {"label": "Gemini", "paths": [".gemini/"], "removable": True}},
}
FILES = {"Home.md": "# Home\n", ".gemini/settings.json": "{}\n", ".gemini/deep/notes.md": "n\n"}


def test_a_missing_values_file_hint_names_the_file(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "src", files=FILES, schema=SCHEMA)
    res = cli.run("install", shard, tmp_path / "v", "--values", tmp_path / "nope.yaml", "--json")
    err = res.json()["error"]
    assert err["code"] == "VALUES_FILE_MISSING"
    assert "nope.yaml" in err["hint"] and ".shardmind" not in err["hint"]


def test_a_new_value_is_shown_as_new() -> None:
    assert _value_change({"old": None, "new": 5, "added": True}) == "5 (new)"
    assert _value_change({"old": 2, "new": None, "removed": True}) == "removed (was 2)"
    assert _value_change({"old": None, "new": 5}) == "None → 5"  # a real null stays one


def test_update_names_the_source_and_prunes_a_removed_modules_folders(tmp_path: Path, cli: Cli) -> None:
    src = make_shard(tmp_path / "src", files=FILES, schema={"modules": SCHEMA["modules"]})
    vault = tmp_path / "vault"
    cli.install_json(src, vault, "--defaults")
    res = cli.run("update", "--release", "2.0.0", "--json", cwd=vault)
    assert f"came from the folder {src}" in res.json()["error"]["message"]
    shutil.rmtree(src)
    make_shard(src, files=FILES, schema=SCHEMA, manifest={"version": "1.1.0"})
    res = cli.run("update", "--yes", "--remove-module", "gemini", cwd=vault)
    assert res.exit_code == 0, res.output
    assert "3 (new)" in res.stdout and "None →" not in res.stdout
    assert not (vault / ".gemini").exists()


def test_pytest_n_without_xdist_names_the_missing_package(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:xdist", "-n", "2", "tests/test_environment.py"],
        cwd=REPO_ROOT,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "missing pytest-xdist" in done.stdout + done.stderr
    assert "unrecognized arguments" not in done.stdout + done.stderr
