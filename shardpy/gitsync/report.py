"""The git part of ``shardpy status``: is the driver installed, what is left conflicted.

Only for a vault inside a git work tree (found without a subprocess); then
three quick git calls: the driver's config, the unmerged paths of the index,
and the Markdown notes holding conflict markers (``git grep``, which skips
what git ignores).
"""

from __future__ import annotations

import os
import shlex
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.gitsync.repo import DRIVER_KEY, find_repo_dir, git

SETUP_HINT = "run `shardpy git setup` so git merges notes and vault records with shardpy"


@dataclass
class GitReport:
    driver: str | None = None  # the configured command, None when not installed
    driver_program_missing: bool = False
    attributes: bool = False  # .gitattributes routes the vault's files to the driver
    unmerged: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    problem: str | None = None

    @property
    def installed(self) -> bool:
        return self.driver is not None and self.attributes and not self.driver_program_missing

    def hint(self) -> str | None:
        return None if self.installed else SETUP_HINT

    def to_json(self) -> dict[str, Any]:
        return {
            "driver_installed": self.installed,
            "driver": self.driver,
            "driver_program_missing": self.driver_program_missing,
            "attributes": self.attributes,
            "unmerged": self.unmerged,
            "conflict_markers": self.markers,
            "problem": self.problem,
            "hint": self.hint(),
        }


def _program_missing(command: str) -> bool:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return True
    if os.path.isabs(program):
        return not os.access(program, os.X_OK)
    return shutil.which(program) is None


def _lines(text: str) -> list[str]:
    return sorted({p for p in text.split("\0") if p})


def git_report(vault: Path) -> GitReport | None:
    """None when the vault is not in a git work tree."""
    if find_repo_dir(vault) is None:
        return None
    from shardpy.gitsync.setup import BEGIN

    report = GitReport()
    try:
        attrs = (vault / ".gitattributes").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        attrs = ""
    report.attributes = BEGIN in attrs
    try:
        done = git(["config", "--get", DRIVER_KEY], vault, check=False)
        if done.returncode == 0 and done.stdout.strip():
            report.driver = done.stdout.strip()
            report.driver_program_missing = _program_missing(report.driver)
        unmerged = ["diff", "--name-only", "--relative", "--diff-filter=U", "-z"]
        report.unmerged = _lines(git(unmerged, vault, check=False).stdout)
        grep = ["grep", "-l", "-z", "-I", "--all-match", "-e", "^<<<<<<< ", "-e", "^>>>>>>> ", "--", "*.md"]
        report.markers = _lines(git(grep, vault, check=False).stdout)
    except ShardpyError as exc:
        report.problem = exc.message
    return report
