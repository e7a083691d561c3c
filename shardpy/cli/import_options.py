"""`shardpy import` declared for Typer, from its option table (shardpy.cli.import_cmd.ImportArgs).

The body is ``shardpy.cli.import_cmd.run_command``, which plain invocations
reach without Typer (see ``shardpy.cli.app``).
"""

from __future__ import annotations

import typer

from shardpy.cli.import_cmd import ImportArgs, run_command
from shardpy.cli.options import typer_command


def _run(args: ImportArgs) -> None:
    # run_command looked up at call time: tests/importers/test_cli.py stands in for it.
    code = run_command(args)
    if code:
        raise typer.Exit(code)


import_command = typer_command(ImportArgs, _run, name="import")


def register(app: typer.Typer) -> None:
    """Add the ``import`` command to the shardpy app."""
    app.command("import")(import_command)
