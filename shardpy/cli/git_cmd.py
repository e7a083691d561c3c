"""``shardpy git setup`` and ``shardpy merge-file`` declared for Typer.

``merge-file`` runs without Typer (:mod:`shardpy.cli.app` sends it straight
to :func:`shardpy.cli.merge_file.main`: git starts it once per file); the
declaration here gives it a place in ``shardpy --help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

git_app = typer.Typer(help="Sync a vault between machines with git (see docs/GIT.md).", no_args_is_help=True)


@git_app.command("setup")
def setup_command(
    vault: Annotated[
        Path | None, typer.Argument(help="The vault (default: the vault around the current folder).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would change; change nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Register shardpy as the repository's merge driver; write .gitattributes and .gitignore entries."""
    from shardpy.cli.output import guarded, print_json

    def run() -> None:
        from shardpy.cli.render import git_setup_result
        from shardpy.flows.updatesource import find_vault
        from shardpy.gitsync.setup import setup

        root = find_vault(vault if vault is not None else Path.cwd())
        plan = setup(root, dry_run=dry_run)
        if as_json:
            print_json(plan.to_json())
        else:
            git_setup_result(plan)

    guarded(run, as_json=as_json)


def merge_file_command(ctx: typer.Context) -> None:
    """Merge BASE OURS THEIRS [PATH] as a note or vault record (git's merge driver: --driver %O %A %B %P)."""
    from shardpy.cli.merge_file import main

    code = main(list(ctx.args))
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    app.add_typer(git_app, name="git")
    app.command(
        "merge-file",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )(merge_file_command)
