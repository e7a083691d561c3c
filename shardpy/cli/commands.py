"""The Typer application: one function per command, each only parsing
options, calling a flow and printing its result."""

from __future__ import annotations

from typing import Any

import typer

from shardpy import __version__
from shardpy.cli import git_cmd, import_options, install_update, memory_cmd, options, serve_cmd, sync_cmd
from shardpy.cli.output import guarded
from shardpy.cli.search_cmd import IndexArgs, SearchArgs
from shardpy.cli.serve_cmd import ServeArgs
from shardpy.cli.status import StatusArgs

HELP_NAMES = ["-h", "--help"]
app = typer.Typer(
    no_args_is_help=False,
    add_completion=True,
    help="Package manager for Obsidian vault templates (shards): install, update, adopt, import.",
    context_settings={"help_option_names": HELP_NAMES},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"shardpy {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version."
    ),
) -> None:
    """shardpy: install, update and adopt vault templates; import agent memory."""
    if ctx.invoked_subcommand is None:
        _status(StatusArgs())


# install's, update's and adopt's bodies live in install_update (no Typer there); every
# command's options are declared once, in shardpy.cli.options, and built here (issue 27).
CONFLICTS_LEFT = install_update.CONFLICTS_LEFT


def _install(args: install_update.InstallArgs) -> None:
    guarded(lambda: install_update.run_install(args), as_json=args.as_json)


def _update(args: install_update.UpdateArgs) -> None:
    guarded(lambda: install_update.run_update(args), as_json=args.as_json)


def _adopt(args: install_update.AdoptArgs) -> None:
    guarded(lambda: install_update.run_adopt(args), as_json=args.as_json)


def _status(args: StatusArgs) -> None:
    from shardpy.cli.status import show_status

    code = show_status(verbose=args.verbose, as_json=args.as_json)
    if code:
        raise typer.Exit(code)


def _serve(args: ServeArgs) -> None:
    guarded(lambda: serve_cmd.run_serve(args))


app.command("install")(options.typer_command(install_update.InstallArgs, _install, name="install"))
app.command("status")(options.typer_command(StatusArgs, _status, name="status"))
app.command("update")(options.typer_command(install_update.UpdateArgs, _update, name="update"))
app.command("adopt")(options.typer_command(install_update.AdoptArgs, _adopt, name="adopt"))
app.command("serve")(options.typer_command(ServeArgs, _serve, name="serve"))


def _index(args: IndexArgs) -> None:
    from shardpy.cli.search_cmd import run_index

    guarded(lambda: run_index(args), as_json=args.as_json)


def _search(args: SearchArgs) -> None:
    from shardpy.cli.search_cmd import run_search

    guarded(lambda: run_search(args), as_json=args.as_json)


app.command("index")(options.typer_command(IndexArgs, _index, name="index"))
app.command("search")(options.typer_command(SearchArgs, _search, name="search"))


def readable_help(command: Any) -> Any:
    """Help without Python type names: a flag shows no ``<bool>``, a
    repeatable option names what it takes (``MODULE``, not ``<list[str]>``)."""
    for sub in getattr(command, "commands", {}).values():
        readable_help(sub)
    # The help option is made (and kept) on first use: made here, so it gets the same treatment.
    help_option = command.get_help_option(command.context_class(command, help_option_names=HELP_NAMES))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "is_flag", False):
            param.metavar = ""
        elif getattr(param, "multiple", False) and param.metavar is None:
            param.metavar = (param.name or "value").rsplit("_", 1)[-1].upper()
    return command


def run() -> None:
    import sys

    import typer.main

    cli = readable_help(typer.main.get_command(app))
    as_json = "--json" in sys.argv[1:]
    if not as_json and sys.stderr.isatty():
        cli()
        return
    # With --json even a usage error is the JSON error object on stdout; off a
    # terminal it is click's plain text, never rich's panel wrapped at 80
    # columns (tests/hardening/test_output_streams.py).
    from shardpy.cli.output import usage_error_json

    try:
        code = cli(standalone_mode=False)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:
        # click's UsageError (Typer vendors its own click, so matched by shape).
        if getattr(exc, "exit_code", None) != 2 or not hasattr(exc, "format_message"):
            raise
        if as_json:
            usage_error_json(exc.format_message())
        else:
            exc.show()  # type: ignore[attr-defined]  # click's UsageError, matched by shape above
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


import_options.register(app)
git_cmd.register(app)
sync_cmd.register(app)
memory_cmd.register(app)
