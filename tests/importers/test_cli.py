"""The `shardpy import` command: output, JSON, exit codes, typed errors."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from shardpy.cli.commands import app
from tests.importers.fixtures import tree_hash

runner = CliRunner()


def _small_project(tmp_path: Path) -> Path:
    src = tmp_path / "bm"
    src.mkdir()
    (src / "a.md").write_text(
        "---\ntitle: Alpha\n---\n\n- [x1] first #t\n- links_to [[Beta]]\n", encoding="utf-8"
    )
    (src / "b.md").write_text(
        "---\ntitle: Beta\n---\n\n- [x2] second #t\n- links_to [[Gamma]]\n", encoding="utf-8"
    )
    return src


def test_dry_run_output_and_exit_code(tmp_path: Path, vault: Path) -> None:
    src = _small_project(tmp_path)
    before = tree_hash(vault)
    result = runner.invoke(app, ["import", "--from", "basic-memory", str(src), str(vault)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert (
        lines[0] == "shardpy import --from basic-memory: DRY RUN (nothing was written; pass --apply to write)"
    )
    assert "create" in result.output and "memories/basic-memory/Alpha.md" in result.output
    assert "[[Gamma]]" in result.output and "unresolved" in result.output
    assert lines[-1].startswith("Summary: 2 record(s): 2 create")
    assert tree_hash(vault) == before


def test_json_and_apply(tmp_path: Path, vault: Path) -> None:
    src = _small_project(tmp_path)
    result = runner.invoke(
        app, ["import", "--from", "basic-memory", str(src), str(vault), "--apply", "--json"]
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["dry_run"] is False and data["run_id"] and data["summary"]["create"] == 2
    assert data["result"]["outcomes"] == {"written": 2}
    assert {lr["text"] for lr in data["links"]} == {"[[Beta]]", "[[Gamma]]"}
    assert (vault / ".shardmind/imports" / data["run_id"] / "plan.json").is_file()
    again = runner.invoke(app, ["import", "--from", "basic-memory", str(src), str(vault), "--apply"])
    assert again.exit_code == 0
    assert "nothing to write" in again.output.splitlines()[0]


def test_vault_defaults_to_cwd_ancestor(tmp_path: Path, vault: Path, monkeypatch: object) -> None:
    import pytest

    mp = pytest.MonkeyPatch()
    try:
        src = _small_project(tmp_path)
        (vault / ".shardmind").mkdir()
        sub = vault / "deep" / "er"
        sub.mkdir(parents=True)
        mp.chdir(sub)
        result = runner.invoke(app, ["import", "--from", "basic-memory", str(src), "--json"])
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["vault"] == str(vault.resolve())
    finally:
        mp.undo()


def test_typed_errors_and_usage(tmp_path: Path, vault: Path) -> None:
    result = runner.invoke(app, ["import", "--from", "basic-memory", str(tmp_path / "missing"), str(vault)])
    assert result.exit_code == 1
    assert "error [IMPORT_SOURCE_MISSING]" in result.output and "hint:" in result.output
    result = runner.invoke(app, ["import", "--from", "nope", str(tmp_path), str(vault)])
    assert result.exit_code == 2
    result = runner.invoke(app, ["import", str(tmp_path), str(vault)])
    assert result.exit_code == 2
    result = runner.invoke(app, ["import", "--resume", "--vault", str(vault)])
    assert result.exit_code == 1 and "IMPORT_NOTHING_TO_RESUME" in result.output
    result = runner.invoke(app, ["import", "--resume", "--abandon", "--vault", str(vault)])
    assert result.exit_code == 2


def test_collision_exits_1_after_writing_the_rest(tmp_path: Path, vault: Path) -> None:
    src = _small_project(tmp_path)
    (src / "c.md").write_text("---\ntitle: Alpha\n---\nsame title, same folder\n", encoding="utf-8")
    result = runner.invoke(app, ["import", "--from", "basic-memory", str(src), str(vault), "--apply"])
    assert result.exit_code == 1
    assert "collision" in result.output
    assert (vault / "memories/basic-memory/Beta.md").is_file()


# --- the plain table printer: one % format per line, the same text as padding cell by cell ---------

_ASCII_CELLS = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=12)


def _padded_reference(headers: list[str], rows: list[list[str]]) -> str:
    """The padded-columns table as the per-cell printer wrote it."""
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c if i == len(cells) - 1 else c.ljust(widths[i]) for i, c in enumerate(cells)
        ).rstrip()

    return "".join(line(r) + "\n" for r in [headers, ["-" * w for w in widths], *rows])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.integers(1, 4).flatmap(lambda n: st.lists(st.lists(_ASCII_CELLS, min_size=n, max_size=n), min_size=1))
)
def test_plain_table_equals_padding_cell_by_cell(
    capsys: pytest.CaptureFixture[str], rows: list[list[str]]
) -> None:
    from shardpy.cli.table import write_plain

    headers = ["action", "x", "y", "z"][: len(rows[0])]
    capsys.readouterr()
    write_plain(sys.stdout, headers, rows)
    assert capsys.readouterr().out == _padded_reference(headers, rows)


# --- plain invocations run without Typer, with the arguments Typer would give ----------------------

PLAIN_ARGVS = [
    ["--from", "basic-memory", "src"],
    ["--from", "basic-memory", "src", "vault"],
    ["src", "--from", "mcp-memory", "vault", "--apply"],
    ["--from", "claude-code-memory", "src", "--json", "-v", "--strict"],
    ["--verbose", "--from", "basic-memory", "--into", "notes/x", "--on-conflict", "markers", "src", "v"],
    ["--from", "basic-memory", "src", "--on-conflict", "theirs", "--apply", "--json"],
    # One table and one check across fields for both parsers (issue 27): these are plain now.
    ["--resume"],
    ["--abandon", "v"],
    ["--from", "basic-memory", "src", "--vault", "v"],
]
TYPER_ONLY_ARGVS = [
    [],
    ["--help"],
    ["-h"],
    ["src"],  # --from is required: Typer reports it
    ["--from", "nope", "src"],
    ["--from", "basic-memory"],
    ["--from", "basic-memory", "a", "b", "c"],
    ["--from=basic-memory", "src"],
    ["--from", "basic-memory", "src", "--apply", "--apply"],
    ["--from", "basic-memory", "src", "-v", "--verbose"],
    ["--from", "basic-memory", "src", "--on-conflict", "nope"],
    ["--from", "basic-memory", "src", "--into"],
    ["--from", "basic-memory", "src", "--into", "-x"],
    ["--from", "basic-memory", "src", "--into", ""],
    ["--from", "basic-memory", "-"],
    ["--from", "basic-memory", ""],
    ["--from", "basic-memory", "--", "src"],
    ["--from", "basic-memory", "src", "-vx"],
    ["--from", "basic-memory", "src", "--unknown"],
]


@pytest.mark.parametrize("argv", PLAIN_ARGVS)
def test_plain_arguments_are_the_ones_typer_gives(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from shardpy.cli import import_options
    from shardpy.cli.import_cmd import ImportArgs, plain_args

    given: list[ImportArgs] = []

    def run_command(args: ImportArgs) -> int:
        given.append(args)
        return 0

    monkeypatch.setattr(import_options, "run_command", run_command)
    result = runner.invoke(app, ["import", *argv])
    assert result.exit_code == 0, result.output
    assert plain_args(argv) == given[0]


@pytest.mark.parametrize("argv", TYPER_ONLY_ARGVS)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    from shardpy.cli.import_cmd import plain_args

    assert plain_args(argv) is None


def _main_exit(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    from shardpy.cli.app import main

    monkeypatch.setattr("sys.argv", ["shardpy", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0)


@pytest.mark.parametrize("extra", [[], ["--json"], ["--verbose"]])
def test_plain_import_prints_what_typer_prints(
    tmp_path: Path,
    vault: Path,
    extra: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    src = _small_project(tmp_path)
    argv = ["import", "--from", "basic-memory", str(src), str(vault), *extra]
    via_typer = runner.invoke(app, argv)
    capsys.readouterr()
    code = _main_exit(argv, monkeypatch)
    plain = capsys.readouterr().out
    assert code == via_typer.exit_code
    if "--json" in extra:
        typer_plan, plain_plan = json.loads(via_typer.stdout), json.loads(plain)
        typer_plan.pop("imported_at")
        plain_plan.pop("imported_at")
        assert plain_plan == typer_plan
    else:
        assert plain == via_typer.stdout


def test_plain_import_reports_typed_errors_like_typer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["import", "--from", "basic-memory", str(tmp_path / "missing"), str(tmp_path)]
    via_typer = runner.invoke(app, argv)
    capsys.readouterr()
    assert _main_exit(argv, monkeypatch) == via_typer.exit_code == 1
    assert "IMPORT_SOURCE_MISSING" in capsys.readouterr().err
