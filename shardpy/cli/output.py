"""Console, JSON output and the error boundary every command runs inside."""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from collections.abc import Callable

from shardpy.errors import Cancelled, ShardpyError

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:  # rich loads only when something is printed through it (not for --json)
    from typing import Any, TextIO

    from rich.console import Console

_console: Console | PlainConsole | None = None
_err_console: Console | None = None


def _no_color() -> bool:
    return "NO_COLOR" in os.environ


def _rich_console() -> Console:
    from rich.console import Console

    # soft_wrap: a long line is left to the terminal, never broken mid-phrase.
    return Console(no_color=_no_color(), highlight=False, soft_wrap=True)


# rich's markup tags and emoji codes (rich/markup.py, rich/_emoji_replace.py).
_TAGS = re.compile(r"((\\*)\[([a-z#/@][^[]*?)])")
_EMOJI = re.compile(r"(:(\S*?)(?:(?:\-)(emoji|text))?:)")
_RICH_ONLY = re.compile("[\t\x07\x08\x0b\x0c\r]")  # tabs rich expands, control codes it strips


def _emoji(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        from rich._emoji_codes import EMOJI

        code, name, variant = match.groups()
        found = EMOJI.get(name.lower())
        return code if found is None else found + {"text": "\ufe0e", "emoji": "\ufe0f"}.get(variant, "")

    return _EMOJI.sub(replace, text) if ":" in text else text


_MARKUP_TAG = re.compile(r"(\\*)(\[[a-z#/@][^[]*?])")


def shown(text: str, *, lines: bool = False) -> str:
    """``text`` as it can be printed: bytes that were not UTF-8 as U+FFFD and each control
    character as its ``\\xNN`` escape (idempotent: an escape is printable). ``lines``: a line
    break stays one (a message of several lines), the other controls do not. An escape sequence
    in a file name recoloured or retitled the terminal, a line break split one path over two
    lines (helper-found; tests/hardening/test_names_shown.py)."""
    from shardpy.controls import escaped
    from shardpy.fsutil import printable

    return escaped(printable(text), lines=lines)


def shown_markup(text: str) -> str:
    """:func:`shown`, escaped for console markup (a name holding "[/]" raised rich's MarkupError,
    one holding "[a]" lost it). rich.markup.escape's rule, without importing rich for a plain
    output (:class:`PlainConsole`)."""
    escaped = _MARKUP_TAG.sub(lambda m: f"{m.group(1)}{m.group(1)}\\{m.group(2)}", shown(text))
    return escaped + "\\" if escaped.endswith("\\") and not escaped.endswith("\\\\") else escaped


def plain_markup(text: str) -> str | None:
    """The text rich prints for ``text`` (console markup) without colour, or
    None when only rich can say (tabs, control codes, link tags, a tag that
    does not close as rich requires: rich then prints it, or raises)."""
    if _RICH_ONLY.search(text):
        return None
    if "[" not in text:
        return _emoji(text)
    out: list[str] = []
    open_tags: list[str] = []
    position = 0
    for match in _TAGS.finditer(text):
        full, escapes, tag = match.groups()
        start, end = match.span()
        out.append(_emoji(text[position:start].replace("\\[", "[")))
        position = end
        if escapes:
            backslashes, escaped = divmod(len(escapes), 2)
            out.append("\\" * backslashes)
            if escaped:
                out.append(_emoji(full[len(escapes) :].replace("\\[", "[")))
                continue
        name = tag.partition("=")[0]
        if name.startswith("@") or name.startswith("/@"):
            return None
        if not name.startswith("/"):
            open_tags.append(name.strip())
        elif name[1:].strip() and name[1:].strip() in open_tags:
            del open_tags[len(open_tags) - 1 - open_tags[::-1].index(name[1:].strip())]
        elif not name[1:].strip() and open_tags:
            open_tags.pop()
        else:
            return None  # rich raises MarkupError for this close
    out.append(_emoji(text[position:].replace("\\[", "[")))
    return "".join(out)


class PlainConsole:
    """What :func:`console` is off a terminal: the text rich would print,
    written straight to stdout without loading rich (~100 ms of a short
    command's start-up). Anything it cannot print exactly as rich does goes
    through a rich console on the same stream."""

    is_terminal = False

    def __init__(self) -> None:
        self._rich: Console | None = None

    @property
    def file(self) -> TextIO:
        return sys.stdout  # looked up on each write, as rich does (a test swaps it)

    def print(self, *objects: Any, markup: bool = True, highlight: bool = False, **kwargs: Any) -> None:
        text = objects[0] if len(objects) == 1 and isinstance(objects[0], str) and not kwargs else None
        plain = None if text is None else (plain_markup(text) if markup else text)
        if plain is not None and (markup or not _RICH_ONLY.search(plain)):
            self.file.write(plain + "\n")
            return
        if self._rich is None:
            self._rich = _rich_console()
        self._rich.print(*objects, markup=markup, highlight=highlight, **kwargs)


def _plain_output() -> bool:
    """Stdout is a pipe or a file, and no setting asks rich to colour it anyway."""
    return not sys.stdout.isatty() and not any(
        os.environ.get(k) for k in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")
    )


def console() -> Console | PlainConsole:
    global _console
    if _console is None:
        _console = PlainConsole() if _plain_output() else _rich_console()
    return _console


def err_console() -> Console:
    global _err_console
    if _err_console is None:
        from rich.console import Console

        # Off a terminal (a CI log, a file) nothing wraps: a path split mid-name cannot
        # be copied back (tests/hardening/test_output_streams.py).
        _err_console = Console(
            stderr=True, no_color=_no_color(), highlight=False, soft_wrap=not sys.stderr.isatty()
        )
    return _err_console


def print_json(data: Any) -> None:
    text = json.dumps(data, indent=2, ensure_ascii=False, default=str)
    if not text.isascii():
        # JSON is UTF-8: a path that is not (a folder named in bytes another system wrote) is
        # shown with U+FFFD, not written as a lone surrogate that a strict stdout refuses
        # (tests/hardening/test_odd_names.py).
        from shardpy.fsutil import printable

        text = printable(text)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def print_error(exc: ShardpyError, *, as_json: bool) -> None:
    if as_json:
        print_json({"error": exc.to_dict()})
        return
    from rich.markup import escape

    con = err_console()
    where = exc.location()
    # Messages quote paths and values: escaped, so `[draft].md` prints as written, and a control
    # character in a name is shown, not sent to the terminal.
    text = escape(shown(f"[{exc.code}]: {where + ': ' if where else ''}{exc.message}", lines=True))
    con.print(f"[bold red]error[/] {text}", markup=True)
    if exc.hint:
        con.print(f"  [dim]hint:[/] {escape(shown(exc.hint, lines=True))}", markup=True)


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

    # A failure on an open descriptor names its number, not a path.
    name = exc.filename if isinstance(exc.filename, str | bytes) else None
    path = None if not name else os.fsdecode(name)
    where = f" {path}" if path else ""
    return io_error(exc, f"Accessing{where}", path=path)


def usage_error_json(message: str) -> None:
    """A command-line usage error as the JSON error object (``--json`` was given)."""
    from shardpy.errors import UsageError

    print_json({"error": UsageError(message, "Read `shardpy COMMAND --help`.").to_dict()})


def guarded(fn: Callable[[], int | None], *, as_json: bool = False) -> None:
    """:func:`exit_code_of` for a Typer command (a non-zero code exits)."""
    code = exit_code_of(fn, as_json=as_json)
    if code:
        import typer

        raise typer.Exit(code)
