"""Invariant 2: defaults never personalize (CONTRACT §6, §8).

The personalize hook edits a managed file and leaves a marker file; the
engine alone decides whether it runs (the hook never checks)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.shardkit import Cli, make_shard, read_json, values_yaml

PERSONALIZE = """\
import json, os, pathlib
ctx = json.load(open(os.environ["SHARDPY_HOOK_CONTEXT"]))
home = pathlib.Path("Home.md")
home.write_text(home.read_text() + "personalised for " + ctx["values"]["user_name"] + "\\n")
pathlib.Path("personalize-ran.json").write_text(json.dumps(ctx))
"""

LEGACY = """\
import json, os, pathlib
ctx = json.load(open(os.environ["SHARDPY_HOOK_CONTEXT"]))
pathlib.Path("post-install-ctx.json").write_text(json.dumps(ctx))
"""

SCHEMA: dict[str, Any] = {
    "values": {
        "user_name": {"type": "string", "default": "", "message": "Name"},
        "purpose": {
            "type": "select",
            "default": "engineering",
            "options": [{"value": "engineering"}, {"value": "research"}],
        },
        "is_eng": {"type": "boolean", "default": "{{ purpose == 'engineering' }}"},
        "teams": {"type": "list", "default": ["core", "infra"]},
        "size": {"type": "number", "default": 3, "min": 1, "max": 10},
        "tags": {
            "type": "multiselect",
            "options": [{"value": "a", "default": True}, {"value": "b"}, {"value": "c", "default": True}],
        },
    }
}


@pytest.fixture
def shard(tmp_path: Path) -> Path:
    return make_shard(
        tmp_path / "shard",
        files={"Home.md.njk": "# Home of {{ user_name }}\n", "notes/a.md": "a\n"},
        schema=SCHEMA,
        hooks={"personalize": PERSONALIZE},
    )


def _install(cli: Cli, tmp_path: Path, shard: Path, *args: str, values: dict[str, Any] | None = None) -> Path:
    vault = tmp_path / "vault"
    extra: list[str] = []
    if values is not None:
        vfile = tmp_path / "answers.yaml"
        vfile.write_text(values_yaml(values))
        extra = ["--values", str(vfile)]
    data = cli.install_json(shard, vault, *args, *extra, cwd=tmp_path)
    assert data["hooks_planned"] == [h["slot"] for h in data["hooks"]]
    return vault


def _personalised(vault: Path) -> bool:
    ran = (vault / "personalize-ran.json").exists()
    assert ran == ("personalised for" in (vault / "Home.md").read_text())
    return ran


def test_personalize_runs_after_a_non_default_install(tmp_path: Path, shard: Path, cli: Cli) -> None:
    vault = _install(cli, tmp_path, shard, "--defaults", values={"user_name": "Ada"})
    assert _personalised(vault)
    assert (vault / "Home.md").read_text() == "# Home of Ada\npersonalised for Ada\n"
    ctx = read_json(vault / "personalize-ran.json")
    assert ctx["slot"] == "personalize"
    assert ctx["values"]["user_name"] == "Ada"
    assert ctx["values"]["is_eng"] is True
    # the hook's edit is recorded: status calls the file managed, not modified
    state = read_json(vault / ".shardmind/state.json")
    assert "installed_hash" in state["files"]["Home.md"]


def test_personalize_never_runs_after_defaults(tmp_path: Path, shard: Path, cli: Cli) -> None:
    vault = _install(cli, tmp_path, shard, "--defaults")
    assert not _personalised(vault)
    assert (vault / "Home.md").read_text() == "# Home of \n"


def test_yes_takes_defaults_and_never_personalizes(tmp_path: Path, shard: Path, cli: Cli) -> None:
    assert not _personalised(_install(cli, tmp_path, shard, "--yes"))


@pytest.mark.parametrize(
    "values",
    [
        pytest.param(
            {
                "user_name": "",
                "purpose": "engineering",
                "is_eng": True,
                "teams": ["core", "infra"],
                "size": 3,
                "tags": ["a", "c"],
            },
            id="every-value-spelled-out",
        ),
        pytest.param({"purpose": "engineering"}, id="partial-equal-to-defaults"),
        pytest.param({"size": 3.0}, id="same-number-written-as-float"),
    ],
)
def test_values_file_equal_to_the_defaults_never_personalizes(
    tmp_path: Path, shard: Path, cli: Cli, values: dict[str, Any]
) -> None:
    vault = _install(cli, tmp_path, shard, "--defaults", values=values)
    assert not _personalised(vault)


@pytest.mark.parametrize(
    "values",
    [
        pytest.param({"teams": ["infra", "core"]}, id="list-order-counts"),
        pytest.param({"tags": ["c", "a"]}, id="multiselect-order-counts"),
        pytest.param({"is_eng": False}, id="computed-default-overridden"),
        pytest.param({"purpose": "research"}, id="select-changed"),
        pytest.param({"size": 4}, id="number-changed"),
    ],
)
def test_any_difference_personalizes(tmp_path: Path, shard: Path, cli: Cli, values: dict[str, Any]) -> None:
    assert _personalised(_install(cli, tmp_path, shard, "--defaults", values=values))


def test_legacy_post_install_gets_values_are_defaults(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(
        tmp_path / "shard",
        files={"Home.md": "home\n"},
        schema={"values": {"user_name": {"type": "string", "default": ""}}},
        hooks={"post-install": LEGACY},
    )
    vault = tmp_path / "vault"
    data = cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    assert [h["status"] for h in data["hooks"]] == ["ok"]
    assert read_json(vault / "post-install-ctx.json")["values_are_defaults"] is True

    vfile = tmp_path / "v.yaml"
    vfile.write_text(values_yaml({"user_name": "Ada"}))
    other = tmp_path / "vault2"
    cli.install_json(shard, other, "--values", vfile, cwd=tmp_path)
    ctx = read_json(other / "post-install-ctx.json")
    assert ctx["values_are_defaults"] is False
    assert ctx["slot"] == "post-install"
