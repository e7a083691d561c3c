"""A bare hub and three machines (clones) syncing one small vault with ``shardpy sync``.

git runs with the private configuration of tests/gitsync/kit.py; shardpy
runs in-process through the CLI (tests/shardkit.py ``Cli``), and git's merges
call the driver ``shardpy sync --yes`` registered (``git setup``).
"""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path
from typing import Any

from tests.gitsync.kit import git
from tests.shardkit import Cli

MACHINES = ("a", "b", "c")
# The smallest state status accepts: a vault with no shard files, only the user's notes.
STATE = (
    '{"files": {}, "install_date": "2026-01-01T00:00:00Z", "modules": {}, '
    '"shard": "test", "source": "local", "version": "1.0.0"}\n'
)


class Fleet:
    def __init__(self, root: Path, cli: Cli) -> None:
        self.root = root
        self.cli = cli
        self.hub = root / "hub.git"
        self.machines = {m: root / m for m in MACHINES}

    def start(self, files: dict[str, str] | None = None) -> None:
        """Machine a makes the vault, the hub (init-seed) and pushes; b and c clone and sync."""
        a = self.machines["a"]
        (a / ".shardmind").mkdir(parents=True)
        (a / ".shardmind/state.json").write_text(STATE, encoding="utf-8")
        for rel, text in (files or {}).items():
            self.write("a", rel, text)
        git(a, "init", "--quiet")
        self.shardpy("a", "sync", "init-seed", str(self.hub))
        self.shardpy("a", "sync", "add-remote", "origin", str(self.hub))
        self.sync("a")
        for m in MACHINES[1:]:
            git(self.root, "clone", "--quiet", str(self.hub), str(self.machines[m]))
            self.sync(m)

    def shardpy(self, machine: str, *args: str, ok: bool = True) -> Any:
        res = self.cli.run(*args, cwd=self.machines[machine])
        if ok:
            assert res.exit_code == 0, res.output
        return res

    def sync(self, machine: str, *args: str, exit_code: int = 0) -> dict[str, Any]:
        res = self.shardpy(machine, "sync", "--yes", "--json", *args, ok=False)
        assert res.exit_code == exit_code, res.output
        data = res.json()
        assert isinstance(data, dict)
        return data

    def settle(self, passes: int = 6) -> int:
        """Sync each machine in turn until a whole pass changes nothing; the passes it took."""
        for n in range(1, passes + 1):
            quiet = True
            for m in MACHINES:
                report = self.sync(m)
                if report["commit"] or any(r["merged"] or r["pushed"] for r in report["remotes"]):
                    quiet = False
                assert all(r["status"] == "ok" for r in report["remotes"]), report
            if quiet and len({self.head(m) for m in MACHINES}) == 1:
                return n
        raise AssertionError(f"not quiet after {passes} passes")

    def head(self, machine: str) -> str:
        return git(self.machines[machine], "rev-parse", "HEAD").stdout.strip()

    def write(self, machine: str, rel: str, text: str) -> None:
        target = self.machines[machine] / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8", newline="")

    def read(self, machine: str, rel: str) -> str:
        return (self.machines[machine] / rel).read_text(encoding="utf-8")

    def notes(self, machine: str) -> list[str]:
        root = self.machines[machine]
        return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.md") if ".git" not in p.parts)

    def tree(self, machine: str) -> dict[str, bytes]:
        """Every file git tracks on ``machine``, as the work tree holds it."""
        root = self.machines[machine]
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True
        ).stdout.split("\0")
        return {p: (root / p).read_bytes() for p in listed if p}

    def clean(self, machine: str) -> bool:
        return git(self.machines[machine], "status", "--porcelain").stdout == ""

    def race_pushes(self, machine: str, rival: str, *, once: bool) -> Path:
        """``machine``'s pre-push hook makes ``rival`` commit and push first (once, or every time),
        so ``machine``'s push is rejected; each race appends a line to the returned file."""
        hook = self.machines[machine] / ".git/hooks/pre-push"
        races = self.root / "races"
        hook.write_text(
            "#!/bin/sh\n"
            + (f'[ -e "{races}" ] && exit 0\n' if once else "")
            + f'echo x >> "{races}"\n'
            + f'cd "{self.machines[rival]}" && echo race >> notes/race.md\n'
            + "git add -A && git commit -qm race\n"
            + "git push -q origin main\n",
            encoding="utf-8",
        )
        hook.chmod(hook.stat().st_mode | stat.S_IXUSR)
        return races
