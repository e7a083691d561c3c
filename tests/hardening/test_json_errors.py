"""Item 11: every command given --json prints its error as the documented
JSON object ({"error": {code, message, hint, ...}}) on stdout, through the
one formatter, on the Typer path and on import's plain path alike; a usage
error too."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shardkit import Cli, make_shard, run_shardpy


@pytest.fixture
def vault(tmp_path: Path, cli: Cli) -> Path:
    cli.install_json(make_shard(tmp_path / "src", files={"a.md": "a\n"}), tmp_path / "vault", "--defaults")
    return tmp_path / "vault"


def _error(stdout: str) -> dict[str, object]:
    data = json.loads(stdout)
    err = data["error"]
    assert set(err) >= {"code", "message", "hint"}
    assert isinstance(err, dict)
    return err


def _cases(tmp: Path, vault: Path) -> dict[str, tuple[list[str], str]]:
    layout = tmp / "empty"
    layout.mkdir(exist_ok=True)
    return {
        "source-missing": (
            ["import", "--from", "basic-memory", str(tmp / "nope"), str(vault)],
            "IMPORT_SOURCE_MISSING",
        ),
        "source-layout": (
            ["import", "--from", "claude-code-memory", str(layout), str(vault)],
            "IMPORT_SOURCE_LAYOUT",
        ),
        "nothing-to-resume": (["import", "--resume", "--vault", str(vault)], "IMPORT_NOTHING_TO_RESUME"),
        "update-outside-a-vault": (["update"], "VAULT_NOT_FOUND"),
        "adopt-bad-source": (["adopt", str(tmp / "nope")], "SOURCE_NOT_FOUND"),
        "usage": (["install", "--no-such-flag"], "USAGE"),
        "usage-import": (["import", "--from", "no-such-format", "x"], "USAGE"),
    }


@pytest.mark.parametrize(
    "case",
    [
        "source-missing",
        "source-layout",
        "nothing-to-resume",
        "update-outside-a-vault",
        "adopt-bad-source",
        "usage",
        "usage-import",
    ],
)
def test_json_errors_in_a_real_process(tmp_path: Path, vault: Path, case: str) -> None:
    argv, code = _cases(tmp_path, vault)[case]
    outside = tmp_path / "elsewhere"
    outside.mkdir(exist_ok=True)
    done = run_shardpy(*argv, "--json", cwd=outside)
    assert done.returncode in (1, 2), done.stderr
    assert _error(done.stdout)["code"] == code, done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def test_json_errors_through_typer(tmp_path: Path, vault: Path, cli: Cli) -> None:
    for argv, code in list(_cases(tmp_path, vault).values())[:3]:
        res = cli.run(*argv, "--json", cwd=tmp_path)
        assert res.exit_code == 1
        assert _error(res.stdout)["code"] == code
