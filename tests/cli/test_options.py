"""Issue 27: each command's options are declared once (shardpy.cli.options), and the
Typer command, the plain parser and the flow's options are derived from that table."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
import typer
import typer.main
from typer.testing import CliRunner

from shardpy import record
from shardpy.cli import import_cmd, install_update, options, search_cmd, serve_cmd, status, sync_cmd
from shardpy.cli.commands import app, readable_help

TABLES: dict[str, type[options.Args]] = {
    "install": install_update.InstallArgs,
    "update": install_update.UpdateArgs,
    "adopt": install_update.AdoptArgs,
    "import": import_cmd.ImportArgs,
    "serve": serve_cmd.ServeArgs,
    "status": status.StatusArgs,
    "index": search_cmd.IndexArgs,
    "search": search_cmd.SearchArgs,
    "sync": sync_cmd.SyncArgs,
}
# Arguments each table's two parsers must read alike (the plain parser may leave some to Typer).
ARGVS: dict[str, list[list[str]]] = {
    "install": [["src", "dest", "-d", "a=1", "--data", "b=2", "--values", "v.yaml", "-y"]],
    "update": [["--on-conflict", "theirs", "--conflict-style", "diff3", "--add-module", "m"]],
    "adopt": [
        ["src"],
        ["src", "dest", "--mode", "use-shard", "--from-version", "1.0.0", "--on-conflict", "keep"],
    ],
    "import": [["--from", "mcp-memory", "src", "--vault", "v"], ["--abandon"]],
    "serve": [[], ["v", "--for", "codex", "--print-config", "--qmd", "qmd mcp", "--trust-qmd"]],
    "status": [[], ["-v", "--json"]],
    "index": [[], ["v", "--full", "--only", "a.md", "--only", "b.md", "--json"]],
    "search": [
        ["q"],
        ["two words", "--vault", "v", "--top", "5", "--type", "t", "--path", "p", "--mode", "x"],
    ],
    "sync": [
        [],
        ["v", "--remote", "a", "--remote", "b", "--no-push", "--dry-run", "--json", "-y"],
        ["add-remote", "hub", "../hub.git"],  # a repeatable positional takes every word
        ["v", "--watch", "--interval", "1.5", "--print-unit", "systemd", "--status"],
    ],
}
BAD_ARGVS: dict[str, list[list[str]]] = {
    "update": [["--on-conflict", "nope"], ["--conflict-style", "both"]],
    "adopt": [[], ["src", "--mode", "nope"]],
    "import": [["--from", "nope", "src"], ["--resume", "--abandon"], ["--from", "mcp-memory"]],
    "sync": [["--interval", "0.5"], ["--interval", "soon"]],  # a number below its minimum, not one
}
runner = CliRunner()


def _cli() -> Any:
    return readable_help(typer.main.get_command(app))


def _commands(group: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = []
    for name, command in group.commands.items():
        found.append(((*path, name), command))
        if hasattr(command, "commands"):
            found += _commands(command, (*path, name))
    return found


@pytest.mark.parametrize("verb", sorted(TABLES))
def test_the_typer_command_declares_what_the_table_declares(verb: str) -> None:
    command = _cli().commands[verb]
    table = TABLES[verb]
    declared = {
        (spelling, p.name) for p in command.params if p.param_type_name == "option" for spelling in p.opts
    }
    assert declared == set(options.spellings(table).items())
    positionals = [p.name for p in command.params if p.param_type_name == "argument"]
    assert positionals == [f.name for f in record.fields(table) if not options.option_of(f).flags]


def _via_typer(table: type[options.Args], argv: list[str]) -> tuple[int, list[options.Args]]:
    given: list[options.Args] = []
    one = typer.Typer()
    one.command("x")(options.typer_command(table, given.append, name="x"))
    one.command("y")(lambda: None)  # two commands, so "x" is a subcommand as in shardpy
    return runner.invoke(one, ["x", *argv]).exit_code, given


@pytest.mark.parametrize(("verb", "argv"), [(v, a) for v, argvs in ARGVS.items() for a in argvs])
def test_both_parsers_give_the_same_arguments(verb: str, argv: list[str]) -> None:
    code, given = _via_typer(TABLES[verb], argv)
    assert code == 0 and len(given) == 1
    assert options.parse_plain(TABLES[verb], argv) == given[0]


@pytest.mark.parametrize(("verb", "argv"), [(v, a) for v, argvs in BAD_ARGVS.items() for a in argvs])
def test_a_usage_error_is_typers_to_report(verb: str, argv: list[str]) -> None:
    # A bad choice or a check across fields: the plain parser leaves it to Typer, which exits 2.
    assert options.parse_plain(TABLES[verb], argv) is None
    code, given = _via_typer(TABLES[verb], argv)
    assert code == 2 and not given


def test_every_option_a_help_names_exists_in_that_commands_parser() -> None:
    # `update --help` once named a `--values` update does not have (issue 26 item 23).
    checked = 0
    for path, command in _commands(_cli()):
        if path == ("merge-file",):  # its own parser and help (tests/hardening/test_cli_words.py)
            continue
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "300"})
        assert result.exit_code == 0, result.output
        known = {s for p in command.params for s in [*p.opts, *p.secondary_opts]} | {"--help"}
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", result.stdout))
        assert named <= known, (path, named - known)
        checked += 1
    assert checked >= 10


FLOWS = {
    "install": ("shardpy.flows.install", "InstallOptions", {"dest", "source"}),
    "update": ("shardpy.flows.update", "UpdateOptions", set()),
    "adopt": ("shardpy.flows.adopt", "AdoptOptions", {"dest"}),
    "import": ("shardpy.flows.importflow", "run_import", {"vault", "keep_resolved_links", "progress"}),
    "serve": ("shardpy.flows.serve", "run_serve", set()),
    "sync": ("shardpy.sync.plan", "plan_sync", {"vault"}),
}


@pytest.mark.parametrize("verb", sorted(FLOWS))
def test_each_flow_option_is_filled_from_one_field(verb: str) -> None:
    import importlib

    module, name, given = FLOWS[verb]
    target = getattr(importlib.import_module(module), name)
    accepted = set(inspect.signature(target).parameters)
    filled = list(options.flow_names(TABLES[verb]).values())
    assert len(filled) == len(set(filled)), filled
    assert set(filled) <= accepted, set(filled) - accepted
    required = {
        n for n, p in inspect.signature(target).parameters.items() if p.default is inspect.Parameter.empty
    }
    assert required <= set(filled) | given


@pytest.mark.parametrize(("argv", "push"), [([], True), (["--no-push"], False)])
def test_an_off_flag_is_on_unless_given_by_both_parsers(argv: list[str], push: bool) -> None:
    # sync --no-push fills plan_sync's push (an off_flag): declared with default True, click 8.5
    # alone gave True for `--no-push`; both parsers must turn it off.
    code, given = _via_typer(sync_cmd.SyncArgs, argv)
    assert code == 0 and [a.push for a in given] == [push]
    parsed = options.parse_plain(sync_cmd.SyncArgs, argv)
    assert parsed is not None and parsed.push is push


def test_the_sync_flow_gets_its_options_from_the_table(tmp_path: Any) -> None:
    args = options.parse_plain(sync_cmd.SyncArgs, ["--remote", "a", "--no-push", "--dry-run"])
    assert args is not None
    chosen: dict[str, Any] = {}
    options.flow_options(args, lambda **kw: chosen.update(kw), vault=tmp_path)
    assert chosen == {"vault": tmp_path, "remotes": ["a"], "push": False, "dry_run": True}


@pytest.mark.parametrize("verb", sorted(TABLES))
def test_a_shown_name_and_a_minimum_reach_the_help(verb: str) -> None:
    # sync's `[VAULT | ACTION ARGS...]` and `--interval` (at least 1.0) are declared in its table;
    # that Typer enforces the minimum is test_a_usage_error_is_typers_to_report's.
    shown = runner.invoke(app, [verb, "--help"], env={"COLUMNS": "300"}).stdout
    for item in record.fields(TABLES[verb]):
        opt = options.option_of(item)
        assert opt.metavar is None or f"{verb} [OPTIONS] [{opt.metavar}]..." in shown
        assert opt.minimum is None or f"[x>={opt.minimum}]" in shown
