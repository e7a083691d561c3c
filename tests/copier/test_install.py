"""`shardpy install` of a copier template: byte-identical to `copier copy`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.copier.kit import copier_copy, snapshot
from tests.shardkit import Cli


def _install(cli: Cli, template: Path, dest: Path, *args: str, tag: str = "v1.0.0") -> None:
    res = cli.run("install", f"{template}@{tag}", dest, *args, cwd=dest.parent)
    assert res.exit_code == 0, res.output


def test_defaults_byte_identical_to_copier_copy(cli: Cli, template: Path, tmp_path: Path) -> None:
    for tag in ("v1.0.0", "v2.0.0"):
        mine, theirs = tmp_path / f"mine-{tag}" / "proj", tmp_path / f"theirs-{tag}" / "proj"
        mine.parent.mkdir()
        _install(cli, template, mine, "--defaults", tag=tag)
        copier_copy(template, theirs, tag)
        assert snapshot(mine) == snapshot(theirs), tag
        answers = (mine / ".copier-answers.yml").read_text()
        assert answers == (theirs / ".copier-answers.yml").read_text()
        assert f"_commit: {tag}\n" in answers and f"_src_path: {template}\n" in answers


def test_settings_and_names_are_honoured(cli: Cli, template: Path, tmp_path: Path) -> None:
    dest = tmp_path / "proj"
    _install(cli, template, dest, "--defaults")
    files = set(snapshot(dest))
    # _subdirectory: only template/ is rendered; _exclude; templated file and folder names;
    # a name rendering empty (ci_name shown only `when: use_ci`) drops the file.
    assert "outside.txt" not in files and "copier.yml" not in files
    assert not {"old.bak", "skipme"} & files
    assert {"demo-app/__init__.py", "ci-github.yml", "docs/index.md", "README.md", "docs.feature"} <= files
    state = json.loads((dest / ".shardmind/state.json").read_text())
    assert state["shard"] == "copier/tpl" and state["version"] == "1.0.0"
    assert state["copier"] == {
        "answers_file": ".copier-answers.yml",
        "src_path": str(template),
        "commit": "v1.0.0",
    }
    # A secret is used for rendering but never written to the answers file or state.
    assert "token-length 6" in (dest / "config.txt").read_text()
    assert "s3cret" not in (dest / ".copier-answers.yml").read_text()
    assert "token" not in state["values"] and "s3cret" not in json.dumps(state)
    assert not (dest / "shard-values.yaml").exists()


def test_data_typed_by_the_question_like_copier(cli: Cli, template: Path, tmp_path: Path) -> None:
    data = {
        "project_name": "Alpha",
        "count": "7",
        "ratio": "1.25",
        "use_ci": "false",
        "license": "Apache-2.0",
        "features": "[tests, lint]",
        "extra": "[1, 2]",
        "settings": '{"z": true}',
        "src_dir": "lib",
    }
    values = tmp_path / "values.yaml"
    values.write_text("project_name: FromFile\ncount: 1\n")
    mine = tmp_path / "mine" / "proj"
    mine.parent.mkdir()
    args = [a for k, v in data.items() for a in ("--data", f"{k}={v}")]
    _install(cli, template, mine, "--defaults", "--values", str(values), *args)
    theirs = tmp_path / "theirs" / "proj"
    copier_copy(template, theirs, "v1.0.0", data=data)
    assert snapshot(mine) == snapshot(theirs)
    files = set(snapshot(mine))
    assert "alpha-app/__init__.py" in files  # computed default from the --data answer
    assert not any(p.startswith("ci-") for p in files) and "docs/index.md" not in files
    answers = (mine / ".copier-answers.yml").read_text()
    assert "count: 7\n" in answers and "use_ci: false\n" in answers and "- tests\n" in answers


@pytest.mark.parametrize(
    ("pair", "code"),
    [
        ("count=many", "COPIER_ANSWER_INVALID"),
        ("license=BSD", "COPIER_ANSWER_INVALID"),
        ("project_name=", "COPIER_ANSWER_INVALID"),  # the template's validator
        ("no-equals-sign", "DATA_INVALID"),
    ],
)
def test_bad_answers_are_typed_errors(cli: Cli, template: Path, tmp_path: Path, pair: str, code: str) -> None:
    res = cli.run("install", f"{template}@v1.0.0", tmp_path / "p", "--defaults", "--data", pair, "--json")
    assert res.exit_code == 1 and res.error_code() == code, res.output
    assert not (tmp_path / "p").exists()


def test_skip_if_exists_keeps_an_existing_file(cli: Cli, template: Path, tmp_path: Path) -> None:
    mine, theirs = tmp_path / "mine" / "proj", tmp_path / "theirs" / "proj"
    for dest in (mine, theirs):
        dest.mkdir(parents=True)
        (dest / "local.cfg").write_text("my config\n")
    _install(cli, template, mine, "--defaults")
    copier_copy(template, theirs, "v1.0.0")
    assert snapshot(mine) == snapshot(theirs)
    assert (mine / "local.cfg").read_text() == "my config\n"
    res = cli.run("update", "--yes", "--release", "v2.0.0", "--json", cwd=mine)
    assert res.exit_code == 0, res.output
    assert (mine / "local.cfg").read_text() == "my config\n"


def test_dry_run_json_writes_nothing(cli: Cli, template: Path, tmp_path: Path) -> None:
    data = cli.install_json(f"{template}@v1.0.0", tmp_path / "p", "--defaults", "--dry-run")
    assert data["dry_run"] and not (tmp_path / "p").exists()
    assert ".copier-answers.yml" in {f["path"] for f in data["files"]}
    assert "token" not in data["values"]


def test_collision_with_an_existing_file(cli: Cli, template: Path, tmp_path: Path) -> None:
    dest = tmp_path / "p"
    dest.mkdir()
    (dest / "README.md").write_text("mine\n")
    res = cli.run("install", f"{template}@v1.0.0", dest, "--defaults", "--json")
    assert res.error_code() == "INSTALL_COLLISION"
    assert (dest / "README.md").read_text() == "mine\n"


def test_tasks_need_trust(cli: Cli, task_template: Path, tmp_path: Path) -> None:
    res = cli.run("install", f"{task_template}@v1.0.0", tmp_path / "p", "--defaults", "--json")
    assert res.exit_code == 1 and res.error_code() == "COPIER_UNTRUSTED", res.output
    assert res.json()["error"]["details"]["features"] == ["tasks"]
    assert not (tmp_path / "p").exists()
    dest = tmp_path / "q"
    res = cli.run("install", f"{task_template}@v1.0.0", dest, "--defaults", "--trust", "--data", "name=zed")
    assert res.exit_code == 0, res.output
    assert (dest / "from-task.txt").read_text() == "zed\n"  # ran in the destination, after the files
    state = json.loads((dest / ".shardmind/state.json").read_text())
    assert "from-task.txt" not in state["files"]  # a task's output is the user's


def test_ordinary_shard_never_imports_copier(tmp_path: Path) -> None:
    """Neither copier nor shardpy's copier modules load for a shard's install and update."""
    code = (
        "import os, sys\n"
        "from shardpy.cli.commands import app\n"
        "for argv, where in (([ 'install', '--defaults', 'v'], '.'), (['update', '--yes'], 'v')):\n"
        "    os.chdir(where)\n"
        "    try:\n"
        "        app(argv)\n"
        "    except SystemExit as e:\n"
        "        assert not e.code, e.code\n"
        "print(sorted(m for m in sys.modules if 'copier' in m))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_folder_and_archive_sources(cli: Cli, template: Path, tmp_path: Path) -> None:
    import tarfile

    from tests.copier.kit import git

    folder = tmp_path / "folder" / "tpl"
    git(template, "worktree", "add", "--quiet", "--detach", str(folder), "v1.0.0")
    shutil.rmtree(folder / ".git", ignore_errors=True)
    (folder / ".git").unlink(missing_ok=True)
    archive = tmp_path / "tpl.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(folder, arcname=".")
    theirs = tmp_path / "theirs" / "proj"
    copier_copy(folder, theirs, "v1.0.0")
    answers = (theirs / ".copier-answers.yml").read_text()
    assert "_commit" not in answers  # a plain folder has no commit, for copier too
    for n, source in enumerate((folder, archive)):
        mine = tmp_path / f"mine{n}" / "proj"
        mine.parent.mkdir()
        res = cli.run("install", source, mine, "--defaults", cwd=mine.parent)
        assert res.exit_code == 0, res.output
        expected = snapshot(theirs)
        got = snapshot(mine)
        if source == archive:  # _src_path is the source as given
            assert (mine / ".copier-answers.yml").read_text() == answers.replace(str(folder), str(archive))
            got.pop(".copier-answers.yml")
            expected.pop(".copier-answers.yml")
        assert got == expected
    git(template, "worktree", "prune")


@pytest.mark.parametrize("spelling", ["github:acme/tpl", "gh:acme/tpl"])  # gh: is copier's own alias
def test_github_source(
    cli: Cli, template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    from tests.copier.kit import git
    from tests.sources.support import ShardRepo, StubGitHub

    stub = StubGitHub().start()
    try:
        commits = {tag: git(template, "rev-parse", f"{tag}^{{commit}}") for tag in ("v1.0.0", "v2.0.0")}
        stub.add_repo("acme/tpl", ShardRepo(template, commits))
        monkeypatch.setenv("SHARDPY_GITHUB_API_BASE", stub.base)
        monkeypatch.delenv("GITHUB_TOKEN", raising=False)
        mine = tmp_path / "mine" / "proj"
        mine.parent.mkdir()
        _install_src = cli.run("install", f"{spelling}@v2.0.0", mine, "--defaults", cwd=mine.parent)
        assert _install_src.exit_code == 0, _install_src.output
    finally:
        stub.stop()
    theirs = tmp_path / "theirs" / "proj"
    copier_copy(template, theirs, "v2.0.0")
    answers = (mine / ".copier-answers.yml").read_text()
    assert "_commit: v2.0.0\n_src_path: gh:acme/tpl\n" in answers  # what `copier copy gh:acme/tpl` records
    assert answers == (theirs / ".copier-answers.yml").read_text().replace(str(template), "gh:acme/tpl")
    expected, got = snapshot(theirs), snapshot(mine)
    expected.pop(".copier-answers.yml")
    got.pop(".copier-answers.yml")
    assert got == expected


@pytest.mark.parametrize(
    ("config", "code"),
    [
        ("q: [unclosed\n", "COPIER_CONFIG_INVALID"),
        ("_min_copier_version: '99.0.0'\nq: {type: str, default: x}\n", "COPIER_VERSION_UNSUPPORTED"),
        ("q: {type: nosuchtype, default: x}\n", "COPIER_RENDER_FAILED"),
    ],
)
def test_broken_templates_are_typed_errors(cli: Cli, tmp_path: Path, config: str, code: str) -> None:
    src = tmp_path / "tpl"
    src.mkdir()
    (src / "copier.yml").write_text(config)
    (src / "a.txt.jinja").write_text("{{ q }}\n")
    res = cli.run("install", src, tmp_path / "p", "--defaults", "--json")
    assert res.exit_code == 1 and res.error_code() == code, res.output
    assert not (tmp_path / "p").exists()


def test_no_hooks_skips_tasks_without_trust(cli: Cli, task_template: Path, tmp_path: Path) -> None:
    dest = tmp_path / "p"
    res = cli.run("install", f"{task_template}@v1.0.0", dest, "--defaults", "--no-hooks")
    assert res.exit_code == 0, res.output
    assert (dest / "a.txt").read_text() == "t\n" and not (dest / "from-task.txt").exists()
