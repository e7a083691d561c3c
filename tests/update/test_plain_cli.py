"""`install` and `update` run without Typer (shardpy.cli.install_update) when their
arguments are plain: the same arguments as Typer gives, the same output and exit code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from shardpy.cli import install_update
from shardpy.cli.commands import app
from shardpy.cli.install_update import InstallArgs, UpdateArgs, plain_install_args, plain_update_args
from tests.shardkit import Cli, run_shardpy
from tests.update.kit import Scenario, chdir

runner = CliRunner()

PLAIN_INSTALL = [
    [],
    ["src"],
    ["src", "dest", "--defaults"],
    ["--defaults", "github:o/r@1.2.3", "dest", "--json"],
    [
        "src",
        "--values",
        "v.yaml",
        "-d",
        "a=1",
        "--data",
        "b=2",
        "--exclude-module",
        "m",
        "--exclude-module",
        "n",
    ],
    ["src", "dest", "-y", "--dry-run", "--trust", "--no-hooks", "--backup", "--include-prerelease", "-v"],
    ["--yes", "--verbose", "src"],
]
TYPER_ONLY_INSTALL = [
    ["--help"],
    ["-h"],
    ["a", "b", "c"],
    ["src", "--values=v.yaml"],
    ["src", "--values"],
    ["src", "--values", "-x"],
    ["src", "--values", ""],
    ["src", "--values", "a", "--values", "b"],
    ["src", "--defaults", "--defaults"],
    ["src", "-y", "--yes"],
    ["src", "-yv"],
    ["src", "--", "dest"],
    ["-", "dest"],
    ["", "dest"],
    ["src", "--unknown"],
    ["src", "--release", "1"],
    ["src", "--version"],
]
PLAIN_UPDATE = [
    [],
    ["--yes"],
    ["-y", "--json", "--release", "v2.0.0", "--include-prerelease"],
    ["--on-conflict", "theirs", "--conflict-style", "diff3", "--dry-run", "-v"],
    ["--add-module", "a", "--add-module", "b", "--remove-module", "c", "-d", "x=1", "--data", "y=2"],
    ["--restore-missing", "--no-hooks", "--trust", "--verbose"],
]
TYPER_ONLY_UPDATE = [
    ["--help"],
    ["-h"],
    ["v2"],
    ["--release=v2"],
    ["--release"],
    ["--release", "-y"],
    ["--release", "a", "--release", "b"],
    ["--yes", "--yes"],
    ["-yv"],
    ["--backup"],
    ["--defaults"],
    ["--", "x"],
]


@pytest.mark.parametrize("argv", PLAIN_INSTALL)
def test_plain_install_arguments_are_the_ones_typer_gives(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[InstallArgs] = []
    monkeypatch.setattr(install_update, "run_install", given.append)
    result = runner.invoke(app, ["install", *argv])
    assert result.exit_code == 0, result.output
    assert plain_install_args(argv) == given[0]


@pytest.mark.parametrize("argv", PLAIN_UPDATE)
def test_plain_update_arguments_are_the_ones_typer_gives(
    argv: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[UpdateArgs] = []

    def run_update(args: UpdateArgs) -> int:
        given.append(args)
        return 0

    monkeypatch.setattr(install_update, "run_update", run_update)
    result = runner.invoke(app, ["update", *argv])
    assert result.exit_code == 0, result.output
    assert plain_update_args(argv) == given[0]


def test_a_bad_choice_is_a_usage_error_on_both_paths(tmp_path: Path) -> None:
    # Typer knows the choices (they are listed in help, issue 26 item 21); the plain
    # path's body checks the same ones: exit 2 and the flag named, either way.
    typer_result = runner.invoke(app, ["update", "--on-conflict", "nope"])
    assert typer_result.exit_code == 2 and "--on-conflict" in typer_result.output
    plain = run_shardpy("update", "--on-conflict", "nope", cwd=tmp_path)
    assert plain.returncode == 2 and "--on-conflict" in plain.stderr, plain.stderr


@pytest.mark.parametrize("argv", TYPER_ONLY_INSTALL)
def test_anything_else_after_install_is_left_to_typer(argv: list[str]) -> None:
    assert plain_install_args(argv) is None


@pytest.mark.parametrize("argv", TYPER_ONLY_UPDATE)
def test_anything_else_after_update_is_left_to_typer(argv: list[str]) -> None:
    assert plain_update_args(argv) is None


@pytest.mark.parametrize("verb", ["install", "update"])
def test_plain_spellings_are_every_option_typer_declares(verb: str) -> None:
    import typer.main

    from shardpy.cli import options

    command = typer.main.get_command(app).commands[verb]  # type: ignore[attr-defined]
    declared = {
        (spelling, param.name)
        for param in command.params
        if param.param_type_name == "option"
        for spelling in param.opts
    }
    table = {"install": InstallArgs, "update": UpdateArgs}[verb]
    assert set(options.spellings(table).items()) == declared


def _main(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> int:
    from shardpy.cli.app import main

    monkeypatch.setattr("sys.argv", ["shardpy", *argv])
    with pytest.raises(SystemExit) as exited:
        main()
    return int(exited.value.code or 0)


def _without_times(data: Any) -> Any:
    if isinstance(data, dict):
        return {
            k: _without_times(v)
            for k, v in data.items()
            if k not in ("installed_at", "updated_at", "duration_ms")
        }
    if isinstance(data, list):
        return [_without_times(v) for v in data]
    return data


def _shard_v1(sc: Scenario) -> None:
    sc.shard("1.0.0", {"Home.md": "# Home\n\nline one\nline two\n", "brain/a.md": "a\n", "extra/b.md": "b\n"})


@pytest.mark.parametrize("extra", [[], ["--json"], ["--verbose"]])
def test_plain_install_prints_what_typer_prints(
    sc: Scenario, extra: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _shard_v1(sc)
    argv = ["install", str(sc.src), str(sc.root / "typer"), "--defaults", *extra]
    via_typer = runner.invoke(app, argv)
    capsys.readouterr()
    code = _main(["install", str(sc.src), str(sc.root / "plain"), "--defaults", *extra], monkeypatch)
    plain = capsys.readouterr().out
    assert code == via_typer.exit_code == 0, via_typer.output
    if "--json" in extra:
        typer_result, plain_result = json.loads(via_typer.stdout), json.loads(plain)
        assert _without_times(plain_result) == _without_times(
            json.loads(json.dumps(typer_result).replace(str(sc.root / "typer"), str(sc.root / "plain")))
        )
    else:
        assert plain == via_typer.stdout.replace(str(sc.root / "typer"), str(sc.root / "plain"))


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_plain_update_prints_what_typer_prints_and_exits_3_on_a_conflict(
    sc: Scenario, extra: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _shard_v1(sc)
    sc.install("--defaults")
    sc.write("Home.md", "# Home\n\nline one, mine\nline two\n")
    sc.shard(
        "2.0.0",
        {"Home.md": "# Home\n\nline one, theirs\nline two\n", "brain/a.md": "a2\n", "extra/b.md": "b\n"},
    )
    copy = sc.root / "copy"
    shutil.copytree(sc.vault, copy)
    with chdir(sc.vault):
        via_typer = runner.invoke(app, ["update", "--yes", *extra])
    capsys.readouterr()
    monkeypatch.chdir(copy)
    code = _main(["update", "--yes", *extra], monkeypatch)
    plain = capsys.readouterr().out
    assert code == via_typer.exit_code == 3, via_typer.output
    typer_out = via_typer.stdout.replace(str(sc.vault), str(copy))
    if "--json" in extra:
        assert _without_times(json.loads(plain)) == _without_times(json.loads(typer_out))
    else:
        assert plain == typer_out
    assert (copy / "Home.md").read_bytes() == (sc.vault / "Home.md").read_bytes()


@pytest.mark.parametrize(
    "argv",
    [
        ["update", "--yes"],
        ["update", "--json"],
        ["install", "./missing.tar.gz", "v"],
        ["install", "./missing.tar.gz", "v", "--json"],
    ],
)
def test_plain_commands_report_typed_errors_like_typer(
    argv: list[str],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    cli: Cli,
) -> None:
    monkeypatch.chdir(tmp_path)
    via_typer = runner.invoke(app, argv)
    capsys.readouterr()
    code = _main(argv, monkeypatch)
    captured = capsys.readouterr()
    assert code == via_typer.exit_code != 0
    if "--json" in argv:
        assert json.loads(captured.out) == json.loads(via_typer.stdout)
    else:
        assert captured.err == via_typer.stderr
