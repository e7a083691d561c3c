"""Issue 27: one git runner (shardpy.gitrun) for gitsync and git sources: the same
quiet environment, and a missing or stuck git is each caller's typed error."""

from __future__ import annotations

import ast
import errno
import json
import os
import stat
import sys
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.gitsync import repo as gitsync_repo
from shardpy.sources import git as source_git

ROOT = Path(__file__).resolve().parents[2] / "shardpy"
# Spawning git elsewhere: status's tool probe runs `git --version` beside `node --version`.
# (sync's in-process merge feeds git's plumbing through gitsync.repo.git_bytes: issue 27.)
ALLOWED = {"gitrun.py", "flows/status.py"}


def _fake_git(folder: Path, body: str) -> None:
    """A `git` on PATH that records its environment, then runs ``body`` (Python)."""
    folder.mkdir(exist_ok=True)
    script = folder / "git"
    record = folder / "env.json"
    script.write_text(
        f"#!{sys.executable}\nimport json, os, sys, time\n"
        f"open({str(record)!r}, 'w').write(json.dumps(dict(os.environ)))\n{body}\n"
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def _seen(folder: Path) -> dict[str, str]:
    seen = json.loads((folder / "env.json").read_text())
    assert isinstance(seen, dict)
    return seen


def _repo(tmp_path: Path) -> gitsync_repo.Repo:
    return gitsync_repo.Repo(tmp_path, tmp_path / ".git")


def _call(caller: str, folder: Path, *, timeout: float = 300) -> None:
    """One git run by ``caller``: gitsync's runner, its cat-file reader, its plumbing feeder (sync's
    in-process merge), or the git source's."""
    if caller == "gitsync.git":
        gitsync_repo.git(["status"], folder)
    elif caller == "gitsync.git_bytes":
        gitsync_repo.git_bytes(["update-index", "--index-info"], folder, input=b"", timeout=timeout)
    elif caller == "gitsync.cat_blobs":
        gitsync_repo.cat_blobs(_repo(folder), ["HEAD:a.md"], timeout=timeout)
    else:
        source_git.run_git(["ls-remote", "x"], what="Listing", location="x", cwd=folder)


def test_only_gitrun_spawns_git() -> None:
    spawning = set()
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            first = node.elts[0] if isinstance(node, ast.List) and node.elts else None
            if isinstance(first, ast.Constant) and first.value == "git":
                spawning.add(path.relative_to(ROOT).as_posix())
    assert spawning <= ALLOWED, spawning - ALLOWED


@pytest.mark.parametrize(
    "caller", ["gitsync.git", "gitsync.git_bytes", "gitsync.cat_blobs", "sources.run_git"]
)
def test_every_caller_runs_git_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caller: str) -> None:
    bin_dir = tmp_path / "bin"
    _fake_git(bin_dir, "sys.exit(0)")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("LC_ALL", "fr_FR.UTF-8")
    monkeypatch.delenv("GIT_TERMINAL_PROMPT", raising=False)
    _call(caller, tmp_path)
    seen = _seen(bin_dir)
    assert seen["GIT_TERMINAL_PROMPT"] == "0" and seen["LC_ALL"] == "C"


