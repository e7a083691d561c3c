"""``shardpy serve --print-config``: the snippet a consuming repository adds to register the vault."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Literal

from shardpy.errors import ShardpyError
from shardpy.serve.identity import launch_caller

Client = Literal["claude", "codex", "gemini"]
SERVER_NAME = "vault"


def command_line(vault: Path, project: str | None) -> tuple[str, list[str]]:
    launched = Path(sys.argv[0])
    exe = (
        str(launched.resolve())
        if launched.name == "shardpy" and launched.is_file()
        else shutil.which("shardpy")
    )
    head = [exe] if exe else [sys.executable, "-m", "shardpy"]
    args = [*head[1:], "serve", str(vault)]
    if project:
        args += ["--project", project]
    return head[0], args


def snippet(vault: Path, cwd: Path, project: str | None, client: Client) -> str:
    """The configuration text, with the caller's project written in (identity for clients without roots)."""
    vault = Path(os.path.realpath(vault))
    caller = launch_caller(vault, cwd, project)
    if caller.is_vault:
        name = None
    elif caller.project is None:
        raise ShardpyError(
            "SERVE_NO_PROJECT",
            f"cannot derive a project name from {cwd}",
            "Pass --project NAME (lowercase letters, digits, '.', '_' or '-').",
        )
    else:
        name = caller.project
    command, args = command_line(vault, name)
    if client == "codex":
        quoted = ", ".join(json.dumps(a) for a in args)
        return (
            "# .codex/config.toml (or ~/.codex/config.toml)\n"
            f"[mcp_servers.{SERVER_NAME}]\ncommand = {json.dumps(command)}\nargs = [{quoted}]\n"
        )
    entry = {"command": command, "args": args}
    return json.dumps({"mcpServers": {SERVER_NAME: entry}}, indent=2) + "\n"
