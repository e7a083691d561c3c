"""Entry point: a thin Typer app. Commands live one per module in this package."""

from __future__ import annotations

import errno
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO, cast

if TYPE_CHECKING:
    from shardpy.cli.import_cmd import ImportArgs

_STATUS_FLAGS = frozenset({"--verbose", "-v", "--json"})


def _completing() -> bool:
    """A shell completion request (Typer's to answer)."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ)


def _plain_status(argv: list[str]) -> bool:
    """`shardpy` and `shardpy status [-v|--verbose] [--json]`: the commands
    run most often, answered without Typer."""
    if _completing():
        return False
    return not argv or (argv[0] == "status" and set(argv[1:]) <= _STATUS_FLAGS)


def _run_plain_import(args: ImportArgs) -> int:
    """``run_command`` as Typer's standalone mode runs a command (Ctrl-C, a closed pipe)."""
    from shardpy.cli.import_cmd import run_command

    try:
        return run_command(args)
    except KeyboardInterrupt:
        return 130
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        # Like click: the reader went away (`| head`); no traceback, and no second
        # error when the interpreter flushes the streams at exit.
        sys.stdout = cast(TextIO, _Pacified(sys.stdout))
        sys.stderr = cast(TextIO, _Pacified(sys.stderr))
        return 1


def main() -> None:
    # Typer costs ~130 ms before a command runs (its import, then a pydantic
    # adapter per parameter), so `--version`, plain status and plain imports
    # (import_cmd.plain_args) bypass it.
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from shardpy import __version__

        print(f"shardpy {__version__}")
        return
    if _plain_status(argv):
        from shardpy.cli.status import show_status

        sys.exit(show_status(verbose=bool({"-v", "--verbose"} & set(argv)), as_json="--json" in argv))
    if argv and argv[0] == "import" and not _completing():
        from shardpy.cli.import_cmd import plain_args

        args = plain_args(argv[1:])
        if args is not None:
            sys.exit(_run_plain_import(args))
    from shardpy.cli.commands import run

    run()


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
