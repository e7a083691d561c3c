"""Issue 26, item 4: symbolic links a copier template keeps (``_preserve_symlinks``, as the real
copier-uv template does for ``scripts/make``) are installed, recorded, updated and removed like
files when their target stays inside the project; a link whose target leaves it is refused
(``COPIER_SYMLINK``). The transaction creates them (journaled and rolled back like a write) and
never writes through one."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from shardpy.apply import transaction as tx
from shardpy.apply.transaction import Op, Transaction
from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_bytes
from tests.copier.conftest import _isolated  # noqa: F401  (autouse: cache, copier settings, git env)
from tests.copier.kit import (
    ANSWERS_BODY,
    ANSWERS_TEMPLATE,
    Entry,
    Executable,
    Link,
    build_template,
    copier_copy,
)
from tests.copier.kit import snapshot as project_snapshot
from tests.shardkit import Cli

V1: dict[str, Entry] = {
    "copier.yml": "_preserve_symlinks: true\nname:\n  type: str\n  default: demo\n",
    ANSWERS_TEMPLATE: ANSWERS_BODY,
    "README.md.jinja": "# {{ name }}\n",
    "tools/make.sh": Executable("#!/bin/sh\necho make\n"),
    "tools/build.sh": Executable("#!/bin/sh\necho build\n"),
    "scripts/make": Link("../tools/make.sh"),  # copier-uv's scripts/make: relative, inside the project
    "bin": Link("tools"),  # a link to a folder
    "here": Link("README.md"),
}
V2: dict[str, Entry] = {"scripts/make": Link("../tools/build.sh")}  # the template points the link elsewhere
V3: dict[str, Entry] = {"scripts/make": None}  # and then drops it


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_template(
        tmp_path_factory.mktemp("links") / "tpl", {"v1.0.0": V1, "v2.0.0": V2, "v3.0.0": V3}
    )


def _exec_bits(root: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    for dirpath, _dirs, names in os.walk(root):
        if ".shardmind" in Path(dirpath).relative_to(root).parts:
            continue
        for name in names:
            st = os.lstat(Path(dirpath, name))
            if stat.S_ISREG(st.st_mode):
                out[Path(dirpath, name).relative_to(root).as_posix()] = st.st_mode & 0o111
    return out


def _install(cli: Cli, template: Path, tmp_path: Path, tag: str = "v1.0.0") -> Path:
    project = tmp_path / "mine" / "proj"
    project.parent.mkdir()
    res = cli.run("install", f"{template}@{tag}", project, "--defaults", cwd=project.parent)
    assert res.exit_code == 0, res.output
    return project


def _copier(template: Path, tmp_path: Path, tag: str) -> Path:
    ref = tmp_path / f"copier-{tag}" / "proj"  # named like the project: _folder_name is the same
    ref.parent.mkdir()
    copier_copy(template, ref, tag)
    return ref


def test_install_equals_copier_copy(cli: Cli, template: Path, tmp_path: Path) -> None:
    project = _install(cli, template, tmp_path)
    ref = _copier(template, tmp_path, "v1.0.0")
    assert project_snapshot(project) == project_snapshot(ref)  # paths, bytes, links by their text
    assert os.readlink(project / "scripts/make") == "../tools/make.sh"
    assert os.readlink(project / "bin") == "tools"
    assert _exec_bits(project) == _exec_bits(ref) and _exec_bits(project)["tools/make.sh"] == 0o111
    files = json.loads((project / ".shardmind/state.json").read_text())["files"]
    record = files["scripts/make"]
    assert record["link"] is True and record["rendered_hash"] == sha256_bytes(b"../tools/make.sh")
    assert "link" not in files["README.md"]


def test_install_equals_copier_copy_when_copier_writes_the_render_itself(cli: Cli, tmp_path: Path) -> None:
    # A template with Jinja extensions of its own (copier-uv has three) is rendered by copier
    # alone into the scratch folder (docs/COPIER.md, "Speed"): its links are read from there.
    config = "_jinja_extensions:\n  - jinja2.ext.do\n" + str(V1["copier.yml"])
    tpl = build_template(tmp_path / "ext", {"v1.0.0": {**V1, "copier.yml": config}})
    project = tmp_path / "mine" / "proj"
    project.parent.mkdir()
    res = cli.run("install", f"{tpl}@v1.0.0", project, "--defaults", "--trust", cwd=project.parent)
    assert res.exit_code == 0, res.output
    ref = tmp_path / "copier" / "proj"
    ref.parent.mkdir()
    copier_copy(tpl, ref, "v1.0.0", unsafe=True)
    assert project_snapshot(project) == project_snapshot(ref)
    assert os.readlink(project / "scripts/make") == "../tools/make.sh"
    assert _exec_bits(project) == _exec_bits(ref)


def test_status_counts_links_as_managed(cli: Cli, template: Path, tmp_path: Path) -> None:
    project = _install(cli, template, tmp_path)
    report = cli.run("status", "--json", cwd=project).json()
    assert report["modified"] == [] and report["missing"] == []
    assert report["counts"]["managed"] == len(
        json.loads((project / ".shardmind/state.json").read_text())["files"]
    )
    (project / "here").unlink()
    (project / "here").symlink_to("tools/make.sh")  # the user points a link elsewhere: theirs now
    report = cli.run("status", "--json", cwd=project).json()
    assert [m["path"] for m in report["modified"]] == ["here"]


def test_update_retargets_then_removes_a_link(cli: Cli, template: Path, tmp_path: Path) -> None:
    project = _install(cli, template, tmp_path)
    script = (project / "tools/make.sh").read_bytes()
    res = cli.run("update", "--release", "v2.0.0", "--yes", "--json", cwd=project)
    assert res.exit_code == 0, res.output
    actions = {f["path"]: f["action"] for f in res.json()["files"]}
    assert actions["scripts/make"] == "update"
    assert os.readlink(project / "scripts/make") == "../tools/build.sh"
    assert (project / "tools/make.sh").read_bytes() == script  # the old target was never written through
    assert project_snapshot(project) == project_snapshot(_copier(template, tmp_path, "v2.0.0"))
    state = json.loads((project / ".shardmind/state.json").read_text())
    assert state["files"]["scripts/make"]["rendered_hash"] == sha256_bytes(b"../tools/build.sh")
    res = cli.run("update", "--release", "v3.0.0", "--yes", "--json", cwd=project)
    assert res.exit_code == 0, res.output
    assert {f["path"]: f["action"] for f in res.json()["files"]}["scripts/make"] == "delete"
    assert not os.path.lexists(project / "scripts/make")
    assert (project / "tools/make.sh").read_bytes() == script
    assert "scripts/make" not in json.loads((project / ".shardmind/state.json").read_text())["files"]
    assert cli.run("status", "--json", cwd=project).json()["modified"] == []


def test_a_link_you_changed_is_kept(cli: Cli, template: Path, tmp_path: Path) -> None:
    project = _install(cli, template, tmp_path)
    (project / "scripts/make").unlink()
    (project / "scripts/make").symlink_to("../tools/mine.sh")
    res = cli.run("update", "--release", "v2.0.0", "--yes", "--json", cwd=project)
    assert res.exit_code == 3, res.output  # both changed it: a conflict, never a text merge of link texts
    assert os.readlink(project / "scripts/make") == "../tools/mine.sh"
    res = cli.run("update", "--release", "v3.0.0", "--yes", "--json", cwd=project)
    assert os.readlink(project / "scripts/make") == "../tools/mine.sh"  # gone from the template: yours


def test_adopt_records_links_then_update_retargets(cli: Cli, template: Path, tmp_path: Path) -> None:
    project = _copier(template, tmp_path, "v1.0.0")
    before = project_snapshot(project)
    res = cli.run("adopt", str(template), "--json", cwd=project)
    assert res.exit_code == 0, res.output
    assert project_snapshot(project) == before
    assert (
        json.loads((project / ".shardmind/state.json").read_text())["files"]["scripts/make"]["link"] is True
    )
    assert cli.run("status", "--json", cwd=project).json()["modified"] == []
    res = cli.run("update", "--release", "v2.0.0", "--yes", cwd=project)
    assert res.exit_code == 0, res.output
    assert os.readlink(project / "scripts/make") == "../tools/build.sh"


@pytest.mark.parametrize(
    "links",
    [
        {"abs": Link("/etc/passwd")},
        {"up": Link("../outside.txt")},
        {"sub/deep": Link("../../outside.txt")},
        {"sub/norm": Link("x/../../../outside.txt")},
        # lexically "sub/x", but sub/root is the project itself, so its ".." is the parent
        {"sub/root": Link(".."), "via": Link("sub/root/../x")},
    ],
    ids=["absolute", "parent", "deep-parent", "normalised", "through-a-link"],
)
def test_a_link_leaving_the_project_is_refused(cli: Cli, tmp_path: Path, links: dict[str, Link]) -> None:
    tpl = build_template(tmp_path / "evil", {"v1.0.0": {**V1, **links}})
    project = tmp_path / "dest"
    res = cli.run("install", f"{tpl}@v1.0.0", project, "--defaults", "--json", cwd=tmp_path)
    assert res.exit_code != 0 and res.error_code() == "COPIER_SYMLINK", res.output
    assert not project.exists()


def test_a_link_through_a_link_of_yours_that_leaves_the_project_is_refused(
    cli: Cli, template: Path, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    (project / "scripts").mkdir(parents=True)
    (project / "tools").symlink_to(tmp_path)  # yours, leading out: scripts/make would follow it
    res = cli.run("install", f"{template}@v1.0.0", project, "--defaults", "--json", cwd=tmp_path)
    assert res.error_code() == "COPIER_SYMLINK", res.output
    assert sorted(os.listdir(project)) == ["scripts", "tools"] and os.listdir(project / "scripts") == []


def test_a_link_becomes_a_file_and_a_file_a_link(cli: Cli, tmp_path: Path) -> None:
    v1: dict[str, Entry] = {**V1, "swap/a": Link("../README.md"), "swap/b": "a file\n"}
    v2: dict[str, Entry] = {"swap/a": "now a file\n", "swap/b": Link("../README.md")}
    tpl = build_template(tmp_path / "swap", {"v1.0.0": v1, "v2.0.0": v2})
    project = _install(cli, tpl, tmp_path)
    res = cli.run("update", "--release", "v2.0.0", "--yes", cwd=project)
    assert res.exit_code == 0, res.output
    assert project_snapshot(project) == project_snapshot(_copier(tpl, tmp_path, "v2.0.0"))
    assert (project / "swap/a").read_text() == "now a file\n" and not (project / "swap/a").is_symlink()
    assert os.readlink(project / "swap/b") == "../README.md"
    assert cli.run("status", "--json", cwd=project).json()["modified"] == []


def _vault(tmp_path: Path) -> Path:
    root = tmp_path / "v"
    (root / ".shardmind").mkdir(parents=True)
    (root / "tools").mkdir()
    (root / "tools/make.sh").write_text("target\n")
    return root


def _read_only(root: Path) -> str:
    (root / "locked.txt").write_text("locked\n")
    (root / "locked.txt").chmod(0o444)
    return "locked.txt"


def test_link_op_is_rolled_back_like_a_write(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    (root / "file").write_text("a file the link replaces\n")
    (root / "old").symlink_to("tools/make.sh")
    ops = [
        Op.link("file", "tools/make.sh"),
        Op.link("old", "elsewhere"),
        Op.link("new/link", "../tools/make.sh"),
        Op.write(_read_only(root), b"refused\n"),  # refused mid-apply: everything is undone
    ]
    with pytest.raises(ShardpyError) as info:
        Transaction(root, "update").run(ops)
    assert info.value.code == "PATH_READ_ONLY"
    assert not (root / "file").is_symlink() and (root / "file").read_text() == "a file the link replaces\n"
    assert os.readlink(root / "old") == "tools/make.sh"
    assert not os.path.lexists(root / "new")
    assert (root / "tools/make.sh").read_text() == "target\n"


def test_link_ops_after_a_kill_are_rolled_back_by_recover(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _vault(tmp_path)
    (root / "old").symlink_to("tools/make.sh")
    (root / "dropped").symlink_to("tools/make.sh")
    monkeypatch.setattr(tx, "_rollback", lambda *a, **k: [])  # the process "dies" mid-apply
    with pytest.raises(ShardpyError):
        Transaction(root, "update").run(
            [Op.link("old", "new-target"), Op.drop_link("dropped"), Op.write(_read_only(root), b"x")]
        )
    monkeypatch.undo()
    assert os.readlink(root / "old") == "new-target"  # left as the killed run wrote it
    report = tx.recover(root)
    assert report is not None and report.action == "rolled-back"
    assert os.readlink(root / "old") == "tools/make.sh"
    assert os.readlink(root / "dropped") == "tools/make.sh"


def test_link_ops_commit(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    (root / "old").symlink_to("tools/make.sh")
    (root / "dropped").symlink_to("tools/make.sh")
    Transaction(root, "update").run(
        [Op.link("old", "tools/other"), Op.drop_link("dropped"), Op.link("a/b", "../tools/make.sh")]
    )
    assert os.readlink(root / "old") == "tools/other" and not os.path.lexists(root / "dropped")
    assert os.readlink(root / "a/b") == "../tools/make.sh"
    assert (root / "tools/make.sh").read_text() == "target\n"
    assert not (root / ".shardmind/journal.json").exists()


def test_a_link_op_never_writes_through_a_link_on_the_way(tmp_path: Path) -> None:
    root = _vault(tmp_path)
    (root / "bin").symlink_to("tools")
    with pytest.raises(ShardpyError) as info:
        Transaction(root, "update").run([Op.link("bin/make", "make.sh")])
    assert info.value.code == "PATH_SYMLINK"
    assert sorted(os.listdir(root / "tools")) == ["make.sh"]


@pytest.mark.parametrize("path", [".git/hooks/pre-commit", "notes/.git/config", ".shardmind/vault-id"])
def test_a_link_op_passes_the_planned_write_guard(tmp_path: Path, path: str) -> None:
    root = _vault(tmp_path)
    with pytest.raises(ShardpyError) as info:
        Transaction(root, "update").run([Op.link(path, "../tools/make.sh")])
    assert info.value.code == "PATH_RESERVED"
    assert not os.path.lexists(root / path)
    with pytest.raises(ShardpyError) as info:
        Transaction(root, "update").run([Op.drop_link(path)])
    assert info.value.code == "PATH_RESERVED"


def test_only_a_path_a_link_op_touched_may_be_a_link_at_recovery(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _vault(tmp_path)
    monkeypatch.setattr(tx, "_rollback", lambda *a, **k: [])  # the process "dies" mid-apply
    with pytest.raises(ShardpyError):
        Transaction(root, "update").run([Op.write("a.txt", b"x\n"), Op.write(_read_only(root), b"y")])
    monkeypatch.undo()
    (root / "a.txt").unlink()
    (root / "a.txt").symlink_to("tools/make.sh")  # a link where the journal wrote a file
    with pytest.raises(ShardpyError) as info:
        tx.recover(root)
    assert info.value.code == "TRANSACTION_JOURNAL_INVALID"  # as before links were journaled
    assert os.readlink(root / "a.txt") == "tools/make.sh"
