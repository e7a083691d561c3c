"""Typer application wiring (placeholder until the commands land)."""

from __future__ import annotations

import typer

from shardpy import __version__

app = typer.Typer(
    no_args_is_help=False, add_completion=True, help="Package manager for Obsidian vault templates."
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"shardpy {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version."
    ),
) -> None:
    """shardpy: install, update and adopt vault templates."""


def run() -> None:
    app()


from shardpy.cli import import_cmd as _import_cmd  # noqa: E402

_import_cmd.register(app)
