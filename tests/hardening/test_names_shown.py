"""File names as any text (helper-found): a name's control characters are shown as ``\\xNN``, never
written raw to the terminal (an escape sequence recoloured or retitled it, a line break split a path
in two), a name with console markup ("[/]") prints as named and never raises rich's MarkupError, a
name that is not UTF-8 in `index --only` is skipped with its reason, and an import never names a
note with a C1 control character."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from shardpy.cli.output import shown, shown_markup
from shardpy.importers.names import sanitize_stem
from tests.shardkit import REPO_ROOT, Cli

ESC_NAME = "e\x1b[31mred"


def test_shown_makes_every_control_visible_and_keeps_the_rest() -> None:
    assert shown("a\x1b[31mb\rc\nd\te\x7ff\x9bg") == "a\\x1b[31mb\\x0dc\\x0ad\\x09e\\x7ff\\x9bg"
    assert shown("café [draft] 数据库 \u00a0") == "café [draft] 数据库 \u00a0"
    assert shown(shown("x\x1by")) == shown("x\x1by")  # idempotent
    assert shown("one\ntwo\x1b", lines=True) == "one\ntwo\\x1b"
    from rich.markup import escape

    for name in ("x[/]y.md", "[a]dir/n.md", "tail\\", "b\\[x]", "ok.md"):
        assert shown_markup(name) == escape(name)


@pytest.fixture
def vault(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))
    vault = tmp_path / "v"
    cli.install_json(REPO_ROOT / "shard-template", vault, "--yes")
    for folder, name in (("[a]dir", "inner.md"), ("x[", "]y.md"), (ESC_NAME, "inner.md")):
        (vault / folder).mkdir()
        (vault / folder / name).write_text("# odd\n\nzebrafish\n", encoding="utf-8")
    return vault


def test_status_verbose_prints_odd_note_paths_as_named(vault: Path, cli: Cli) -> None:
    res = cli.run("status", "--verbose", cwd=vault)
    assert res.exit_code == 0 and res.exception is None, res.output  # "[/]" raised MarkupError
    assert "[a]dir/inner.md" in res.stdout and "x[/]y.md" in res.stdout
    assert "\x1b" not in res.stdout and "e\\x1b[31mred/inner.md" in res.stdout


def test_index_only_with_a_name_that_is_not_utf8_skips_it(vault: Path, cli: Cli) -> None:
    os.close(os.open(os.fsencode(vault) + b"/\xff.md", os.O_CREAT | os.O_WRONLY, 0o644))
    res = cli.run("index", "--only", os.fsdecode(os.fsencode(vault) + b"/\xff.md"), "--json", cwd=vault)
    assert res.exit_code == 0 and res.exception is None, res.output  # a UnicodeEncodeError traceback
    assert [s["reason"] for s in res.json()["skipped"]] == [
        "name is not UTF-8 (rename it to be indexed and served)"
    ]


def test_rm_and_restore_show_the_control_characters_of_a_name(vault: Path, cli: Cli) -> None:
    note = f"{ESC_NAME}/inner.md"
    for command in ("rm", "restore"):
        res = cli.run(command, note, cwd=vault)
        assert res.exit_code == 0, res.output
        assert "\x1b" not in res.stdout and "e\\x1b[31mred/inner.md" in res.stdout


def test_an_import_never_names_a_note_with_a_c1_control() -> None:
    assert "\x9b" not in sanitize_stem("c1\x9b31mx")


def test_the_one_table_printer_shows_a_cells_control_characters() -> None:
    """The import plan's name and source columns wrote a file name's escape sequence raw."""
    import io

    from shardpy.cli import table

    out = io.StringIO()
    table.show(out, None, ["name", "path"], [["ok", "a.md"], [ESC_NAME, "nl\nx.md"]], terminal=False)  # type: ignore[arg-type]
    assert (
        "\x1b" not in out.getvalue() and "e\\x1b[31mred" in out.getvalue() and "nl\\x0ax.md" in out.getvalue()
    )
    assert len(out.getvalue().splitlines()) == 4  # header, rule, two rows: no row split in two


def test_search_and_index_show_a_line_break_in_a_name(vault: Path, cli: Cli) -> None:
    (vault / "nl\nname.md").write_text("# nl\n\nquokkafish\n", encoding="utf-8")
    assert cli.run("index", ".", cwd=vault).exit_code == 0
    out = cli.run("search", "--mode", "lexical", "quokkafish", cwd=vault).stdout
    assert "nl\\x0aname.md" in out and "nl\nname" not in out
