"""Issue 26, item 12: with no ``qmd`` on the machine, every MCP search carried a ``qmd failed``
notice whose reason nested one level per call (``qmd died recently (qmd died recently (…``), and
the launcher the flagship registers in ``.mcp.json`` (``.claude/scripts/qmd_mcp.py``) failed.

The registration stays: a defaults install equals the shard's files (CONTRACT §6), so what is
rendered cannot depend on the machine. The launcher instead says in one line that qmd is absent
and exits cleanly, and a failure reason never nests (docs/FLAGSHIP.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio

from tests.serve.kit import build_world, connect, uri
from tests.shardkit import REPO_ROOT, child_env

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
