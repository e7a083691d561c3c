"""The reference MCP memory server (`@modelcontextprotocol/server-memory`), run as
an oracle: installed from the npm registry into a cache folder the first time a
test asks for it, then driven over real MCP stdio with the SDK's client.

When node/npm are missing or the registry cannot be reached, the tests that
need the oracle skip with the reason (never fail silently, never pass without
it). ``SHARDPY_TEST_ORACLE_DIR`` moves the cache folder.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

PACKAGE = "@modelcontextprotocol/server-memory"
VERSION = "2026.8.31"  # pinned: the oracle's answers are what the tests compare against


def _cache_root() -> Path:
    override = os.environ.get("SHARDPY_TEST_ORACLE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("shardpy-test-oracles"))


def memory_server_script() -> Path:
    """The oracle's entry script, installed on first use (skips the test when it cannot be)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("the MCP memory server oracle needs node and npm on PATH")
    folder = _cache_root() / f"server-memory-{VERSION}"
    script = folder / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    if script.is_file():
        return script
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder.parent / f".server-memory-{VERSION}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # pytest-xdist workers install it once
        if not script.is_file():
            proc = subprocess.run(
                [
                    "npm",
                    "install",
                    "--silent",
                    "--no-audit",
                    "--no-fund",
                    "--prefix",
                    str(folder),
                    f"{PACKAGE}@{VERSION}",
                ],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
            )
            if proc.returncode != 0 or not script.is_file():
                reason = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
                pytest.skip(f"cannot install the MCP memory server oracle from npm: {reason[0]}")
    return script


@contextlib.asynccontextmanager
async def memory_server_session(graph: Path) -> AsyncIterator[Any]:
    """A real MCP client session with the oracle, its graph file at ``graph``."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command="node",
        args=[str(memory_server_script())],
        env={**os.environ, "MEMORY_FILE_PATH": str(graph)},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session
