"""The update plan as printed off a terminal: plain columns, nothing cut."""

from __future__ import annotations

import io
import re
import unicodedata
from collections.abc import Sequence

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from shardpy.cli import table
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


# -- on a terminal: coloured columns when the table fits, rich's folding when not --------------

_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _colour_terminal(buf: io.StringIO, width: int = 200) -> Console:
    return Console(file=buf, force_terminal=True, color_system="standard", width=width)


def _styled(rows: Sequence[Sequence[str]], styles: Sequence[str]) -> list[list[table.Cell]]:
    """Each row's first cell in a style, its last split into a plain and a dim run."""
    out: list[list[table.Cell]] = []
    for row, style in zip(rows, styles, strict=True):
        head, *middle, tail = row
        cut = len(tail) // 2
        out.append([((head, style),), *middle, ((tail[:cut], ""), (tail[cut:], "dim"))])
    return out


_cell_text = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.lists(_cell_text, min_size=3, max_size=3), min_size=1, max_size=12),
    styles=st.lists(st.sampled_from([s for s in table.ACTION_STYLE.values()]), min_size=12, max_size=12),
)
# Found by hypothesis: a wide character in the last column only (the plain layout's rule fell one short).
@example(rows=[["", "", "000000\U00020000"]], styles=["green"] * 12)
def test_a_table_that_fits_prints_the_plain_columns_in_colour(
    rows: list[list[str]], styles: list[str]
) -> None:
    columns = ["action", "path", "details"]
    buf = io.StringIO()
    marked = _styled(rows, styles[: len(rows)])
    table.show(buf, _colour_terminal(buf), columns, rows, terminal=True, marked=marked)
    text = buf.getvalue()
    lines = plain_table(columns, rows).splitlines()
    lines[1] = "  ".join("─" * len(rule) for rule in lines[1].split("  "))  # a drawn rule, not dashes
    assert _ANSI.sub("", text).splitlines() == lines
    probe = io.StringIO()
    rich = _colour_terminal(probe)
    for row in marked:  # each styled run carries the codes rich itself gives that style
        for cell in (row[0], row[-1]):
            for run, style in cell:  # type: ignore[union-attr]
                if run and style and run == run.rstrip():  # (a line's trailing blanks are dropped)
                    probe.seek(0)
                    probe.truncate()
                    rich.print(Text(run, style=style), end="")
                    assert probe.getvalue() in text


def test_brackets_in_a_name_are_printed_not_read_as_styles() -> None:
    rows = [["update", "notes/[draft] idea.md", "shard changed it (from [/] old.md)"]]
    marked: list[list[table.Cell]] = [
        [(("update", "cyan"),), rows[0][1], (("shard changed it", ""), (" (from [/] old.md)", "dim"))]
    ]
    buf = io.StringIO()  # fits: coloured columns
    table.show(buf, _colour_terminal(buf), ["action", "path", "details"], rows, terminal=True, marked=marked)
    text = _ANSI.sub("", buf.getvalue())
    assert "notes/[draft] idea.md" in text and "shard changed it (from [/] old.md)" in text
    buf = io.StringIO()  # narrower than the cell: rich's layout folds it, brackets and all
    name = "notes/[draft] idea, with [/] and [bold]not bold[/].md"
    table.show(buf, _colour_terminal(buf, 20), ["path"], [[name]], terminal=True, marked=[[name]])
    folded = _ANSI.sub("", buf.getvalue()).splitlines()[2:]
    assert "".join("".join(folded).split()) == "".join(name.split())


def test_a_table_wider_than_the_terminal_is_folded_by_rich() -> None:
    buf = io.StringIO()
    long = "notes/" + "x" * 100 + ".md"
    table.show(buf, _colour_terminal(buf, 60), ["name", "path"], [["a", long]], terminal=True)
    text = _ANSI.sub("", buf.getvalue())
    assert max(len(line) for line in text.splitlines()) <= 60
    assert "".join(text.split()).count("x" * 100) == 1


def test_the_update_table_on_a_terminal_shows_a_bracketed_path_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    from shardpy.cli import render
    from shardpy.plan.update import FileAction, Outcome

    buf = io.StringIO()
    monkeypatch.setattr(render, "console", lambda: _colour_terminal(buf))
    monkeypatch.setattr(render, "_on_terminal", lambda: True)
    actions = [
        FileAction(
            "notes/[draft] idea.md",
            "update",
            "shard changed it",
            "infrastructure",
            None,
            {"apply": Outcome("apply", write=b"x")},
            "apply",
            from_path="old/[/] place.md",
        )
    ]
    render._action_table(actions, verbose=False)
    text = _ANSI.sub("", buf.getvalue())
    assert "notes/[draft] idea.md" in text and "(from old/[/] place.md)" in text
    assert "\x1b[36mupdate\x1b[0m" in buf.getvalue()


def test_a_long_table_wider_than_the_terminal_is_coloured_columns_each_path_on_its_line() -> None:
    rows = [[f"note-{i}", "notes/" + "y" * 80 + f"-{i}.md"] for i in range(table.RICH_FOLD_MAX + 1)]
    buf = io.StringIO()
    table.show(buf, _colour_terminal(buf, 60), ["name", "path"], rows, terminal=True)
    lines = _ANSI.sub("", buf.getvalue()).splitlines()
    assert lines[2:] == plain_table(["name", "path"], rows).splitlines()[2:]  # the terminal wraps them


def test_the_last_column_s_rule_is_as_wide_as_its_widest_cell() -> None:
    out = io.StringIO()
    write_plain(out, ["action", "path", "details"], [["add", "a.md", "数据库"]])
    assert (
        out.getvalue().splitlines()[1] == "------  ----  -------"
    )  # 3 wide characters: 6 cells, "details" 7
    out = io.StringIO()
    write_plain(out, ["a", "b"], [["x", "数据库复制方案"]])
    assert out.getvalue().splitlines()[1] == "-  --------------"
