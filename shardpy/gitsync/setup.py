"""``shardpy git setup``: make a vault's git repository merge with shardpy.

Planning reads only (git config, the two files, the index) and returns what
would change; applying sets the config with ``git config``, writes
``.gitattributes`` and ``.gitignore`` in one transaction, and takes the
machine-local records git was already tracking out of the index (the files
stay on disk). Running it again changes nothing.

The driver command is the absolute path of the Python running shardpy with
``-I -m shardpy``: git calls drivers from wherever it runs (a GUI client, a
cron job) where ``shardpy`` may not be on PATH, and the interpreter path
names exactly the installation that ran setup. Run setup again after moving
shardpy to another environment (``shardpy status`` says when the recorded
program is gone).

git runs the driver in the work tree, which a pull fills: a plain
``python -m shardpy`` puts that folder first on ``sys.path``, so a pulled
``shardpy.py`` would run instead of shardpy (issue 24 A;
tests/security/test_git_pulled.py). ``-I`` (isolated mode) never puts the
current folder, ``PYTHONPATH`` or the user's site-packages on the path. An
installation that lives in the user's site-packages (``pip install --user``)
does not import in isolated mode; setup checks by running the command once
and then registers ``-E -P`` instead (no current folder, no ``PYTHON*``
variables, the user's site-packages kept). Both forms are shardpy's own;
:func:`is_own_driver` is the one test of that, for setup and status.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

from shardpy.apply.transaction import Op
from shardpy.errors import ShardpyError
from shardpy.gitsync.repo import (
    DRIVER_KEY,
    DRIVER_NAME,
    NAME_KEY,
    Repo,
    config_get,
    config_set,
    git,
    open_repo,
)
from shardpy.vault import layout

BEGIN = "# shardpy:begin (written by `shardpy git setup`; lines inside are replaced when it runs)"
END = "# shardpy:end"
DRIVER_TITLE = "shardpy: notes by frontmatter key, vault records by entry"

ATTRIBUTES = [
    f"*.md merge={DRIVER_NAME}",
    f"/{layout.VALUES_FILE} merge={DRIVER_NAME}",
    f"/{layout.SIDECAR}/** merge={DRIVER_NAME}",
    f"/{layout.SIDECAR}/imports/ledger.sqlite3 merge={DRIVER_NAME} -text -diff",
]
# Machine-local: never shared, so never a conflict.
LOCAL = [
    layout.UPDATE_CHECK,
    layout.LOCAL,
    layout.JOURNAL,
    layout.BACKUPS + "/",
    f"{layout.SIDECAR}/imports/*/",
    f"{layout.SIDECAR}/imports/*.sqlite3-journal",
]
IGNORES = [f"/{p}" for p in LOCAL] + [".shardpy-tmp-*", ".shardpy-ledger-*"]


class ChangeKind(Enum):
    CONFIG = "config"
    FILE = "file"
    UNTRACK = "untrack"


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    target: str
    detail: str

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind.value, "target": self.target, "detail": self.detail}


@dataclass
class SetupPlan:
    vault: Path
    repo: Repo
    config: list[tuple[str, str]] = field(default_factory=list)
    ops: list[Op] = field(default_factory=list)
    untrack: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)
    dry_run: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.changes)

    def to_json(self) -> dict[str, Any]:
        return {
            "vault": str(self.vault),
            "repository": str(self.repo.top),
            "dry_run": self.dry_run,
            "changed": self.changed,
            "changes": [c.to_json() for c in self.changes],
        }


# Interpreter options that keep the work tree (and PYTHONPATH) off sys.path:
# isolated mode first; without the user's site-packages switched off second.
ISOLATED = ("-I",)
SAFE_PATH = ("-E", "-P")
_SAFE_FLAGS = (ISOLATED, SAFE_PATH)
DRIVER_ARGS = ("merge-file", "--driver", "%O", "%A", "%B", "%P")
PROBE_TIMEOUT_S = 60


def driver_command(executable: str | None = None, flags: tuple[str, ...] = ISOLATED) -> str:
    """What git runs: this interpreter with ``flags -m shardpy``, else ``shardpy`` from PATH."""
    exe = sys.executable if executable is None else executable
    if not (exe and os.path.isabs(exe)):
        return " ".join(("shardpy", *DRIVER_ARGS))
    # git expands %X in the whole line (a '%' of the path must be written '%%') and runs it
    # with the shell (shlex quoting).
    program = shlex.quote(exe).replace("%", "%%")
    return " ".join((program, *flags, "-m", "shardpy", *DRIVER_ARGS))


def driver_words(command: str) -> list[str] | None:
    """A driver line as the shell will split it (None when it does not parse)."""
    try:
        return shlex.split(command.replace("%%", "%"))
    except ValueError:
        return None


def is_own_driver(command: str) -> bool:
    """``command`` is one shardpy registers: an absolute interpreter with safe flags, or ``shardpy``."""
    words = driver_words(command)
    if not words:
        return False
    if words == ["shardpy", *DRIVER_ARGS]:
        return True
    for flags in _SAFE_FLAGS:
        n = len(flags)
        if words[1 : n + 1] == list(flags) and words[n + 1 :] == ["-m", "shardpy", *DRIVER_ARGS]:
            return os.path.isabs(words[0])
    return False


def _imports_shardpy(exe: str, flags: tuple[str, ...], cwd: Path) -> bool:
    try:
        done = subprocess.run(
            [exe, *flags, "-c", "import shardpy.cli.merge_file"],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def wanted_driver(current: str | None, cwd: Path, executable: str | None = None) -> str:
    """The command to register: ``current`` when it is already ours for this interpreter,
    else the first safe form this interpreter can run shardpy with (tried once, in ``cwd``)."""
    exe = sys.executable if executable is None else executable
    if not (exe and os.path.isabs(exe)):
        return driver_command(exe)
    forms = [driver_command(exe, flags) for flags in _SAFE_FLAGS]
    if current in forms:
        return current
    for flags, command in zip(_SAFE_FLAGS, forms, strict=True):
        if _imports_shardpy(exe, flags, cwd):
            return command
    raise ShardpyError(
        "GIT_DRIVER_UNSAFE",
        f"{exe} cannot import shardpy without the current folder or PYTHONPATH on its path",
        "Install shardpy into this Python (`pip install shardpy`, or `pip install -e .` in a checkout) "
        "and run `shardpy git setup` again: git runs the driver inside the work tree a pull fills, "
        "so it must never import from there.",
    )


def with_block(text: str | None, lines: list[str]) -> str:
    """``text`` with shardpy's block set to ``lines`` (replaced in place, else appended)."""
    block = "\n".join([BEGIN, *lines, END]) + "\n"
    if not text:
        return block
    rows = text.splitlines(keepends=True)
    starts = [i for i, r in enumerate(rows) if r.rstrip("\r\n") == BEGIN]
    ends = [i for i, r in enumerate(rows) if r.rstrip("\r\n") == END]
    if starts and ends and ends[-1] > starts[0]:
        return "".join(rows[: starts[0]]) + block + "".join(rows[ends[-1] + 1 :])
    sep = "" if text.endswith("\n") else "\n"
    return text + sep + "\n" + block


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _plan_file(plan: SetupPlan, name: str, lines: list[str]) -> None:
    current = _read(plan.vault / name)
    wanted = with_block(current, lines)
    if wanted != current:
        plan.ops.append(Op.write(name, wanted.encode("utf-8")))
        verb = "created" if current is None else "updated shardpy's block in"
        plan.changes.append(Change(ChangeKind.FILE, name, f"{verb} {name}"))


