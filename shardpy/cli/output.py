"""Console, JSON output and the error boundary every command runs inside."""

from __future__ import annotations

import errno
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from shardpy.errors import Cancelled, ShardpyError

if TYPE_CHECKING:  # rich loads only when something is printed through it (not for --json)
    from rich.console import Console

_console: Console | None = None
_err_console: Console | None = None


def _no_color() -> bool:
    return "NO_COLOR" in os.environ


def console() -> Console:
    global _console
    if _console is None:
        from rich.console import Console

        # soft_wrap: a long line is left to the terminal, never broken mid-phrase.
        _console = Console(no_color=_no_color(), highlight=False, soft_wrap=True)
    return _console


def err_console() -> Console:
    global _err_console
    if _err_console is None:
        from rich.console import Console

        _err_console = Console(stderr=True, no_color=_no_color(), highlight=False)
    return _err_console


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    sys.stdout.flush()


def print_error(exc: ShardpyError, *, as_json: bool) -> None:
    if as_json:
        print_json({"error": exc.to_dict()})
        return
    from rich.markup import escape

    con = err_console()
    where = exc.location()
    # Messages quote paths and values: escaped, so `[draft].md` prints as written.
    text = escape(f"[{exc.code}]: {where + ': ' if where else ''}{exc.message}")
    con.print(f"[bold red]error[/] {text}", markup=True)
    if exc.hint:
        con.print(f"  [dim]hint:[/] {escape(exc.hint)}", markup=True)


def exit_code_of(fn: Callable[[], int | None], *, as_json: bool = False) -> int:
    """Run a command body inside the error boundary and return its exit code
    (the body's own, or: typed errors → 1 (or 2), cancel → 0, Ctrl-C → 130,
    an OS failure → 1 as IO_ERROR / DISK_FULL naming the path). Every
    command's errors pass here, so ``--json`` always gets the JSON object."""
    try:
        return fn() or 0
    except ShardpyError as exc:
        print_error(exc, as_json=as_json)
        return exc.exit_code
    except Cancelled as exc:
        err_console().print(str(exc) or "Cancelled; nothing was changed.")
        return 0
    except KeyboardInterrupt as exc:
        err_console().print(str(exc) or "Interrupted; every change was rolled back.")
        return 130
    except OSError as exc:  # a failure outside any transaction (the disk, a vanished file)
        if exc.errno == errno.EPIPE:
            raise  # the reader went away: the entry point ends quietly
        print_error(os_error(exc), as_json=as_json)
        return 1


def os_error(exc: OSError) -> ShardpyError:
    """IO_ERROR (or DISK_FULL) naming the path the operating system refused."""
    from shardpy.fsutil import io_error

    where = f" {exc.filename}" if exc.filename else ""
    path = None if exc.filename is None else os.fsdecode(exc.filename)
    return io_error(exc, f"Accessing{where}", path=path)


def usage_error_json(message: str) -> None:
    """A command-line usage error as the JSON error object (``--json`` was given)."""
    from shardpy.errors import UsageError

    print_json({"error": UsageError(message, "Read `shardpy COMMAND --help`.").to_dict()})


def guarded(fn: Callable[[], None], *, as_json: bool = False) -> None:
    """:func:`exit_code_of` for a Typer command (a non-zero code exits)."""
    code = exit_code_of(fn, as_json=as_json)
    if code:
        import typer

        raise typer.Exit(code)
