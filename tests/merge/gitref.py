"""Run the real ``git merge-file`` / ``git diff`` as the reference implementation."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Literal

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


class GitRef:
    """Calls git in a private temporary directory with all user/system config ignored."""

    def __init__(self, workdir: Path) -> None:
        git = shutil.which("git")
        if git is None:  # pragma: no cover - git is a test prerequisite
            raise RuntimeError("git is required for the merge reference tests")
        self.git = git
        self.dir = workdir
        home = workdir / "home"
        home.mkdir(exist_ok=True)
        self.env = {
            "PATH": os.environ.get("PATH", ""),
            "HOME": str(home),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
        }

    def _write(self, name: str, data: str | bytes) -> None:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        (self.dir / name).write_bytes(raw)

    def merge_file(
        self,
        base: str,
        user: str,
        shard: str,
        *,
        style: Literal["merge", "diff3"] = "merge",
        label: str = "shard",
    ) -> tuple[str, int]:
        """git's merged text and its number of conflicts."""
        self._write("user.txt", user)
        self._write("base.txt", base)
        self._write("shard.txt", shard)
        args = [self.git, "merge-file", "-p"]
        if style == "diff3":
            args.append("--diff3")
        args += ["-L", "yours", "-L", "base", "-L", label, "user.txt", "base.txt", "shard.txt"]
        proc = subprocess.run(args, cwd=self.dir, env=self.env, capture_output=True, check=False)
        if proc.returncode < 0 or proc.returncode >= 127:
            raise RuntimeError(proc.stderr.decode(errors="replace"))
        return proc.stdout.decode("utf-8"), proc.returncode

    def diff(self, old: str | bytes, new: str | bytes, *, context: int = 0) -> bytes:
        """``git diff --no-index`` (Myers, no indent heuristic) from the first hunk on."""
        self._write("old", old)
        self._write("new", new)
        proc = subprocess.run(
            [
                self.git,
                "diff",
                "--no-index",
                "--no-color",
                "--no-indent-heuristic",
                "--diff-algorithm=myers",
                f"-U{context}",
                "old",
                "new",
            ],
            cwd=self.dir,
            env=self.env,
            capture_output=True,
            check=False,
        )
        if proc.returncode not in (0, 1):
            raise RuntimeError(proc.stderr.decode(errors="replace"))
        out = proc.stdout
        at = out.find(b"\n@@ ")
        if at < 0:
            return b""
        # Drop the function-name context git appends to hunk headers.
        return re.sub(rb"(?m)^(@@ [^@]* @@).*$", rb"\1", out[at + 1 :])

    def hunks(self, old: str | bytes, new: str | bytes) -> list[tuple[int, int, int, int]]:
        """Hunks as (i1, i2, chg1, chg2) with 0-based starts, like xdiff's change script."""
        out = []
        for line in self.diff(old, new).split(b"\n"):
            m = _HUNK.match(line)
            if not m:
                continue
            s1, s2 = int(m[1]), int(m[3])
            c1 = int(m[2]) if m[2] is not None else 1
            c2 = int(m[4]) if m[4] is not None else 1
            out.append((s1 if c1 == 0 else s1 - 1, s2 if c2 == 0 else s2 - 1, c1, c2))
        return out
