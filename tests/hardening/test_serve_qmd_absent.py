"""Issue 26, item 12: with no ``qmd`` on the machine, every MCP search carried a ``qmd failed``
notice whose reason nested one level per call (``qmd died recently (qmd died recently (…``), and
the launcher the flagship registers in ``.mcp.json`` (``.claude/scripts/qmd_mcp.py``) failed.

Issue 29: the flagship no longer registers QMD's server where ``qmd`` is absent. ``qmd_enabled``'s
default is computed at install (``command_found('qmd')``) and recorded in shard-values.yaml, so
what an update renders stays what the install chose; Invariant 1 still holds (a template's output
is the values', the shard's static files are byte for byte). A vault that does register it
(installed where qmd was, or enabled by hand) still gets a launcher that says in one line that qmd
is absent and exits cleanly, and a failure reason never nests (docs/FLAGSHIP.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.serve.kit import build_world, connect, uri
from tests.shardkit import REPO_ROOT, child_env, describe, run_shardpy

LAUNCHER = REPO_ROOT / "shard-template/.claude/scripts/qmd_mcp.py"


def test_a_qmd_failure_reason_never_nests(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    missing = tmp_path / "no-such-qmd"

    async def scenario() -> list[str]:
        async with connect(
            world,
            cwd=world.repos["atlas"],
            roots=[uri(world.repos["atlas"])],
            args=["--qmd", f"{missing} mcp"],
            env={"SHARDPY_SERVE_QMD_COOLDOWN": "600"},  # every later call lands in the cooldown
        ) as s:
            reasons = []
            for _ in range(4):
                found = await s.call("search", {"query": "caches"})
                assert found["hits"], found  # the index still answers
                assert found["qmd"]["status"] == "failed", found
                reasons.append(str(found["qmd"]["reason"]))
            return reasons

    reasons = anyio.run(scenario)
    assert all(r.count("qmd died recently") <= 1 and r.count("(") <= 1 for r in reasons), reasons
    assert reasons[1] == reasons[2] == reasons[3], reasons
    assert reasons[0] in reasons[1], reasons  # the cooldown names the death's own reason, once
    assert str(tmp_path) not in "".join(reasons)


def test_the_flagship_launcher_without_qmd_exits_cleanly(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = subprocess.run(
        [sys.executable, str(LAUNCHER)],
        capture_output=True,
        text=True,
        env=child_env({"PATH": str(empty)}),
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""  # nothing on the MCP wire
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and "qmd is not installed" in lines[0], done.stderr


def _path_without_qmd(extra: Path | None = None) -> str:
    """This machine's PATH without any folder that holds a ``qmd`` (and ``extra`` first)."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and not (Path(d) / "qmd").exists()]
    return os.pathsep.join([str(extra), *dirs] if extra is not None else dirs)


def _fake_qmd(folder: Path) -> Path:
    """A ``qmd`` that accepts every command and does nothing (the bootstrap hook calls it)."""
    folder.mkdir()
    qmd = folder / "qmd"
    qmd.write_text("#!/bin/sh\nexit 0\n")
    qmd.chmod(0o755)
    return folder


@pytest.mark.parametrize("installed", [False, True], ids=["no-qmd", "qmd-on-path"])
def test_the_flagship_registers_qmd_only_where_qmd_is_installed(tmp_path: Path, installed: bool) -> None:
    """Issue 29: a defaults install registers QMD's MCP server when (and only when) the ``qmd``
    command is on PATH at install, and records that choice as ``qmd_enabled``."""
    bin_dir = _fake_qmd(tmp_path / "bin") if installed else None
    env = {"PATH": _path_without_qmd(bin_dir), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    vault = tmp_path / "vault"
    done = run_shardpy("install", "--defaults", vault, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, describe(done)
    servers = json.loads((vault / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]
    assert servers["vault"] == {"command": "shardpy", "args": ["serve", "."]}
    assert ("qmd" in servers) is installed, servers
    assert f"qmd_enabled: {'true' if installed else 'false'}" in (vault / "shard-values.yaml").read_text()


def test_a_computed_default_asks_for_bare_command_names_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``command_found`` answers whether a command is on PATH; a path (which would let a shard
    probe this machine's files) is never found, even when it names an executable."""
    from shardpy.shard.render import render_expression

    fake = _fake_qmd(tmp_path / "bin") / "qmd"
    monkeypatch.setenv("PATH", _path_without_qmd(fake.parent))

    def ask(arg: str) -> str:
        return render_expression(f"{{{{ command_found({arg!r}) }}}}", {}, name="probe").strip().lower()

    assert ask("qmd") == "true"
    assert ask(str(fake)) == "false"
    assert ask("../bin/qmd") == "false"
    monkeypatch.setenv("PATH", _path_without_qmd())
    assert ask("qmd") == "false"
