"""Two machines syncing one vault through a bare repository, with real git.

``Mesh`` keeps a shard source (rewritten per release, as tests/update/kit.py
does), a bare repository and two clones, A and B. shardpy runs in-process
through the CLI; git runs as a child process, and git's merges call the
driver that ``shardpy git setup`` configured (this interpreter, ``-I -m shardpy``).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.shardkit import Cli
from tests.update.kit import Scenario

NOTE_V1 = """---
title: Note
tags: [brain]
---
# Note

alpha
beta
gamma

## Later

delta
epsilon
zeta
"""


def git_env(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    """A private git: no user or system config, fixed identity, branch main, merges on pull."""
    home.mkdir(parents=True, exist_ok=True)
    config = home / "gitconfig"
    config.write_text(
        "[user]\n\tname = Test\n\temail = test@example.invalid\n"
        "[init]\n\tdefaultBranch = main\n[pull]\n\trebase = false\n"
        "[advice]\n\tdetachedHead = false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("LC_ALL", "C")


def git(cwd: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=120)
    if ok:
        assert done.returncode == 0, f"git {' '.join(args)}: {done.stdout}{done.stderr}"
    return done


class Mesh:
    def __init__(self, root: Path, cli: Cli) -> None:
        self.root = root
        self.cli = cli
        self.sc = Scenario(root, cli)
        self.bare = root / "hub.git"
        self.a = root / "a"
        self.b = root / "b"

    # -- the shard -------------------------------------------------------
    def release(self, version: str, files: dict[str, str | bytes]) -> None:
        self.sc.shard(version, files)

    # -- shardpy ---------------------------------------------------------
    def shardpy(self, machine: Path, *args: str, ok: bool = True) -> Any:
        res = self.cli.run(*args, cwd=machine)
        if ok:
            assert res.exit_code == 0, res.output
        return res

    def status(self, machine: Path) -> dict[str, Any]:
        res = self.cli.run("status", "--json", cwd=machine)
        data = res.json()
        assert isinstance(data, dict)
        return data

    # -- the two machines ------------------------------------------------
    def start(self) -> None:
        """A installs, sets up git and pushes; B clones and sets up git."""
        res = self.cli.run("install", str(self.sc.src), str(self.a), "--defaults", cwd=self.root)
        assert res.exit_code == 0, res.output
        git(self.root, "init", "--quiet", "--bare", str(self.bare))
        git(self.a, "init", "--quiet")
        self.shardpy(self.a, "git", "setup")
        git(self.a, "remote", "add", "origin", str(self.bare))
        self.commit(self.a, "install")
        git(self.a, "push", "--quiet", "-u", "origin", "main")
        git(self.root, "clone", "--quiet", str(self.bare), str(self.b))
        self.shardpy(self.b, "git", "setup")

    def commit(self, machine: Path, message: str) -> None:
        git(machine, "add", "-A")
        git(machine, "commit", "--quiet", "--allow-empty", "-m", message)

    def push(self, machine: Path) -> None:
        git(machine, "push", "--quiet", "origin", "main")

    def pull(self, machine: Path) -> subprocess.CompletedProcess[str]:
        return git(machine, "pull", "--no-edit", "origin", "main", ok=False)

    def write(self, machine: Path, rel: str, text: str) -> None:
        target = machine / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="")

    def read(self, machine: Path, rel: str) -> str:
        return (machine / rel).read_text(encoding="utf-8")

    def unmerged(self, machine: Path) -> list[str]:
        out = git(machine, "diff", "--name-only", "--diff-filter=U").stdout
        return sorted(out.split())


def comparable(status: dict[str, Any]) -> dict[str, Any]:
    """A status report without what differs between two machines by design."""
    out = {k: v for k, v in status.items() if k not in ("vault", "updated_at", "update_available")}
    back: dict[str, Any] = json.loads(json.dumps(out))
    return back
