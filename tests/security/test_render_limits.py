"""Issue 11, medium: templates are untrusted code. Printing an undefined name fails; a render is
bounded in time and output size."""

from __future__ import annotations

from pathlib import Path

import pytest

import shardpy.shard.render
from tests.shardkit import Cli, make_shard, tree_snapshot


def _install(tmp_path: Path, cli: Cli, template: str) -> tuple[str | None, dict[str, str]]:
    shard = make_shard(
        tmp_path / "shard",
        files={"Home.md.njk": template, "notes/a.md": "a\n"},
        schema={"values": {"user_name": {"type": "string", "default": "Ada"}}},
    )
    res = cli.run("install", shard, tmp_path / "vault", "--defaults", "--no-hooks", "--json", cwd=tmp_path)
    return res.error_code(), tree_snapshot(tmp_path / "vault") if (tmp_path / "vault").exists() else {}


def test_printing_an_undefined_name_fails_the_render(tmp_path: Path, cli: Cli) -> None:
    code, vault = _install(tmp_path, cli, "# {{ usre_name }}\n")
    assert code == "RENDER_TEMPLATE_ERROR"
    assert vault == {}


def test_testing_an_undefined_name_is_still_allowed(tmp_path: Path, cli: Cli) -> None:
    code, _ = _install(tmp_path, cli, "{% if nickname %}{{ nickname }}{% endif %}{{ x | default('-') }}\n")
    assert code is None
    assert (tmp_path / "vault/Home.md").read_text() == "-\n"


@pytest.mark.parametrize(
    "template",
    [
        "{{ 'x' * 1500000000 }}",  # a 1.5 GB string
        "{% for i in range(100000) %}{{ 'y' * 100 }}{% endfor %}",  # 10 M characters of output
        "{{ 7 ** 99999999 }}",  # minutes of big-integer arithmetic
    ],
    ids=["huge-string", "huge-output", "huge-power"],
)
def test_render_output_is_bounded(tmp_path: Path, cli: Cli, template: str) -> None:
    code, vault = _install(tmp_path, cli, template)
    assert code == "RENDER_LIMIT"
    assert vault == {}


def test_render_time_is_bounded(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shardpy.shard.render, "RENDER_SECONDS", 0.5)
    loops = "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}"
    code, vault = _install(tmp_path, cli, loops)
    assert code == "RENDER_LIMIT"
    assert vault == {}