def tracked_local(vault: Path) -> list[str]:
    """Machine-local records git tracks in ``vault`` (setup and every sync commit untrack them)."""
    specs = [f":(glob){p}**" if p.endswith("/") else f":(glob){p}" for p in LOCAL]
    done = git(["ls-files", "-z", "--cached", "--", *specs], vault)
    return sorted(p for p in done.stdout.split("\0") if p)


def plan_setup(vault: Path, *, executable: str | None = None, dry_run: bool = False) -> SetupPlan:
    """What ``git setup`` would change in ``vault`` (reads only)."""
    plan = SetupPlan(vault=vault, repo=open_repo(vault), dry_run=dry_run)
    driver = config_get(plan.repo, DRIVER_KEY)
    wanted = wanted_driver(driver, plan.repo.git_dir, executable)
    for key, value in ((NAME_KEY, DRIVER_TITLE), (DRIVER_KEY, wanted)):
        current = driver if key == DRIVER_KEY else config_get(plan.repo, key)
        if current != value:
            plan.config.append((key, value))
            plan.changes.append(Change(ChangeKind.CONFIG, key, f"git config {key} {shlex.quote(value)}"))
    _plan_file(plan, ".gitattributes", ATTRIBUTES)
    _plan_file(plan, ".gitignore", IGNORES)
    plan.untrack = tracked_local(vault)
    for path in plan.untrack:
        plan.changes.append(
            Change(ChangeKind.UNTRACK, path, f"stopped tracking {path} (machine-local; kept on disk)")
        )
    return plan


def apply_setup(plan: SetupPlan) -> None:
    from shardpy.apply.transaction import Transaction

    for key, value in plan.config:
        config_set(plan.repo, key, value)
    if plan.ops:
        Transaction(plan.vault, "git-setup").run(plan.ops)
    if plan.untrack:
        git(["rm", "--cached", "--quiet", "--", *plan.untrack], plan.vault)


def setup(vault: Path, *, dry_run: bool = False) -> SetupPlan:
    from shardpy.vault.lock import vault_lock

    if dry_run:
        return plan_setup(vault, dry_run=True)
    if os.environ.get("SHARDPY_HOOK") == "1":
        # Run by a lifecycle hook (the flagship's bootstrap): the shardpy command
        # that runs the hook holds the vault's lock, or finished writing, and waits.
        plan = plan_setup(vault)
        apply_setup(plan)
        return plan
    with vault_lock(vault, command="git setup"):
        plan = plan_setup(vault)
        apply_setup(plan)
    return plan
