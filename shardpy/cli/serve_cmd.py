# an option table's cells are calls by design: each returns a shardpy.record.field()

"""`shardpy serve`: its option table and body (an MCP client starts the server at every
session, so shardpy.cli.app runs a plain invocation without Typer)."""

from __future__ import annotations

from pathlib import Path

from shardpy.cli import options as o


class ServeArgs(o.Args):
    """Serve the vault over MCP (stdio): search, expand, recall, remember, record_work, health."""

    vault: Path | None = o.argument("The vault (default: the current folder).", flow="")
    project: str | None = o.value("--project", help="The caller's project, for clients that send no roots.")
    print_config: bool = o.flag(
        "--print-config", help="Print the snippet that registers this vault in a repo."
    )
    client: str = o.value(
        "--for", help="Config format for --print-config: claude, codex or gemini.", default="claude"
    )
    qmd: str | None = o.value("--qmd", help="The QMD launcher to search with (a command line).")
    trust_qmd: bool = o.flag(
        "--trust-qmd", help="Approve the vault's .mcp.json QMD launcher on this machine."
    )


def run_serve(args: ServeArgs) -> None:
    """Serve (or print the config); the flow takes the table's fields by name."""
    from shardpy.flows.serve import run_serve as serve

    o.flow_options(args, serve)
