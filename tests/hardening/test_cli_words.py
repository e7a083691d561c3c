"""Issue 26, item 23: what the CLI says about itself. `update --help` names no
`--values` (it has none); `merge-file --help` is a help text, not a raw
docstring; `--trust` with `--no-hooks` is a usage error (the synopsis shows
them as alternatives)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.shardkit import run_shardpy


def test_update_help_names_no_values_flag(tmp_path: Path) -> None:
    proc = run_shardpy("update", "--help", cwd=tmp_path)
    assert proc.returncode == 0 and "--data" in proc.stdout
    assert "--values" not in proc.stdout, proc.stdout


def test_merge_file_help_is_a_help_text(tmp_path: Path) -> None:
    proc = run_shardpy("merge-file", "--help", cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: shardpy merge-file")
    assert "``" not in proc.stdout and "--driver" in proc.stdout and "Exit 0" in proc.stdout


@pytest.mark.parametrize("command", ["install", "update", "adopt"])
def test_trust_and_no_hooks_are_alternatives(tmp_path: Path, command: str) -> None:
    args = {"install": ["install", "src", "dest"], "update": ["update"], "adopt": ["adopt", "src"]}[command]
    proc = run_shardpy(*args, "--trust", "--no-hooks", "--json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert '"code": "USAGE"' in proc.stdout and "--no-hooks" in proc.stdout


def test_a_copier_install_is_not_called_a_vault_to_open_in_obsidian(tmp_path: Path) -> None:
    template = tmp_path / "tpl"
    template.mkdir()
    (template / "copier.yml").write_text("name: {type: str, default: demo}\n")
    (template / "README.md.jinja").write_text("# {{ name }}\n")
    proc = run_shardpy("install", template, tmp_path / "project", "--defaults", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Obsidian" not in proc.stdout and "shardpy update" in proc.stdout, proc.stdout


def test_a_usage_error_has_a_hint(tmp_path: Path) -> None:
    proc = run_shardpy("update", "--trust", "--no-hooks", cwd=tmp_path)
    assert proc.returncode == 2 and "hint:" in proc.stderr and "--help" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("command", "flag", "choices"),
    [
        ("update", "--on-conflict", "keep|theirs|markers"),
        ("update", "--conflict-style", "merge|diff3"),
        ("adopt", "--mode", "keep-mine|use-shard|"),
        ("import", "--from", "basic-memory|claude-code"),
    ],
)
def test_help_lists_the_choices(tmp_path: Path, command: str, flag: str, choices: str) -> None:
    proc = run_shardpy(command, "--help", cwd=tmp_path, env={"COLUMNS": "200"})
    line = next(x for x in proc.stdout.splitlines() if flag in x)
    assert choices in line, line


def test_the_plain_parsers_check_the_same_choices() -> None:
    import typing

    from shardpy.cli import import_options
    from shardpy.cli.import_cmd import FORMATS, ON_CONFLICT

    hints = typing.get_type_hints(import_options.import_command)
    assert typing.get_args(typing.get_args(hints["fmt"])[0]) == FORMATS
    assert typing.get_args(hints["on_conflict"]) == ON_CONFLICT
