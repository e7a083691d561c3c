"""Entry point: a thin Typer app. Commands live one per module in this package."""

from __future__ import annotations

import errno
import gc
import os
import sys
from functools import partial

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

    from shardpy.cli.status import StatusArgs

# A reader that went away (`shardpy status | head -1`): quiet, with the status a
# shell reports for git killed by SIGPIPE (128 + 13). tests/hardening/test_closed_pipe.py
EXIT_CLOSED_PIPE = 141

# The collector's first-generation threshold for a shardpy process (Python's default: 700).
# Start-up creates tens of thousands of objects that live until exit (modules, classes,
# functions, option tables), and at 700 the collector walked them over and over while they
# were made; at exit it walked them once more. A one-shot `shardpy search` paid ~7 ms for
# that, `shardpy sync` ~8 ms (issues 29 and 30, docs/SEARCH.md). Garbage in cycles is still
# collected, in larger batches: `serve` and `sync --watch` run for days with it.
GC_THRESHOLD = 20_000


def _completing() -> bool:
    """A shell completion request (Typer's to answer)."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def _plain_status(argv: list[str]) -> StatusArgs | None:
    """`shardpy` and `shardpy status [-v|--verbose] [--json]`: the commands
    run most often, answered without Typer."""
    if _completing() or (argv and argv[0] != "status"):
        return None  # before the imports: a one-shot search pays for none of status's (issue 29)
    from shardpy.cli.options import parse_plain
    from shardpy.cli.status import StatusArgs

    return parse_plain(StatusArgs, argv[1:])


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
        sys.stdout = _Pacified(sys.stdout)  # a TextIO but for flush
        sys.stderr = _Pacified(sys.stderr)
        return EXIT_CLOSED_PIPE


def _plain_search_command(argv: list[str]) -> int | None:
    """`index` / `search` with plain arguments, run without Typer (None: let Typer parse them)."""
    from shardpy.cli import search_cmd
    from shardpy.cli.options import parse_plain
    from shardpy.cli.output import exit_code_of

    if argv[0] == "index":
        index_args = parse_plain(search_cmd.IndexArgs, argv[1:])
        if index_args is None:
            return None
        return exit_code_of(lambda: search_cmd.run_index(index_args), as_json=index_args.as_json)
    search_args = parse_plain(search_cmd.SearchArgs, argv[1:])
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
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
    # A path named in bytes that are not UTF-8 reaches text output as surrogate escapes: written
    # back as those bytes (as `ls` does), where a strict UTF-8 stdout raised UnicodeEncodeError.
    # JSON is made UTF-8 by print_json itself (tests/hardening/test_odd_names.py).
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="surrogateescape")
    try:
        code = _run_plain(_main)
    finally:
        # The command is done (or leaving by SystemExit): what is still alive lives until exit.
        # Frozen, the interpreter's last collection at shutdown skips it. atexit handlers still
        # run and objects freed by their count at teardown still are; only cycles are left to
        # the OS, and nothing shardpy does at exit waits on one (every file, lock and
        # transaction is closed by the command's own `with` blocks).
        gc.freeze()
    sys.exit(code)


def _main() -> int:
    # Typer costs ~130 ms before a command runs (its import, then a pydantic
    # adapter per parameter), so `--version`, plain status, install, update,
    # adopt, import and serve (parsed with their tables, shardpy.cli.options),
    # plain index and search (search_cmd) and sync (sync_cmd) bypass it.
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from shardpy import __version__

        print(f"shardpy {__version__}")
        return 0
    _no_pydantic_plugin_scan()
    status_args = _plain_status(argv)
    if status_args is not None:
        from shardpy.cli.status import show_status

        sys.exit(show_status(verbose=status_args.verbose, as_json=status_args.as_json))
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
    elif verb in ("install", "update", "adopt"):
        _plain_install_or_update(argv)
    elif verb == "serve":
        _plain_serve(argv[1:])


def _plain_install_or_update(argv: list[str]) -> None:
    """`install` / `update` / `adopt` with plain arguments: run without Typer, then exit."""
    from shardpy.cli import install_update as cmd
    from shardpy.cli import options
    from shardpy.cli.output import exit_code_of

    bodies: dict[str, tuple[type[Any], Callable[[Any], int | None]]] = {
        "install": (cmd.InstallArgs, cmd.run_install),
        "update": (cmd.UpdateArgs, cmd.run_update),
        "adopt": (cmd.AdoptArgs, cmd.run_adopt),
    }
    table, body = bodies[argv[0]]
    args = options.parse_plain(table, argv[1:])
    if args is not None:
        sys.exit(_run_plain(lambda: exit_code_of(partial(body, args), as_json=args.as_json)))


def _plain_serve(argv: list[str]) -> None:
    """`shardpy serve` with plain arguments (an MCP client starts the server at every
    session): run without Typer, then exit; anything else (--help, typos) is Typer's."""
    from shardpy.cli.options import parse_plain
    from shardpy.cli.serve_cmd import ServeArgs, run_serve

    args = parse_plain(ServeArgs, argv)
    if args is not None:
        from shardpy.cli.output import exit_code_of

        sys.exit(exit_code_of(lambda: run_serve(args)))


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
