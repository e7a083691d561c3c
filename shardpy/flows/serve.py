"""``shardpy serve``: check the vault, then print a config snippet or run the stdio server."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import cast

from shardpy.errors import ShardpyError, UsageError

CLIENTS = ("claude", "codex", "gemini")


def _vault(vault: Path | None) -> Path:
    root = Path(os.path.realpath(vault or Path.cwd()))
    if not root.is_dir():
        raise ShardpyError(
            "SERVE_NO_VAULT", f"{root} is not a folder", "Pass the vault's folder: shardpy serve VAULT."
        )
    return root


def run_serve(
    vault: Path | None,
    *,
    project: str | None,
    print_config: bool,
    client: str,
    qmd: str | None = None,
    trust_qmd: bool = False,
) -> None:
    """``qmd``: the QMD launcher this machine names (``--qmd COMMAND``); ``trust_qmd``: record consent
    to the vault's own ``.mcp.json`` launcher and exit (docs/SERVE.md, "QMD")."""
    root = _vault(vault)
    if client not in CLIENTS:
        raise UsageError(f"--for must be claude, codex or gemini (got {client})")
    if trust_qmd:
        _trust_qmd(root)
        return
    if print_config:
        from shardpy.serve.config import Client, snippet

        sys.stdout.write(snippet(root, Path.cwd(), project, cast(Client, client)))
        return
    if sys.stdin.isatty():
        sys.stderr.write(
            "shardpy serve speaks MCP on stdin/stdout; an MCP client starts it.\n"
            "To register this vault in a repository: shardpy serve VAULT --print-config\n"
        )
    from shardpy.serve.qmd import Launcher
    from shardpy.serve.server import serve

    serve(root, cwd=Path.cwd(), project=project, qmd=Launcher.parse(qmd) if qmd is not None else None)


def _trust_qmd(root: Path) -> None:
    from shardpy.serve.qmd import trust

    launcher = trust(root)
    shown = " ".join(shlex.quote(w) for w in (launcher.command, *launcher.args))
    env = "".join(f"\n  env {k}={shlex.quote(v)}" for k, v in sorted(launcher.env.items()))
    sys.stdout.write(
        f"QMD launcher approved for {root} on this machine:\n  {shown}{env}\n"
        "A change to it (or to a vault file it names) withdraws the approval.\n"
    )
