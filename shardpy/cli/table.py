"""The one table printer of the CLI: install, update, adopt and the import plan.

Off a terminal (a pipe, a file, a test's capture) a table is plain padded
columns: every cell in full, two spaces apart, a rule under the header, the
last column not padded, columns aligned by terminal cells (a CJK character
is two). Built for 100,000 rows: one ``%`` format per line when the padded
columns are printable ASCII, written in slices.

On a terminal, a table that fits the terminal's width is the same columns
with the header in bold, a drawn rule and each styled run of a cell in its
colour (ANSI codes from rich's ``Style``, one per distinct style): rich's
layout measures and wraps every cell, ~0.5 ms a row (120 ms for 300 rows
here), for a table that needs no wrapping. A table wider than the terminal is
one rich layout, which folds long cells so every path stays whole and the
columns stay aligned, up to ``RICH_FOLD_MAX`` rows; a longer one is the
coloured columns too, its long lines wrapped by the terminal. Above
``RICH_ROWS_MAX`` rows a table is plain.

Styled cells are runs of ``(text, style)`` (:data:`Cell`), never console
markup: a note named ``[draft] idea.md`` prints as it is named.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO, Any, Protocol

from shardpy.plan.actions import FileActionKind, PlannedAction

# Above this many rows a table is plain even on a terminal (rich's layout pass
# costs seconds at 100,000 rows).
RICH_ROWS_MAX = 2000
# A table wider than the terminal is folded by rich's layout up to this many rows
# (~0.75 ms a row here); a longer one prints as coloured columns, each line left
# for the terminal to wrap, as git and ls do.
RICH_FOLD_MAX = 100
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


Segment = tuple[str, str]
"""A run of a cell's text and its rich style ("" for none)."""
Cell = str | tuple[Segment, ...]
"""A table cell: plain text, or styled runs whose texts joined are the plain cell."""


class Printer(Protocol):
    """What prints a rich table (a rich Console, or the CLI's console())."""

    def print(self, *objects: Any) -> None: ...


def action_cell(entry: PlannedAction) -> Cell:
    """The action column's cell of one plan entry, in its ``ACTION_STYLE``."""
    style = ACTION_STYLE[entry.action]
    return ((entry.action, style),) if style else entry.action


def show(
    out: IO[str],
    printer: Printer,
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    terminal: bool,
    marked: Sequence[Sequence[Cell]] | None = None,
    right: Sequence[str] = (),
    title: str | None = None,
) -> None:
    """A table of ``rows`` (plain text). On a terminal (``printer`` a rich Console)
    its cells are styled from ``marked`` when given: written as coloured columns
    on ``out`` when the table fits the terminal or has more than RICH_FOLD_MAX
    rows, else laid out by rich. Plain text on ``out`` otherwise, or above
    RICH_ROWS_MAX rows. ``right`` names the right-aligned columns on a
    terminal; ``title`` heads the table. A cell's control characters (a file name's escape
    sequence or line break) are shown as ``\\xNN``, never written raw (output.shown)."""
    rows = _shown_rows(rows)
    if marked is not None:
        marked = [row if _printable_runs(row) else [_shown_runs(c) for c in row] for row in marked]
    if terminal and len(rows) <= RICH_ROWS_MAX:
        widths = column_widths(columns, rows)
        if len(rows) > RICH_FOLD_MAX or _fits(widths, getattr(printer, "width", 0)):
            write_styled(
                out,
                printer,
                columns,
                marked if marked is not None else rows,
                widths,
                right=right,
                title=title,
            )
            return
        printer.print(_rich_table(columns, rows, marked=marked, right=right, title=title))
        return
    if title:
        out.write(title + "\n")
    write_plain(out, columns, rows)


def _shown_rows(rows: Sequence[Sequence[str]]) -> Sequence[Sequence[str]]:
    """``rows`` with each cell that is not printable as :func:`output.shown` prints it (a row
    of printable cells, the usual case, is kept as it is: one C check per cell)."""
    from shardpy.cli.output import shown

    return [row if all(c.isprintable() for c in row) else [shown(c) for c in row] for row in rows]


def _printable_runs(row: Sequence[Cell]) -> bool:
    return all(
        cell.isprintable() if isinstance(cell, str) else all(t.isprintable() for t, _ in cell) for cell in row
    )


def _shown_runs(cell: Cell) -> Cell:
    from shardpy.cli.output import shown

    if isinstance(cell, str):
        return shown(cell)
    return tuple((shown(text), style) for text, style in cell)


