"""``shardpy git setup``: make a vault's git repository merge with shardpy.

Planning (``plan/gitsetup.py``, pure over :class:`RepoView`) reads only (git
config, the two files, the index) and returns what would change; applying, in
the write session, sets the config with ``git config``, writes
``.gitattributes`` and ``.gitignore`` in one transaction -- a transaction that
fails puts the config back as it was (issue 27; tests/gitsync/test_setup.py) --
and takes the machine-local records git was already tracking out of the index
(the files stay on disk). Running it again changes nothing. A kill between the
config and the transaction leaves only the config set: harmless (no attribute
routes a file to the driver yet), and the next run finishes.

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
from pathlib import Path

from shardpy.apply.session import Session, borrowed, session
from shardpy.apply.transaction import Op
from shardpy.errors import ShardpyError
from shardpy.fsutil import read_regular, symlink_refused
from shardpy.gitsync.repo import DRIVER_KEY, Repo, config_get, config_set, git, only_value, open_repo
from shardpy.plan.gitsetup import (
    ATTRIBUTES,
    BEGIN,
    DRIVER_TITLE,
    END,
    IGNORES,
    LOCAL,
    Change,
    ChangeKind,
    ConfigChange,
    SetupPlan,
    with_block,
)
from shardpy.plan.gitsetup import plan_setup as _plan

# Planning's names, kept importable here for setup's callers (status, sync, the bench).
__all__ = [
    "ATTRIBUTES",
    "BEGIN",
    "DRIVER_TITLE",
    "END",
    "IGNORES",
    "LOCAL",
    "Change",
    "ChangeKind",
    "SetupPlan",
    "with_block",
]


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


def tracked_local(vault: Path) -> list[str]:
    """Machine-local records git tracks in ``vault`` (setup and every sync commit untrack them)."""
    specs = [f":(glob){p}**" if p.endswith("/") else f":(glob){p}" for p in LOCAL]
    done = git(["ls-files", "-z", "--cached", "--", *specs], vault)
    return sorted(p for p in done.stdout.split("\0") if p)


class RepoView:
    """The repository as ``plan.gitsetup`` sees it: read here only (each config key once).
    ``config``: the local config already read (``repo.local_config``: sync's plan reads it once)."""

    def __init__(self, vault: Path, repo: Repo, config: dict[str, list[str]] | None = None) -> None:
        self.vault = vault
        self.repo = repo
        self._listed = config
        self._config: dict[str, str | None] = {}

    def config(self, key: str) -> str | None:
        if key not in self._config:
            listed = self._listed
            self._config[key] = config_get(self.repo, key) if listed is None else only_value(listed, key)
        return self._config[key]

    def text(self, path: str) -> str | None:
        """The file as written: no newline translation (CRLF kept), bytes that are not UTF-8 kept.
        A pull can bring the file as a link (to /dev/zero: a read without end, a MemoryError
        traceback) and setup never writes through one: refused here, before anything is read
        (tests/gitsync/test_setup.py)."""
        try:
            return read_regular(self.vault / path).decode("utf-8", "surrogateescape")
        except FileNotFoundError:
            return None
        except OSError as exc:
            if (self.vault / path).is_symlink():
                raise symlink_refused(path) from exc
            raise ShardpyError(
                "PATH_NOT_REGULAR",
                f"{path} is not a regular file ({exc.strerror or exc})",
                f"Move {path} out of the way (git reads it as a file) and run again.",
                path=path,
            ) from exc

    def tracked_local(self) -> list[str]:
        return tracked_local(self.vault)


def plan_setup(
    vault: Path,
    *,
    executable: str | None = None,
    dry_run: bool = False,
    repo: Repo | None = None,
    config: dict[str, list[str]] | None = None,
) -> SetupPlan:
    """What ``git setup`` would change in ``vault`` (reads only). ``repo`` and ``config``: what
    the caller already read of the repository (sync's plan: no second ``rev-parse``, no
    ``git config`` per key)."""
    repo = open_repo(vault) if repo is None else repo
    view = RepoView(vault, repo, config)
    driver = wanted_driver(view.config(DRIVER_KEY), repo.git_dir, executable)
    return _plan(view, vault=str(vault), repository=str(repo.top), driver=driver, dry_run=dry_run)


def apply_setup(plan: SetupPlan, writer: Session) -> None:
    """Config, then the files' transaction (the config put back when it fails), then the index."""
    vault = Path(plan.vault)
    repo = open_repo(vault)
    for change in plan.config:
        config_set(repo, change.key, change.value)
    try:
        if plan.files:
            writer.run([Op.write(f.path, f.data) for f in plan.files], label="git-setup")
    except BaseException:
        _put_back(repo, plan.config)
        raise
    if plan.untrack:
        git(["rm", "--cached", "--quiet", "--", *plan.untrack], vault)


def _put_back(repo: Repo, changes: list[ConfigChange]) -> None:
    """Undo the config a failed setup set (issue 27): each key as it was when planned."""
    for change in reversed(changes):
        if change.old is None:
            git(["config", "--local", "--unset-all", change.key], repo.top, check=False)
        else:
            config_set(repo, change.key, change.old)


def setup(vault: Path, *, dry_run: bool = False) -> SetupPlan:
    if dry_run:
        return plan_setup(vault, dry_run=True)
    if os.environ.get("SHARDPY_HOOK") == "1":
        # Run by a lifecycle hook (the flagship's bootstrap): the shardpy command
        # that runs the hook holds the vault's lock, or finished writing, and waits.
        plan = plan_setup(vault)
        apply_setup(plan, borrowed(vault, "git setup"))
        return plan
    with session(vault, "git setup") as writer:
        plan = plan_setup(vault)
        apply_setup(plan, writer)
    return plan
