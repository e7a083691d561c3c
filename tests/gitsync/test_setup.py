"""`shardpy git setup` and the git part of `shardpy status`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shardpy.gitsync.setup import BEGIN, driver_command, with_block
from tests.gitsync.kit import git, git_env
from tests.shardkit import Cli
from tests.update.kit import Scenario


@pytest.fixture
def vault(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Path:
    git_env(monkeypatch, tmp_path / "home")
    sc = Scenario(tmp_path, cli)
    sc.shard("1.0.0", {"brain/Note.md": "# Note\n"})
    sc.install("--defaults")
    return sc.vault


def test_not_a_repository_is_a_typed_error(cli: Cli, vault: Path) -> None:
    res = cli.run("git", "setup", "--json", cwd=vault)
    assert res.exit_code == 1 and res.error_code() == "GIT_NOT_A_REPO"


def test_outside_a_vault_is_a_typed_error(cli: Cli, tmp_path: Path) -> None:
    res = cli.run("git", "setup", str(tmp_path), "--json", cwd=tmp_path)
    assert res.error_code() == "VAULT_NOT_FOUND"


def test_setup_is_planned_applied_and_idempotent(cli: Cli, vault: Path) -> None:
    git(vault, "init", "--quiet")
    (vault / ".gitignore").write_text("my-own-ignore\n")
    (vault / ".shardmind/update-check.json").write_text("{}")
    git(vault, "add", "-A")
    git(vault, "commit", "--quiet", "-m", "first")

    dry = cli.run("git", "setup", "--dry-run", "--json", cwd=vault).json()
    assert dry["dry_run"] and dry["changed"]
    kinds = {(c["kind"], c["target"]) for c in dry["changes"]}
    assert {("config", "merge.shardpy.driver"), ("config", "merge.shardpy.name")} <= kinds
    assert {("file", ".gitattributes"), ("file", ".gitignore")} <= kinds
    assert ("untrack", ".shardmind/update-check.json") in kinds
    assert not (vault / ".gitattributes").exists()
    assert git(vault, "config", "--get", "merge.shardpy.driver", ok=False).returncode == 1

    done = cli.run("git", "setup", cwd=vault)
    assert done.exit_code == 0 and "merge.shardpy.driver" in done.stdout
    assert git(vault, "config", "--get", "merge.shardpy.driver").stdout.strip() == driver_command()
    attrs = (vault / ".gitattributes").read_text()
    assert (
        "*.md merge=shardpy" in attrs
        and "/.shardmind/imports/ledger.sqlite3 merge=shardpy -text -diff" in attrs
    )
    ignore = (vault / ".gitignore").read_text()
    assert ignore.startswith("my-own-ignore\n") and "/.shardmind/update-check.json" in ignore
    assert (vault / ".shardmind/update-check.json").is_file()  # untracked, not deleted
    assert ".shardmind/update-check.json" not in git(vault, "ls-files").stdout
    assert git(vault, "check-attr", "merge", "--", "notes/x.md").stdout.strip().endswith("merge: shardpy")

    again = cli.run("git", "setup", "--json", cwd=vault).json()
    assert again["changed"] is False and again["changes"] == []
    assert "nothing changed" in cli.run("git", "setup", cwd=vault).stdout


def test_block_is_replaced_in_place() -> None:
    first = with_block("mine\n", ["a"])
    assert first.startswith("mine\n") and BEGIN in first
    second = with_block(first + "after\n", ["b"])
    assert second == f"mine\n\n{BEGIN}\nb\n# shardpy:end\nafter\n"


def test_the_users_files_keep_their_line_ends_and_bytes(cli: Cli, vault: Path) -> None:
    """Read as text, a CRLF .gitignore (a Windows machine's) was written back LF in every line,
    the user's lines too, and one not in UTF-8 was a traceback: the block now follows the
    file's own line ends and every other byte stays as it was."""
    git(vault, "init", "--quiet")
    (vault / ".gitignore").write_bytes(b"*.log\r\nbuild/\r\n")
    (vault / ".gitattributes").write_bytes(b"caf\xe9.png binary\n")
    assert cli.run("git", "setup", cwd=vault).exit_code == 0
    ignore = (vault / ".gitignore").read_bytes()
    assert ignore.startswith(b"*.log\r\nbuild/\r\n\r\n" + BEGIN.encode() + b"\r\n")
    assert ignore.count(b"\n") == ignore.count(b"\r\n")
    attrs = (vault / ".gitattributes").read_bytes()
    assert attrs.startswith(b"caf\xe9.png binary\n\n" + BEGIN.encode() + b"\n")
    assert cli.run("git", "setup", "--json", cwd=vault).json()["changed"] is False
    assert with_block("a\r\n", ["x"]) == f"a\r\n\r\n{BEGIN}\r\nx\r\n# shardpy:end\r\n"


def test_a_linked_or_odd_gitattributes_is_refused_before_it_is_read(cli: Cli, vault: Path) -> None:
    """A pull can bring .gitattributes as a link: to /dev/zero it was read without end (a
    MemoryError traceback, each sync round); setup never writes through a link, so it is refused
    before anything is read, the dry run too. A folder there was a traceback as well."""
    git(vault, "init", "--quiet")
    (vault / ".gitattributes").symlink_to("/dev/zero")
    for args in (("--dry-run",), ()):
        res = cli.run("git", "setup", *args, "--json", cwd=vault)
        assert res.exit_code == 1 and res.error_code() == "PATH_SYMLINK", res.output
    (vault / ".gitattributes").unlink()
    (vault / ".gitattributes").mkdir()
    res = cli.run("git", "setup", "--json", cwd=vault)
    assert res.exit_code == 1 and res.error_code() == "PATH_NOT_REGULAR", res.output
    assert git(vault, "config", "--get", "merge.shardpy.driver", ok=False).returncode == 1


def test_driver_command_uses_this_interpreter() -> None:
    assert driver_command().startswith(sys.executable)
    assert driver_command("").startswith("shardpy merge-file --driver %O %A %B %P")


def test_status_says_when_the_driver_is_missing(cli: Cli, vault: Path) -> None:
    assert "git" not in cli.run("status", "--json", cwd=vault).json()  # not a repository: nothing said
    git(vault, "init", "--quiet")
    st = cli.run("status", "--json", cwd=vault).json()
    assert st["git"]["driver_installed"] is False and "shardpy git setup" in st["git"]["hint"]
    assert "merge driver not installed" in cli.run("status", cwd=vault).stdout
    cli.run("git", "setup", cwd=vault)
    st = cli.run("status", "--json", cwd=vault).json()
    assert st["git"]["driver_installed"] is True and st["git"]["hint"] is None
    git(
        vault,
        "config",
        "merge.shardpy.driver",
        "/nowhere/python -I -m shardpy merge-file --driver %O %A %B %P",
    )
    st = cli.run("status", "--json", cwd=vault).json()
    assert st["git"]["driver_program_missing"] is True and st["git"]["driver_installed"] is False
    assert "program is gone" in cli.run("status", cwd=vault).stdout


def test_flagship_bootstrap_sets_up_the_driver_and_changes_no_file(
    cli: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git_env(monkeypatch, tmp_path / "home2")
    dest = tmp_path / "flagship"
    res = cli.run("install", str(dest), "--defaults", "--json", cwd=tmp_path)
    assert res.exit_code == 0, res.output
    hooks = {h["slot"]: h for h in res.json()["hooks"]}
    assert "shardpy registered as the merge driver" in hooks["bootstrap"]["stdout"]
    assert git(dest, "config", "--get", "merge.shardpy.driver").stdout.strip() == driver_command()
    st = cli.run("status", "--json", cwd=dest).json()
    assert st["git"]["driver_installed"] is True
    assert st["counts"]["modified"] == 0  # the shipped .gitattributes/.gitignore already hold the entries
    again = cli.run("git", "setup", "--json", cwd=dest).json()
    assert again["changed"] is False


def test_a_failed_transaction_leaves_the_git_config_as_it_was(cli: Cli, vault: Path) -> None:
    """Issue 27: the config joins the transaction's fate. A read-only .gitignore makes the files'
    transaction fail; the driver keys setup set before it are put back (unset, as they were)."""
    git(vault, "init", "--quiet")
    git(vault, "config", "merge.shardpy.name", "mine")  # a key that was set: restored, not unset
    (vault / ".gitignore").write_text("my-own-ignore\n")
    (vault / ".gitignore").chmod(0o444)
    res = cli.run("git", "setup", "--json", cwd=vault)
    assert res.exit_code == 1 and res.error_code() == "PATH_READ_ONLY", res.stdout
    assert git(vault, "config", "--get", "merge.shardpy.driver", ok=False).returncode == 1
    assert git(vault, "config", "--get", "merge.shardpy.name").stdout.strip() == "mine"
    assert not (vault / ".gitattributes").exists()
    assert (vault / ".gitignore").read_text() == "my-own-ignore\n"
    (vault / ".gitignore").chmod(0o644)
    assert cli.run("git", "setup", cwd=vault).exit_code == 0  # and it finishes once writable
    assert git(vault, "config", "--get", "merge.shardpy.driver").stdout.strip() == driver_command()