def test_a_configured_ssh_command_is_not_overridden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sources run ssh in BatchMode (never a prompt) through GIT_SSH_COMMAND, which git puts above
    `core.sshCommand`: a user's own command (a key for a private shard repository) was ignored."""
    from tests.gitsync.kit import git_env

    git_env(monkeypatch, tmp_path / "home")
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    monkeypatch.delenv("GIT_SSH", raising=False)
    ssh = "git@example.invalid:shards/vault.git"
    assert source_git._env(ssh)["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes"
    config = tmp_path / "home/gitconfig"
    config.write_text(config.read_text() + "[core]\n\tsshCommand = ssh -i ~/.ssh/work_key\n")
    assert "GIT_SSH_COMMAND" not in source_git._env(ssh)
    assert "GIT_SSH_COMMAND" not in source_git._env("ssh://example.invalid/vault.git")
    # A location git reaches without ssh: its config is not asked (no process), nothing changes.
    for other in ("https://example.invalid/vault.git", "file:///srv/vault.git", "/srv/vault.git"):
        assert not source_git._uses_ssh(other)
        assert source_git._env(other)["GIT_SSH_COMMAND"] == "ssh -o BatchMode=yes"
    monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -v")  # the user's variable: theirs as well
    assert source_git._env(ssh)["GIT_SSH_COMMAND"] == "ssh -v"


@pytest.mark.parametrize(
    ("caller", "code"),
    [
        ("gitsync.git", "GIT_NOT_INSTALLED"),
        ("gitsync.git_bytes", "GIT_NOT_INSTALLED"),
        ("gitsync.cat_blobs", "GIT_NOT_INSTALLED"),
        ("sources.run_git", "SOURCE_GIT_NOT_INSTALLED"),
    ],
)
def test_a_missing_git_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caller: str, code: str
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(ShardpyError) as raised:
        _call(caller, tmp_path)
    assert raised.value.code == code


CALLERS = ["gitsync.git", "gitsync.git_bytes", "gitsync.cat_blobs", "sources.run_git"]


@pytest.mark.parametrize("caller", CALLERS)
def test_a_folder_gone_is_not_a_missing_git(tmp_path: Path, caller: str) -> None:
    """A vault deleted under `sync --watch`: the watcher said "The git command is not installed"
    (subprocess reports a missing cwd as a missing program)."""
    gone = tmp_path / "gone"
    with pytest.raises(ShardpyError) as raised:
        _call(caller, gone)
    assert raised.value.code == "IO_ERROR" and "no longer exists" in raised.value.message


@pytest.mark.parametrize(
    ("caller", "code"),
    [
        ("gitsync.git", "GIT_FAILED"),
        ("gitsync.git_bytes", "GIT_FAILED"),
        ("gitsync.cat_blobs", "GIT_FAILED"),
        ("sources.run_git", "SOURCE_UNREACHABLE"),
    ],
)
def test_a_git_that_does_not_finish_is_a_typed_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caller: str, code: str
) -> None:
    bin_dir = tmp_path / "bin"
    _fake_git(bin_dir, "time.sleep(30)")
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(gitsync_repo, "GIT_TIMEOUT_S", 0.5)
    monkeypatch.setattr(source_git, "GIT_TIMEOUT_S", 0.5)
    with pytest.raises(ShardpyError) as raised:
        _call(caller, tmp_path, timeout=0.5)
    assert raised.value.code == code and "did not finish within 0.5 s" in raised.value.message


def test_cat_blobs_keeps_step_past_a_tree_and_a_name_ending_in_blob(tmp_path: Path) -> None:
    """A folder asked as a blob (a path that is a folder at HEAD, a file on disk) and a missing
    name ending in " blob" (a new note so named): each is None, and every answer after it is
    still the right one (a helper's review: the tree put the rest out of step, the name raised)."""
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "in.md").write_text("inside\n")
    (tmp_path / "a.md").write_text("alpha\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    specs = ["HEAD:dir", "HEAD:a.md", "HEAD:x blob", "HEAD:dir/in.md", "HEAD:gone.md"]
    got = gitsync_repo.cat_blobs(_repo(tmp_path), specs)
    assert got == {
        "HEAD:dir": None,
        "HEAD:a.md": b"alpha\n",
        "HEAD:x blob": None,
        "HEAD:dir/in.md": b"inside\n",
        "HEAD:gone.md": None,
    }


@pytest.mark.parametrize("through", ["memory files", "pipes", "pipes, memory files refused"])
def test_cat_blobs_reads_megabytes_the_same_through_memory_files_or_pipes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through: str
) -> None:
    """gitrun.run_bytes feeds git and reads its answer through memory files where the platform
    has them (Linux: a sync merging 500 notes spent 6.4 ms of its own CPU in the pipes' poll
    loop), else through pipes: the same bytes either way, larger than a pipe holds."""
    import subprocess

    if through == "pipes":
        monkeypatch.delattr("os.memfd_create", raising=False)
    elif through.endswith("refused"):  # a sandbox's seccomp, an old kernel: ENOSYS or EPERM

        def refused(name: str, flags: int = 0) -> int:
            raise OSError(errno.ENOSYS, "Function not implemented")

        monkeypatch.setattr(os, "memfd_create", refused, raising=False)
    elif not hasattr(os, "memfd_create"):
        pytest.skip("no memory files on this platform")

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    big = bytes(range(256)) * 12_000  # 3 MB: many times a pipe's buffer
    (tmp_path / "big.bin").write_bytes(big)
    (tmp_path / "a.md").write_text("alpha\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    specs = ["HEAD:big.bin", "HEAD:a.md", "HEAD:gone.md"] * 3
    got = gitsync_repo.cat_blobs(_repo(tmp_path), specs)
    assert got == {"HEAD:big.bin": big, "HEAD:a.md": b"alpha\n", "HEAD:gone.md": None}
