"""Issue 26, item 22 (the copier half): `update --dry-run` off a terminal, when the new release adds
a question, previews with the question's default and says so; it writes nothing (it failed with
VALUES_MISSING)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.copier.conftest import _isolated  # noqa: F401  (autouse: cache, copier settings, git env)
from tests.copier.kit import ANSWERS_BODY, ANSWERS_TEMPLATE, Entry, build_template
from tests.shardkit import Cli, tree_snapshot

V1: dict[str, Entry] = {
    "copier.yml": "name:\n  type: str\n  default: demo\n",
    ANSWERS_TEMPLATE: ANSWERS_BODY,
    "README.md.jinja": "# {{ name }}\n",
}
V2: dict[str, Entry] = {
    "copier.yml": "name:\n  type: str\n  default: demo\nlicense:\n  type: str\n  default: MIT\n"
    "token:\n  type: str\n  secret: true\n  default: hunter2\n",
    "LICENSE.jinja": "{{ license }}\n",
}


@pytest.fixture
def project(cli: Cli, tmp_path: Path) -> Path:
    template = build_template(tmp_path / "tpl", {"v1.0.0": V1, "v2.0.0": V2})
    dest = tmp_path / "proj"
    res = cli.run("install", f"{template}@v1.0.0", dest, "--defaults", cwd=tmp_path)
    assert res.exit_code == 0, res.output
    return dest


def test_dry_run_previews_a_new_question_with_its_default(cli: Cli, project: Path) -> None:
    before = tree_snapshot(project)
    res = cli.run("update", "--release", "v2.0.0", "--dry-run", "--json", cwd=project)
    assert res.exit_code == 0, res.output
    report = res.json()
    assert {f["path"]: f["action"] for f in report["files"]}["LICENSE"] == "add"
    said = " ".join(report["warnings"])
    assert "license" in said and "'MIT'" in said and "default" in said
    assert "token" in said and "hunter2" not in res.output  # a secret's default is never shown
    assert tree_snapshot(project) == before  # a dry run writes nothing


def test_dry_run_in_plain_output_says_so(cli: Cli, project: Path) -> None:
    before = tree_snapshot(project)
    res = cli.run("update", "--release", "v2.0.0", "--dry-run", cwd=project)
    assert res.exit_code == 0, res.output
    assert "license" in res.output and "MIT" in res.output
    assert tree_snapshot(project) == before


def test_a_real_update_off_a_terminal_still_asks_for_the_answer(cli: Cli, project: Path) -> None:
    res = cli.run("update", "--release", "v2.0.0", cwd=project)
    assert res.error_code() == "VALUES_MISSING", res.output  # only a preview takes defaults unasked
    res = cli.run(
        "update", "--release", "v2.0.0", "--data", "license=BSD", "--dry-run", "--json", cwd=project
    )
    assert res.exit_code == 0, res.output
    assert "license" not in " ".join(
        w for w in res.json()["warnings"] if "default" in w
    )  # given: not a default
