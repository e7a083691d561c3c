"""A wikilink the import rewrites inside a Markdown table row (a helper's probe).

``[[Q3: Plan?]]`` becomes ``[[Q3- Plan|Q3: Plan?]]`` (the note's file name could not hold the
title); in a table row that ``|`` ends the cell, and the row lost the link. Obsidian reads
``\\|`` there, and the import already kept a source's own ``\\|``: it now writes one.
"""

from __future__ import annotations

from pathlib import Path

from tests.shardkit import run_shardpy


def test_a_rewritten_link_in_a_table_row_escapes_its_separator(tmp_path: Path) -> None:
    assert run_shardpy("install", "--defaults", tmp_path / "vault", cwd=tmp_path, timeout=300).returncode == 0
    src = tmp_path / "bm"
    src.mkdir()
    (src / "q3.md").write_text('---\ntitle: "Q3: Plan?"\n---\nplan\n', encoding="utf-8")
    (src / "table.md").write_text(
        "---\ntitle: Table\n---\n| col | link |\n|-----|------|\n| a   | [[Q3: Plan?]] |\n"
        "\nOutside: [[Q3: Plan?]]\n",
        encoding="utf-8",
    )
    args = ("import", "--from", "basic-memory", src, tmp_path / "vault", "--into", "bm", "--apply")
    done = run_shardpy(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (tmp_path / "vault/bm/Table.md").read_text(encoding="utf-8")
    assert "| a   | [[Q3- Plan\\|Q3: Plan?]] |\n" in text
    assert "Outside: [[Q3- Plan|Q3: Plan?]]\n" in text
