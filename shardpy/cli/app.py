"""Entry point: a thin Typer app. Commands live one per module in this package."""

from __future__ import annotations

import errno
import os
import sys
from functools import partial
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    from collections.abc import Callable

_STATUS_FLAGS = frozenset({"--verbose", "-v", "--json"})
# A reader that went away (`shardpy status | head -1`): quiet, with the status a
# shell reports for git killed by SIGPIPE (128 + 13). tests/hardening/test_closed_pipe.py
EXIT_CLOSED_PIPE = 141


def _completing() -> bool:
    """A shell completion request (Typer's to answer)."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def _plain_status(argv: list[str]) -> bool:
    """`shardpy` and `shardpy status [-v|--verbose] [--json]`: the commands
    run most often, answered without Typer."""
    if _completing():
        return False
    return not argv or (argv[0] == "status" and set(argv[1:]) <= _STATUS_FLAGS)


def _run_plain(command: Callable[[], int]) -> int:
    """A plain command as Typer's standalone mode runs one (Ctrl-C, end of input, a closed pipe)."""
    try:
        return command()
    except KeyboardInterrupt:
        return 130
    except EOFError:
        sys.stderr.write("\nAborted.\n")
        return 1
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # Like click: the reader went away (`| head`); no traceback, and no second
        # error when the interpreter flushes the streams at exit.
        sys.stdout = cast(TextIO, _Pacified(sys.stdout))
        sys.stderr = cast(TextIO, _Pacified(sys.stderr))
        return EXIT_CLOSED_PIPE


def _plain_search_command(argv: list[str]) -> int | None:
    """`index` / `search` with plain arguments, run without Typer (None: let Typer parse them)."""
    from shardpy.cli import search_cmd
    from shardpy.cli.output import exit_code_of

    if argv[0] == "index":
        index_args = search_cmd.plain_index_args(argv[1:])
        if index_args is None:
            return None
        return exit_code_of(lambda: search_cmd.run_index(index_args), as_json=index_args.as_json)
    search_args = search_cmd.plain_search_args(argv[1:])
    if search_args is None:
        return None
    return exit_code_of(lambda: search_cmd.run_search(search_args), as_json=search_args.as_json)


def _no_pydantic_plugin_scan() -> None:
    import shardpy

    if shardpy.PYDANTIC_PLUGINS_VAR not in os.environ:
        os.environ[shardpy.PYDANTIC_PLUGINS_VAR] = "__all__"
        shardpy.pydantic_plugins_turned_off = True
    if os.environ[shardpy.PYDANTIC_PLUGINS_VAR] in _ALL_PLUGINS_OFF:
        _light_plugin_loader(shardpy.PYDANTIC_PLUGINS_VAR)


_PLUGIN_LOADER = "pydantic.plugin._loader"
_ALL_PLUGINS_OFF = ("__all__", "1", "true")  # the values for which pydantic's get_plugins() returns ()


def _light_plugin_loader(variable: str) -> None:
    """Stand in for pydantic's plugin loader while every plugin is turned off.

    pydantic asks its loader for plugins when it builds the first model; the
    loader imports importlib.metadata (and with it email, ~15 ms) at its top,
    then sees the variable and returns none. The stand-in returns none too
    while the variable says so, and imports the real loader for anything else.
    """
    if _PLUGIN_LOADER in sys.modules:
        return
    import types

    module = types.ModuleType(_PLUGIN_LOADER, "pydantic's plugin loader, imported when needed (shardpy)")

    def real() -> Any:
        import importlib

        if sys.modules.get(_PLUGIN_LOADER) is module:
            del sys.modules[_PLUGIN_LOADER]
        return importlib.import_module(_PLUGIN_LOADER)

    def get_plugins() -> Any:
        if os.environ.get(variable) in _ALL_PLUGINS_OFF:
            return ()
        return real().get_plugins()

    def attribute(name: str) -> Any:
        if name.startswith("__"):  # the import system asking (__path__, __file__): not the loader's
            raise AttributeError(name)
        return getattr(real(), name)

    module.__dict__.update(get_plugins=get_plugins, __getattr__=attribute)
    sys.modules[_PLUGIN_LOADER] = module


def main() -> None:
    """The console script: every command, plain or Typer's, inside one closed-pipe boundary."""
    sys.exit(_run_plain(_main))


