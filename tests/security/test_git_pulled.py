"""Issue 24 item A: what a `git pull` brings never runs as code through the merge driver.

Real git: a bare hub, two clones set up with `shardpy git setup`, real pulls
calling the driver git was told to run.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.gitsync.setup import driver_command
from tests.gitsync.kit import Mesh, git, git_env
from tests.shardkit import Cli, run_shardpy

NOTE = "# A\n\none\ntwo\nthree\nfour\nfive\nsix\n"


@pytest.fixture
def mesh(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Mesh:
    git_env(monkeypatch, tmp_path / "home")
    m = Mesh(tmp_path, cli)
    m.release("1.0.0", {"brain/Guide.md": "# Guide\n"})
    m.start()
    m.write(m.a, "a.md", NOTE)
    m.commit(m.a, "a note")
    m.push(m.a)
    assert m.pull(m.b).returncode == 0
    return m


def _planted(marker: Path) -> str:
    # Imported instead of the package, it leaves a mark and exits 0: git would take
    # ours as the merge (the other side's line dropped without a conflict).
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('imported')\n"


def _edit(mesh: Mesh, machine: Path, old: str, new: str, message: str) -> None:
    mesh.write(machine, "a.md", mesh.read(machine, "a.md").replace(old, new))
    mesh.commit(machine, message)


def _both_kept_or_conflict(mesh: Mesh, pulled_ok: bool, *lines: str) -> None:
    text = mesh.read(mesh.b, "a.md")
    if pulled_ok:
        assert all(line in text for line in lines), text
    else:
        assert "a.md" in mesh.unmerged(mesh.b) and "<<<<<<<" in text


def test_a_pulled_shardpy_py_never_runs_in_the_driver(mesh: Mesh, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    a, b = mesh.a, mesh.b
    mesh.write(a, "shardpy.py", _planted(marker))
    _edit(mesh, a, "one", "one (from A)", "A: a module at the vault root, an edit")
    mesh.push(a)
    _edit(mesh, b, "six", "six (from B)", "B: an edit")
    first = mesh.pull(b)
    assert (b / "shardpy.py").is_file()
    _both_kept_or_conflict(mesh, first.returncode == 0, "one (from A)", "six (from B)")
    assert first.returncode == 0, first.stdout + first.stderr

    # The second pull: shardpy.py now sits in the work tree git runs the driver from.
    mesh.push(b)
    assert mesh.pull(a).returncode == 0
    _edit(mesh, a, "two", "two (from A)", "A: another edit")
    mesh.push(a)
    _edit(mesh, b, "five", "five (from B)", "B: another edit")
    second = mesh.pull(b)
    assert not marker.exists(), "the merge driver imported shardpy.py from the work tree"
    _both_kept_or_conflict(mesh, second.returncode == 0, "two (from A)", "five (from B)")
    assert second.returncode == 0, second.stdout + second.stderr


OLD_COMMAND = "{exe} -m shardpy merge-file --driver %O %A %B %P"


def test_status_flags_the_old_driver_command_and_setup_replaces_it(mesh: Mesh) -> None:
    b = mesh.b
    git(b, "config", "merge.shardpy.driver", OLD_COMMAND.format(exe=shlex.quote(sys.executable)))
    st = mesh.status(b)["git"]
    assert st["driver_installed"] is False and st["driver_unsafe"] is True
    assert "shardpy git setup" in st["hint"]
    shown = run_shardpy("status", cwd=b)
    assert "not shardpy's own" in shown.stdout and "shardpy git setup" in shown.stdout

    git(b, "config", "--add", "merge.shardpy.driver", "sh -c 'echo second'")  # a key with two values
    again = run_shardpy("git", "setup", "--json", cwd=b)
    assert again.returncode == 0, again.stderr
    assert git(b, "config", "--get-all", "merge.shardpy.driver").stdout.strip() == driver_command()
    st = mesh.status(b)["git"]
    assert st["driver_installed"] is True and st["driver_unsafe"] is False and st["hint"] is None


def test_status_flags_a_pulled_gitattributes_routing_notes_to_another_driver(mesh: Mesh) -> None:
    a, b = mesh.a, mesh.b
    attrs = mesh.read(a, ".gitattributes")
    mesh.write(a, ".gitattributes", attrs + "*.md merge=other\n")
    mesh.write(a, "sub/.gitattributes", "notes/*.md merge=union\nx.md merge=evil\n")
    mesh.commit(a, "A: route notes elsewhere")
    mesh.push(a)
    assert mesh.pull(b).returncode == 0
    git(b, "config", "merge.other.driver", "cat %B > %A")  # a driver this machine happens to know

    st = mesh.status(b)["git"]
    routes = {(r["file"], r["driver"], r["configured"]) for r in st["foreign_merge_attributes"]}
    assert routes == {(".gitattributes", "other", True), ("sub/.gitattributes", "evil", False)}
    assert st["hint"] is not None
    shown = run_shardpy("status", cwd=b).stdout
    assert "merge=other" in shown and ".gitattributes" in shown


def test_the_driver_line_survives_git_and_the_shell_for_any_interpreter_path() -> None:
    from shardpy.gitsync.setup import is_own_driver

    exe = "/opt/my py/100%A/it's/python"
    line = driver_command(exe)
    assert is_own_driver(line)
    # git turns '%%' into '%' (and %A into its temporary file) before the shell splits the line.
    assert shlex.split(line.replace("%%", "%"))[:3] == [exe, "-I", "-m"]
    assert not is_own_driver(OLD_COMMAND.format(exe=shlex.quote(exe)))
    assert not is_own_driver("sh -c 'curl x | sh' merge-file --driver %O %A %B %P")


FAKE_PYTHON = """#!/bin/sh
[ "$1" = "-I" ] && exit 1
exec {python} "$@"
"""


def test_setup_registers_a_safe_form_this_python_can_run(tmp_path: Path) -> None:
    """A --user installation (no import in isolated mode) gets -E -P; no safe form: a typed error."""
    from shardpy.gitsync.setup import wanted_driver

    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON.format(python=shlex.quote(sys.executable)))
    fake.chmod(0o755)
    safe_path = driver_command(str(fake), ("-E", "-P"))
    assert wanted_driver(None, tmp_path, str(fake)) == safe_path
    assert wanted_driver(driver_command(str(fake), ()), tmp_path, str(fake)) == safe_path
    assert wanted_driver(safe_path, tmp_path, str(fake)) == safe_path  # already safe: kept

    fake.write_text("#!/bin/sh\nexit 1\n")
    with pytest.raises(ShardpyError) as err:
        wanted_driver(None, tmp_path, str(fake))
    assert err.value.code == "GIT_DRIVER_UNSAFE"
