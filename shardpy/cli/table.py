"""The one table printer of the CLI: install, update, adopt and the import plan.

Off a terminal (a pipe, a file, a test's capture) a table is plain padded
columns: every cell in full, two spaces apart, a rule under the header, the
last column not padded, columns aligned by terminal cells (a CJK character
is two). Built for 100,000 rows: one ``%`` format per line when the padded
columns are printable ASCII, written in slices. On a terminal it is one rich
layout, unless it has more than ``RICH_ROWS_MAX`` rows: rich measures every
cell, which takes seconds for a 100,000-note plan, so those print plain too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any, Protocol

from shardpy.plan.actions import FileActionKind, PlannedAction

# Above this many rows a table is plain even on a terminal (rich's layout pass
# costs seconds at 100,000 rows).
RICH_ROWS_MAX = 2000
_SLICE = 4096  # rows per write: never one string of the whole table

# The colour of every word of the one action vocabulary (plan/actions.py) in a
# plan's table on a terminal; "" prints it plain. The install and import tables
# print their cells as text, never markup (a note's name may hold "[...]"), so
# their own words (create, replace, identical, collision, error) are plain here.
ACTION_STYLE: dict[FileActionKind, str] = {
    "add": "green",
    "create": "",
    "restore": "green",
    "update": "cyan",
    "replace": "",
    "merge": "cyan",
    "conflict": "bold red",
    "unchanged": "",
    "identical": "",
    "keep": "magenta",
    "missing": "yellow",
    "volatile": "",
    "differs": "",
    "collision": "",
    "error": "",
    "delete": "red",
    "orphan": "yellow",
    "gone": "",
    "left": "",
    "move": "blue",
    "moved": "blue",
    "links": "blue",
}


class Printer(Protocol):
    """What prints a rich table (a rich Console, or the CLI's console())."""

    def print(self, *objects: Any) -> None: ...


def action_cell(entry: PlannedAction) -> str:
    """The action column's cell of one plan entry, in console markup (its ``ACTION_STYLE``)."""
    style = ACTION_STYLE[entry.action]
    return f"[{style}]{entry.action}[/]" if style else entry.action


def show(
    out: IO[str],
    printer: Printer,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    terminal: bool,
    marked: Sequence[Sequence[str]] | None = None,
    right: Sequence[str] = (),
    title: str | None = None,
) -> None:
    """A table: rich through ``printer`` on a terminal (cells from ``marked``,
    console markup, when given; else ``rows`` as they are), plain text on
    ``out`` otherwise or above RICH_ROWS_MAX rows. ``right`` names the columns
    rich right-aligns; ``title`` heads the table."""
    if terminal and len(rows) <= RICH_ROWS_MAX:
        printer.print(_rich_table(columns, rows, marked=marked, right=right, title=title))
        return
    if title:
        out.write(title + "\n")
    write_plain(out, columns, rows)


def _rich_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    marked: Sequence[Sequence[str]] | None,
    right: Sequence[str],
    title: str | None,
) -> Any:
    from rich import box
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for col in columns:
        # fold, not "…": a path is shown whole even when the terminal is narrow.
        table.add_column(col, justify="right" if col in right else "left", overflow="fold")
    if marked is not None:
        for cells in marked:
            table.add_row(*cells)
    else:
        for cells in rows:  # plain text: a "[draft]" in a name is not markup
            table.add_row(*(Text(c) for c in cells))
    return table


def _printable_ascii(column: Sequence[str]) -> bool:
    """Every cell is printable ASCII: one terminal cell per character."""
    text = "".join(column)  # one test per column (C speed) instead of one per cell
    return text.isascii() and text.isprintable()


def _cell_len(text: str) -> int:
    if text.isascii() and text.isprintable():
        return len(text)  # rich's measure costs ~1 us a cell
    from rich.cells import cell_len

    return cell_len(text)


def write_plain(out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """``rows`` under ``columns`` as padded text on ``out``; every line ends in a newline."""
    last = len(columns) - 1
    cells_by_column = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    ascii_columns = [_printable_ascii(column) for column in cells_by_column]
    if all(ascii_columns[:last]):
        _write_formatted(out, columns, rows, cells_by_column)
    else:
        _write_padded(out, columns, cells_by_column, ascii_columns)
    out.flush()


def _write_formatted(
    out: IO[str],
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    cells_by_column: Sequence[Sequence[str]],
) -> None:
    """Every padded column printable ASCII: each line is one ``%`` format (padding
    done in C), several times faster at 100,000 rows than padding cell by cell."""
    widths = [max(len(h), max(map(len, c), default=0)) for h, c in zip(columns, cells_by_column, strict=True)]
    line = "  ".join([*(f"%-{w}s" for w in widths[:-1]), "%s"])  # the last column is not padded
    out.write((line % tuple(columns)).rstrip() + "\n")
    out.write((line % tuple("-" * w for w in widths)).rstrip() + "\n")
    for start in range(0, len(rows), _SLICE):
        out.write("\n".join([(line % tuple(cells)).rstrip() for cells in rows[start : start + _SLICE]]))
        out.write("\n")


def _write_padded(
    out: IO[str],
    columns: Sequence[str],
    cells_by_column: Sequence[Sequence[str]],
    ascii_columns: Sequence[bool],
) -> None:
    """Some padded column holds wide or unprintable characters: pad by cell width."""
    last = len(columns) - 1
    widths: list[int] = []
    padded: list[Sequence[str]] = []
    for i, (header, column) in enumerate(zip(columns, cells_by_column, strict=True)):
        measure = len if ascii_columns[i] else _cell_len
        width = max(_cell_len(header), max(map(measure, column), default=0))
        widths.append(width)  # the last column is not padded, but its rule is as wide
        if i == last:
            padded.append(column)
        elif ascii_columns[i]:
            padded.append([c.ljust(width) for c in column])
        else:
            padded.append([c + " " * (width - _cell_len(c)) for c in column])

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c if i == last else c + " " * (widths[i] - _cell_len(c)) for i, c in enumerate(cells)
        ).rstrip()

    out.write(line(columns) + "\n")
    out.write(line(["-" * w for w in widths]) + "\n")
    rows = len(cells_by_column[0]) if cells_by_column else 0
    for start in range(0, rows, _SLICE):
        out.write(
            "\n".join(
                "  ".join(cells).rstrip()
                for cells in zip(*(p[start : start + _SLICE] for p in padded), strict=True)
            )
        )
        out.write("\n")
