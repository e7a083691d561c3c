"""`shardpy update` and `shardpy adopt` of copier projects, compared with
`copier update` on the same inputs (docs/COPIER.md lists the differences)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.copier.kit import copier_copy, copier_update, copy_tree, git, git_project, snapshot
from tests.shardkit import Cli

README_EDIT = ("line a\n", "line a, edited by me\n")  # the template changes "the end" in v2


def _edit(project: Path) -> None:
    """The same user edits in every scenario."""
    readme = project / "README.md"
    readme.write_text(readme.read_text().replace(*README_EDIT))
    (project / "conflict.txt").write_text("one, mine\ntwo\nthree\n")  # v2 changes the same line
    (project / "notes.txt").write_text("my own file\n")
    (project / "keep.txt").unlink()  # v2 changes it; a deleted file stays deleted
    (project / "ci-github.yml").write_text("ci: github\nmine: true\n")


@pytest.fixture
def installed(cli: Cli, template: Path, tmp_path: Path) -> Path:
    project = tmp_path / "a" / "proj"
    project.parent.mkdir()
    res = cli.run("install", f"{template}@v1.0.0", project, "--defaults", cwd=project.parent)
    assert res.exit_code == 0, res.output
    _edit(project)
    return project


def test_update_merges_reports_conflicts_and_leaves_user_files(cli: Cli, installed: Path) -> None:
    assert not (installed / ".git").exists()  # copier refuses to update outside git
    res = cli.run("update", "--release", "v2.0.0", "--yes", "--json", cwd=installed)
    assert res.exit_code == 3, res.output  # finished, with a conflict left: never silent
    report = res.json()
    actions = {f["path"]: f for f in report["files"]}
    assert actions["README.md"]["action"] == "merge"
    readme = (installed / "README.md").read_text()
    assert "line a, edited by me\n" in readme and "the end, version 2\n" in readme and "<<<<<<<" not in readme
    assert actions["conflict.txt"]["action"] == "conflict" and report["summary"]["conflict"] == 1
    assert (installed / "conflict.txt").read_text() == "one, mine\ntwo\nthree\n"  # kept: --on-conflict keep
    assert actions["keep.txt"]["action"] == "missing" and not (installed / "keep.txt").exists()
    assert actions["dropped.txt"]["action"] == "delete" and not (installed / "dropped.txt").exists()
    assert (installed / "new.txt").read_text() == "new in version 2\n"
    assert (installed / "notes.txt").read_text() == "my own file\n"
    assert "_commit: v2.0.0\n" in (installed / ".copier-answers.yml").read_text()
    status = cli.run("status", "--json", cwd=installed).json()
    assert status["version"] == "2.0.0" and status["copier"]["commit"] == "v2.0.0"
    assert status["copier"]["answers"]["project_name"] == "demo"
    assert {m["path"] for m in status["modified"]} >= {"README.md", "conflict.txt", "ci-github.yml"}
    again = cli.run("update", "--release", "v2.0.0", "--yes", cwd=installed)
    assert again.exit_code == 0 and "up to date" in again.output.lower()


def test_markers_on_request_then_newest_release(cli: Cli, installed: Path) -> None:
    res = cli.run("update", "--release", "v2.0.0", "--yes", "--on-conflict", "markers", cwd=installed)
    assert res.exit_code == 3 and "conflict" in res.output
    assert "<<<<<<<" in (installed / "conflict.txt").read_text()
    res = cli.run("update", "--yes", cwd=installed)  # no --release: the newest tag
    assert res.exit_code == 0, res.output
    assert (installed / "new.txt").read_text() == "new in version 3\n"
    assert "_commit: v3.0.0\n" in (installed / ".copier-answers.yml").read_text()


def test_same_result_as_copier_update_where_copier_merges_cleanly(
    cli: Cli, template: Path, installed: Path, tmp_path: Path
) -> None:
    # copier's side: the same project, made by copier, the same edits, committed (copier needs that).
    theirs = tmp_path / "b" / "proj"
    copier_copy(template, theirs, "v1.0.0")
    git_project(theirs)
    _edit(theirs)
    git(theirs, "add", "-A")
    git(theirs, "commit", "--quiet", "-m", "my edits")
    copier_update(theirs, "v2.0.0")
    assert cli.run("update", "--release", "v2.0.0", "--yes", cwd=installed).exit_code == 3
    mine_files, theirs_files = snapshot(installed), snapshot(theirs)
    # The one real conflict: copier writes inline markers and exits 0; shardpy keeps
    # your side, says so and exits 3 (docs/COPIER.md).
    assert "<<<<<<<" in (theirs / "conflict.txt").read_text()
    mine_files.pop("conflict.txt")
    theirs_files.pop("conflict.txt")
    assert mine_files == theirs_files


def test_uncommitted_changes_copier_refuses_shardpy_updates(
    cli: Cli, template: Path, installed: Path, tmp_path: Path
) -> None:
    from copier.errors import UserMessageError

    nongit = copy_tree(installed, tmp_path / "c" / "proj")
    shutil.rmtree(nongit / ".shardmind")
    with pytest.raises(UserMessageError, match="git-tracked"):
        copier_update(nongit, "v2.0.0")
    git_project(installed)
    (installed / "notes.txt").write_text("uncommitted\n")
    dirty = copy_tree(installed, tmp_path / "d" / "proj")
    with pytest.raises(UserMessageError, match="dirty"):
        copier_update(dirty, "v2.0.0")
    res = cli.run("update", "--release", "v2.0.0", "--yes", "--on-conflict", "theirs", cwd=installed)
    assert res.exit_code == 0, res.output
    assert (installed / "notes.txt").read_text() == "uncommitted\n"
    assert (installed / "conflict.txt").read_text() == "ONE from the template\ntwo\nthree\n"


def test_update_data_changes_an_answer(cli: Cli, template: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    assert cli.run("install", f"{template}@v1.0.0", project, "--defaults").exit_code == 0
    res = cli.run("update", "--yes", "--release", "v1.0.0", "--data", "count=9", "--json", cwd=project)
    assert res.exit_code == 0, res.output
    assert res.json()["values"]["changed"]["count"] == {"old": 3, "new": 9}
    assert "count 9" in (project / "README.md").read_text()
    assert "count: 9\n" in (project / ".copier-answers.yml").read_text()


def test_adopt_a_copier_project_then_update_merges_from_its_commit(
    cli: Cli, template: Path, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    copier_copy(template, project, "v1.0.0", data={"project_name": "Beta"})
    readme = project / "README.md"
    readme.write_text(readme.read_text().replace(*README_EDIT))
    before = snapshot(project)
    res = cli.run("adopt", str(template), "--json", cwd=project)
    assert res.exit_code == 0, res.output
    assert res.json()["mode"] == "copier" and res.json()["detected_version"] == "v1.0.0"
    assert snapshot(project) == before  # adopt only records the base
    state = json.loads((project / ".shardmind/state.json").read_text())
    assert state["version"] == "1.0.0" and state["ref"] is None and state["values"]["project_name"] == "Beta"
    assert state["files"]["README.md"]["ownership"] == "modified"
    res = cli.run("update", "--yes", cwd=project)
    assert res.exit_code == 0, res.output
    text = readme.read_text()
    assert text.startswith("# Beta\n") and "line a, edited by me\n" in text and "the end, version 2\n" in text
    assert "_commit: v3.0.0\n" in (project / ".copier-answers.yml").read_text()


def test_adopt_without_answers_file_is_refused(cli: Cli, template: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    res = cli.run("adopt", str(template), "--json", cwd=project)
    assert res.error_code() == "COPIER_ADOPT_NO_ANSWERS", res.output


def test_update_runs_migrations_only_with_trust(cli: Cli, task_template: Path, tmp_path: Path) -> None:
    project = tmp_path / "proj"
    res = cli.run("install", f"{task_template}@v1.0.0", project, "--defaults", "--trust")
    assert res.exit_code == 0, res.output
    refused = cli.run("update", "--yes", "--json", cwd=project)
    assert refused.error_code() == "COPIER_UNTRUSTED"
    assert refused.json()["error"]["details"]["features"] == ["migrations", "tasks"]
    res = cli.run("update", "--yes", "--trust", cwd=project)
    assert res.exit_code == 0, res.output
    assert (project / "migrated.txt").read_text() == "migrated\n"


def test_update_bad_data_is_a_typed_error(cli: Cli, installed: Path) -> None:
    before = snapshot(installed)
    res = cli.run("update", "--yes", "--data", "count=many", "--json", cwd=installed)
    assert res.error_code() == "COPIER_ANSWER_INVALID", res.output
    assert snapshot(installed) == before
