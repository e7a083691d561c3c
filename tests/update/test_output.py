"""The update plan as printed off a terminal: plain columns, nothing cut."""

from __future__ import annotations

import io
from collections.abc import Sequence

from shardpy.cli.table import write_plain
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