def _main() -> int:
    # Typer costs ~130 ms before a command runs (its import, then a pydantic
    # adapter per parameter), so `--version`, plain status, install and update
    # (install_update), plain imports (import_cmd.plain_args), plain index and
    # search (search_cmd) bypass it.
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from shardpy import __version__

        print(f"shardpy {__version__}")
        return 0
    _no_pydantic_plugin_scan()
    if _plain_status(argv):
        from shardpy.cli.status import show_status

        sys.exit(show_status(verbose=bool({"-v", "--verbose"} & set(argv)), as_json="--json" in argv))
    # Empty during shell completion (the words come in the environment): Typer's to answer.
    if argv and not _completing():
        _plain_command(argv)
    from shardpy.cli.commands import run

    run()
    return 0


def _plain_command(argv: list[str]) -> None:
    """Run the Typer-free form of ``argv``'s command and exit, when it has one."""
    verb = argv[0]
    if verb in ("index", "search"):
        code = _plain_search_command(argv)
        if code is not None:
            sys.exit(code)
    elif verb == "merge-file":
        # git runs the merge driver once per file: no Typer start-up cost.
        from shardpy.cli.merge_file import main as merge_file

        sys.exit(merge_file(argv[1:]))
    elif verb == "sync":
        from shardpy.cli.sync_cmd import plain_args as sync_args
        from shardpy.cli.sync_cmd import run_sync

        parsed = sync_args(argv[1:])
        if parsed is not None:
            from shardpy.cli.output import exit_code_of

            sys.exit(_run_plain(lambda: exit_code_of(lambda: run_sync(parsed), as_json=parsed.as_json)))
    elif verb == "import":
        from shardpy.cli.import_cmd import plain_args, run_command

        args = plain_args(argv[1:])
        if args is not None:
            sys.exit(_run_plain(lambda: run_command(args)))
    elif verb in ("install", "update"):
        _plain_install_or_update(argv)
    elif verb == "serve":
        plain = _plain_serve(argv[1:])
        if plain is not None:
            from shardpy.cli.output import exit_code_of
            from shardpy.flows.serve import run_serve

            vault, project, print_config, client, qmd, trust_qmd = plain
            sys.exit(
                exit_code_of(
                    lambda: run_serve(
                        vault,
                        project=project,
                        print_config=print_config,
                        client=client,
                        qmd=qmd,
                        trust_qmd=trust_qmd,
                    )
                )
            )


def _plain_install_or_update(argv: list[str]) -> None:
    """`install` / `update` with plain arguments: run without Typer, then exit."""
    from shardpy.cli import install_update as cmd
    from shardpy.cli.output import exit_code_of

    body: Callable[[], int | None]
    if argv[0] == "install":
        install_args = cmd.plain_install_args(argv[1:])
        if install_args is None:
            return
        body, as_json = partial(cmd.run_install, install_args), install_args.as_json
    else:
        update_args = cmd.plain_update_args(argv[1:])
        if update_args is None:
            return
        body, as_json = partial(cmd.run_update, update_args), update_args.as_json
    sys.exit(_run_plain(lambda: exit_code_of(body, as_json=as_json)))


def _plain_serve(args: list[str]) -> tuple[Any, str | None, bool, str, str | None, bool] | None:
    """`shardpy serve [VAULT] [--project NAME] [--print-config] [--for CLIENT] [--qmd COMMAND]
    [--trust-qmd]` without Typer (an MCP client starts the server at every session); None for
    anything else (--help, typos): Typer's."""
    from pathlib import Path

    vault: Path | None = None
    flags = {"--project": None, "--for": "claude", "--qmd": None}
    switches = {"--print-config": False, "--trust-qmd": False}
    rest = list(args)
    while rest:
        arg = rest.pop(0)
        if arg in flags and rest:
            flags[arg] = rest.pop(0)
        elif arg in switches:
            switches[arg] = True
        elif not arg.startswith("-") and vault is None:
            vault = Path(arg)
        else:
            return None
    client = flags["--for"] or "claude"
    qmd, trust_qmd = flags["--qmd"], switches["--trust-qmd"]
    return vault, flags["--project"], switches["--print-config"], client, qmd, trust_qmd


class _Pacified:
    """A stream whose flush ignores a closed pipe (click's PacifyFlushWrapper, without click)."""

    def __init__(self, wrapped: TextIO) -> None:
        self.wrapped = wrapped

    def flush(self) -> None:
        try:
            self.wrapped.flush()
        except OSError as exc:
            if exc.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)
