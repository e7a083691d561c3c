"""The update plan as printed off a terminal: plain columns, nothing cut."""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Sequence

from rich.console import Console

from shardpy.cli.table import RICH_ROWS_MAX, show, write_plain
from tests.update.kit import Scenario

DEEP = "reference/" + "/".join(f"level-{i}-with-a-long-folder-name" for i in range(4))


def test_piped_plan_lists_every_path_in_full(sc: Scenario) -> None:
    files: dict[str, str | bytes] = {f"{DEEP}/note {i:03}.md": f"note {i}\n" for i in range(120)}
    sc.shard("1.0.0", files)
    sc.install("--defaults")
    sc.shard("1.1.0", {path: text + "more\n" for path, text in files.items() if isinstance(text, str)})
    out = sc.update("--yes").out
    rows = [line for line in out.splitlines() if line.startswith("update ")]
    assert len(rows) == 120
    for i in range(120):
        assert f"{DEEP}/note {i:03}.md" in out  # whole, though far wider than 80 columns
    assert "…" not in out and "│" not in out and "\x1b[" not in out
    header = out.splitlines()[out.splitlines().index(rows[0]) - 2]
    assert header.split() == ["action", "path", "class", "details"]


def plain_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    out = io.StringIO()
    write_plain(out, columns, rows)
    return out.getvalue()


def test_plain_table_pads_columns_and_keeps_cells_whole() -> None:
    text = plain_table(["a", "path", "why"], [["add", "x/" + "y" * 100, "new"], ["delete", "z", "gone"]])
    lines = text.splitlines()
    assert lines[0] == "a       path" + " " * 100 + "why"
    assert lines[1] == "------  " + "-" * 102 + "  ----"
    assert lines[2] == "add     x/" + "y" * 100 + "  new"
    assert lines[3] == "delete  z" + " " * 103 + "gone"
    assert text.endswith("\n")


def _cells(text: str) -> int:
    """Terminal cells, measured apart from the printer: wide (CJK) characters are two."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def test_piped_plan_aligns_wide_paths_by_terminal_cells(sc: Scenario) -> None:
    paths = ["brain/a.md", "brain/日本語のノート.md", "brain/설계-결정.md", "brain/plain-name.md"]
    sc.shard("1.0.0", {p: "one\n" for p in paths})
    sc.install("--defaults")
    sc.shard("1.1.0", {p: "one\ntwo\n" for p in paths})
    lines = sc.update("--yes").out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split() == ["action", "path", "class", "details"])
    class_at = lines[header].index("class")  # the header is ASCII: characters are cells
    rows = [line for line in lines[header + 2 :] if line.startswith("update ")]
    assert sorted(row.split()[1] for row in rows) == sorted(paths)
    for row in rows:
        path = row.split()[1]
        end = row.index(path) + len(path)
        gap = len(row[end:]) - len(row[end:].lstrip(" "))
        assert _cells(row[:end]) + gap == class_at, row  # the class column lines up on a terminal grid


def _terminal(buf: io.StringIO) -> Console:
    return Console(file=buf, force_terminal=True, no_color=True, width=60)


def test_terminal_table_shows_plain_cells_as_written_and_folds_long_ones() -> None:
    buf = io.StringIO()
    long = "notes/" + "x" * 100 + ".md"
    show(buf, _terminal(buf), ["name", "path"], [["[bold]draft[/]", long]], terminal=True)
    text = buf.getvalue()
    assert "[bold]draft[/]" in text  # import cells are text, not console markup
    assert "…" not in text and "".join(text.split()).count("x" * 100) == 1  # folded, not cut


def test_terminal_table_above_the_row_cap_is_plain() -> None:
    rows = [[f"r{i}", "x"] for i in range(RICH_ROWS_MAX + 1)]
    buf = io.StringIO()
    show(buf, _terminal(buf), ["row", "v"], rows, terminal=True)
    assert buf.getvalue() == plain_table(["row", "v"], rows)
