"""``shardpy memory export`` and ``shardpy memory show``: the memory graph from the command line
(docs/MEMORY.md). The vault's owner sees every entity; no caller's reach applies here."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from shardpy.graph.store import Snapshot

memory_app = typer.Typer(
    help="The memory graph: export it, show one entity (see docs/MEMORY.md).", no_args_is_help=True
)

AsOf = Annotated[
    str | None,
    typer.Option("--as-of", help="Facts valid on this day (2025-09-16) or ISO instant; default: now."),
]


def _snapshot(vault: Path | None) -> Snapshot:
    from shardpy.errors import ShardpyError
    from shardpy.flows.importflow import memory_root
    from shardpy.graph.store import GraphStore

    root = (vault or Path.cwd()).resolve()
    if not root.is_dir():
        raise ShardpyError("VAULT_NOT_FOUND", f"{root} is not a folder", "Pass the vault's folder.")
    return GraphStore(root, memory_root(root)).snapshot(full=True)


@memory_app.command("export")
def export_command(
    vault: Annotated[Path | None, typer.Argument(help="The vault (default: the current folder).")] = None,
    as_of: AsOf = None,
    output: Annotated[
        typer.FileTextWrite | None,
        typer.Option("-o", "--output", help="Write to FILE (default: stdout).", encoding="utf-8"),
    ] = None,
) -> None:
    """Write the graph as the MCP memory server's JSONL (its MEMORY_FILE_PATH format)."""
    from shardpy.cli.output import guarded

    def run() -> None:
        from shardpy.graph.export import jsonl
        from shardpy.graph.facts import parse_as_of

        at = parse_as_of(as_of, "--as-of") if as_of is not None else None
        snap = _snapshot(vault)
        text = jsonl(snap, at)
        if output is None:
            sys.stdout.write(text + ("\n" if text else ""))
        else:
            output.write(text)  # the user's own file (click opened it), not vault content

    guarded(run)


@memory_app.command("show")
def show_command(
    name: Annotated[str, typer.Argument(help="The entity's exact name.")],
    vault: Annotated[
        Path | None, typer.Option("--vault", help="The vault (default: the current folder).")
    ] = None,
    as_of: AsOf = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Print one entity: its live (or as-of) facts, its superseded facts, its relations both ways."""
    from shardpy.cli.output import guarded, print_json

    def run() -> None:
        from shardpy.graph.export import entity_json, entity_text
        from shardpy.graph.facts import parse_as_of

        at = parse_as_of(as_of, "--as-of") if as_of is not None else None
        snap = _snapshot(vault)
        data = entity_json(snap, name, at)
        if as_json:
            print_json(data)
        else:
            sys.stdout.write(entity_text(data) + "\n")

    guarded(run, as_json=as_json)


def register(app: typer.Typer) -> None:
    app.add_typer(memory_app, name="memory")