def column_widths(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's width in terminal cells: its widest cell or its header."""
    cells_by_column = list(zip(*rows, strict=True)) if rows else [() for _ in columns]
    return _widths(columns, cells_by_column, [_printable_ascii(column) for column in cells_by_column])


def _widths(
    columns: Sequence[str], cells_by_column: Sequence[Sequence[str]], ascii_columns: Sequence[bool]
) -> list[int]:
    return [
        max(_cell_len(header), max(map(len if ascii_columns[i] else _cell_len, column), default=0))
        for i, (header, column) in enumerate(zip(columns, cells_by_column, strict=True))
    ]


def _fits(widths: Sequence[int], terminal_width: int) -> bool:
    return sum(widths) + 2 * (len(widths) - 1) <= terminal_width


def write_styled(
    out: IO[str],
    printer: Any,
    columns: Sequence[str],
    cells: Sequence[Sequence[Cell]],
    widths: Sequence[int],
    *,
    right: Sequence[str] = (),
    title: str | None = None,
) -> None:
    """The plain layout with ANSI styles for a terminal: bold header, a drawn rule,
    each styled run in its colour (as ``printer``, a rich Console, would colour it).
    Without its codes each line is the plain layout's line (tested)."""
    codes = _Codes(printer)
    flush_right = [c in right for c in columns]

    def line(row: Sequence[Cell], header: bool = False) -> str:
        runs = [_runs(cell, header) for cell in row]
        plain = ["".join(t for t, _ in r) for r in runs]
        end = len(row)  # as the plain line's rstrip(): blank cells at the end go, with their gaps
        while end and not plain[end - 1].strip():
            end -= 1
        parts = []
        for i in range(end):
            pad = " " * (widths[i] - _cell_len(plain[i]))
            if flush_right[i]:
                parts.append(pad + codes.render(runs[i]))
            elif i == end - 1:
                parts.append(codes.render(_rstripped(runs[i])))
            else:
                parts.append(codes.render(runs[i]) + pad)
        return "  ".join(parts)

    if title:
        out.write(title + "\n")
    out.write(line(columns, header=True) + "\n")
    out.write("  ".join("─" * w for w in widths) + "\n")
    for start in range(0, len(cells), _SLICE):
        out.write("\n".join(line(row) for row in cells[start : start + _SLICE]) + "\n")
    out.flush()


def _runs(cell: Cell, header: bool) -> list[Segment]:
    if isinstance(cell, str):
        return [(cell, "bold" if header else "")]
    return list(cell)


def _rstripped(runs: list[Segment]) -> list[Segment]:
    """The runs without the cell's trailing whitespace (which ends a plain line)."""
    out = list(runs)
    while out:
        text, style = out[-1]
        kept = text.rstrip()
        if kept:
            out[-1] = (kept, style)
            break
        out.pop()
    return out


class _Codes:
    """The ANSI codes of each style, worked out once per style from the console's colour system."""

    def __init__(self, printer: Any) -> None:
        from rich.console import COLOR_SYSTEMS

        name = getattr(printer, "color_system", None)
        self.system = COLOR_SYSTEMS.get(name) if isinstance(name, str) else None
        self.no_color = bool(getattr(printer, "no_color", False))
        self._made: dict[str, tuple[str, str]] = {}

    def around(self, style: str) -> tuple[str, str]:
        found = self._made.get(style)
        if found is None:
            found = ("", "")
            if style and self.system is not None:
                from rich.style import Style

                parsed = Style.parse(style)
                if self.no_color:
                    parsed = parsed.without_color
                before, _, after = parsed.render("\0", color_system=self.system).partition("\0")
                found = (before, after)
            self._made[style] = found
        return found

    def render(self, runs: list[Segment]) -> str:
        out = []
        for text, style in runs:
            if text:
                before, after = self.around(style)
                out.append(f"{before}{text}{after}")
        return "".join(out)


def _rich_table(
    columns: Sequence[str],
    rows: Sequence[Sequence[str]],
    *,
    marked: Sequence[Sequence[Cell]] | None,
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
    for cells in marked if marked is not None else rows:
        # Text, never markup: a "[draft]" in a name is printed, not read as a style.
        table.add_row(*(Text(c) if isinstance(c, str) else Text.assemble(*c) for c in cells))
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
        _write_formatted(out, columns, rows, _widths(columns, cells_by_column, ascii_columns))
    else:
        _write_padded(out, columns, cells_by_column, ascii_columns)
    out.flush()


def _write_formatted(
    out: IO[str], columns: Sequence[str], rows: Sequence[Sequence[str]], widths: Sequence[int]
) -> None:
    """Every padded column printable ASCII: each line is one ``%`` format (padding
    done in C), several times faster at 100,000 rows than padding cell by cell. The
    last column is not padded, but its rule is as wide as its widest cell in terminal
    cells, as on a terminal (a wide character there drew a rule one short; hypothesis,
    tests/update/test_output.py)."""
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
    widths = _widths(columns, cells_by_column, ascii_columns)  # the last column's too: its rule is as wide
    padded: list[Sequence[str]] = []
    for i, column in enumerate(cells_by_column):
        width = widths[i]
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
