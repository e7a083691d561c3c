"""Issue 29: when QMD is used for a vault, `shardpy index` runs `qmd update` then `qmd embed`
detached and bounded, so QMD's vectors do not go stale. A stand-in `qmd` on PATH (a temp folder)
records its calls; nothing real is started."""

from __future__ import annotations

import json
import os
import stat
import sys
import time
from pathlib import Path

from shardpy.index import qmd_refresh
from tests.index.conftest import manifest, write
from tests.shardkit import REPO_ROOT, run_shardpy

# Records each call; `embed` waits for a release file (so the test can see `index` return while
# it still runs), or forever when told to hang (the bound must end it).
FAKE_QMD = """#!{python}
import os, sys, time
from pathlib import Path
state = Path(os.environ["FAKE_QMD_STATE"])
with open(state / "calls", "a") as fh:
    fh.write(" ".join(sys.argv[1:]) + " pid=" + str(os.getpid()) + "\\n")
if sys.argv[-1] == "embed":
    while not (state / "release").exists():
        time.sleep(0.05)
    with open(state / "calls", "a") as fh:
        fh.write("embed done\\n")
"""


def _setup(tmp_path: Path) -> tuple[Path, dict[str, str], Path]:
    vault = tmp_path / "My Vault"
    write(vault, "brain/Gotchas.md", "# Gotchas\n\nCaches lie.\n")
    manifest(vault, {"qmd_index": "Team Notes"})
    bin_dir, state, config = tmp_path / "bin", tmp_path / "state", tmp_path / "config"
    for d in (bin_dir, state, config / "qmd"):
        d.mkdir(parents=True)
    fake = bin_dir / "qmd"
    fake.write_text(FAKE_QMD.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "FAKE_QMD_STATE": str(state),
        "XDG_CONFIG_HOME": str(config),
        "SHARDPY_CACHE_DIR": os.environ["SHARDPY_CACHE_DIR"],
    }
    return vault, env, state


def _calls(state: Path) -> list[str]:
    path = state / "calls"
    return [line.split(" pid=")[0] for line in path.read_text().splitlines()] if path.exists() else []


def _wait_for(state: Path, line: str) -> list[str]:
    for _ in range(1200):  # polls a condition, never asserts a duration
        if line in _calls(state):
            return _calls(state)
        time.sleep(0.05)
    raise AssertionError(f"{line!r} never came: {_calls(state)}")


def test_index_updates_and_embeds_qmd_in_the_background(tmp_path: Path) -> None:
    vault, env, state = _setup(tmp_path)
    (tmp_path / "config/qmd/team-notes.yml").write_text("collections: {}\n")  # QMD is used here
    done = run_shardpy("index", vault, "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert any("'team-notes'" in n for n in json.loads(done.stdout)["notices"])
    # `index` has returned while `qmd embed` is still running: it was detached.
    assert _wait_for(state, "--index team-notes embed") == [
        "--index team-notes update",
        "--index team-notes embed",
    ]
    (state / "release").touch()
    _wait_for(state, "embed done")


def test_nothing_runs_where_qmd_is_not_used(tmp_path: Path) -> None:
    vault, env, state = _setup(tmp_path)  # qmd on PATH, but no index configured for this vault
    done = run_shardpy("index", vault, "--json", cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert not any(n.startswith("qmd:") for n in json.loads(done.stdout)["notices"])
    time.sleep(0.5)
    assert _calls(state) == []


def test_a_hanging_step_is_ended_at_its_bound(tmp_path: Path) -> None:
    vault, env, state = _setup(tmp_path)
    (tmp_path / "config/qmd/team-notes.yml").write_text("collections: {}\n")
    done = run_shardpy("index", vault, cwd=tmp_path, env={**env, qmd_refresh.TIMEOUT_ENV: "1"})
    assert done.returncode == 0, done.stderr
    _wait_for(state, "--index team-notes embed")
    pid = int((state / "calls").read_text().splitlines()[-1].split("pid=")[1])
    for _ in range(1200):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        raise AssertionError("the hanging qmd embed was never ended")
    assert "embed done" not in _calls(state)


def test_the_index_name_is_the_flagships() -> None:
    sys.path.insert(0, str(REPO_ROOT / "shard-template/.claude/scripts"))
    try:
        from vaultlib.qmd import index_name as flagship_name
    finally:
        sys.path.pop(0)
    for folder, pinned in (("My Vault", None), ("x", "Team Notes"), ("Ünïcode ✓", None), ("---", None)):
        root = Path("/tmp/h4-no-such") / folder
        data = {"qmd_index": pinned} if pinned else {}
        assert qmd_refresh._slug(pinned or folder) == flagship_name(root, data), folder
