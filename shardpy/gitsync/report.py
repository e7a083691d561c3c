"""The git part of ``shardpy status``: is the driver installed, what is left conflicted.

Only for a vault inside a git work tree (found without a subprocess); then
four quick git calls: the merge drivers' config, the tracked
``.gitattributes`` files, the unmerged paths of the index, and the Markdown
notes holding conflict markers (``git grep``, which skips what git ignores).

Two things a pull or an old setup can leave that make git run something
other than shardpy on a merge are flagged (issue 24 A,
tests/security/test_git_pulled.py): a ``merge.shardpy.driver`` command that
is not one shardpy registers (an older shardpy's ``python -m shardpy``
imports from the work tree), and a ``.gitattributes`` line sending files to
another driver — a pulled line can route notes to any driver this machine
has configured. git's built-in drivers (``text``, ``binary``, ``union``)
run no program and are not flagged.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.gitsync.repo import find_repo_dir, git, local_config, open_repo

SETUP_HINT = "run `shardpy git setup` so git merges notes and vault records with shardpy"
UNSAFE_HINT = (
    "the merge driver command is not shardpy's own (an older shardpy registered one that can run "
    "code from the work tree); run `shardpy git setup` to replace it"
)
ROUTES_HINT = (
    "check the .gitattributes lines that send files to a merge driver other than shardpy's: "
    "a pulled line can route notes to any driver this machine has configured"
)
BUILTIN_DRIVERS = frozenset({"text", "binary", "union"})
# A pulled repository decides how many attribute files there are and how big: read a bounded part.
MAX_ATTRIBUTE_FILES = 100
MAX_ATTRIBUTE_BYTES = 1 << 20
MAX_ROUTES = 50


@dataclass(frozen=True)
class AttributeRoute:
    """A ``.gitattributes`` line naming a merge driver that is not shardpy's."""

    file: str  # relative to the repository's top folder
    line: int
    driver: str
    command: str | None  # what this machine runs for it; None: not configured (git's text merge)

    def to_json(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "driver": self.driver,
            "configured": self.command is not None,
            "command": self.command,
        }


@dataclass(frozen=True)
class RemoteStatus:
    name: str
    ahead: int | None  # None: never fetched (or the branch is not there)
    behind: int | None
    last_ok: str | None
    last_error: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ahead": self.ahead,
            "behind": self.behind,
            "last_ok": self.last_ok,
            "last_error": self.last_error,
        }


@dataclass(frozen=True)
class KeptFile:
    """A file both machines changed that a sync merge resolved as this machine's whole."""

    path: str  # vault-relative
    commit: str  # the merge commit: the other machine's version is its second parent's
    in_repository: str  # the path from the repository's top (for `git show COMMIT^2:PATH`)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "commit": self.commit, "in_repository": self.in_repository}


def show_command(commit: str, in_repository: str) -> str:
    """The command that prints the other machine's version of a file kept whole, quoted as it can
    be pasted (a name with a space or a quote)."""
    import shlex

    return f"git show {shlex.quote(commit[:12] + '^2:' + in_repository)}"


@dataclass
class GitReport:
    driver: str | None = None  # the configured command, None when not installed
    driver_program_missing: bool = False
    driver_unsafe: bool = False  # configured, but not a command shardpy registers
    routes: list[AttributeRoute] = field(default_factory=list)
    attributes: bool = False  # .gitattributes routes the vault's files to the driver
    unmerged: list[str] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    # Conflicts without markers: files a sync kept whole, still as their merge left them.
    kept: list[KeptFile] = field(default_factory=list)
    problem: str | None = None
    # `shardpy sync`'s view: per remote ahead/behind (as last fetched), last success and error.
    remotes: list[RemoteStatus] = field(default_factory=list)

    @property
    def installed(self) -> bool:
        return (
            self.driver is not None
            and self.attributes
            and not self.driver_program_missing
            and not self.driver_unsafe
        )

    def hint(self) -> str | None:
        if self.driver_unsafe:
            return UNSAFE_HINT
        if not self.installed:
            return SETUP_HINT
        return ROUTES_HINT if self.routes else None

    def to_json(self) -> dict[str, Any]:
        return {
            "driver_installed": self.installed,
            "driver": self.driver,
            "driver_program_missing": self.driver_program_missing,
            "driver_unsafe": self.driver_unsafe,
            "foreign_merge_attributes": [r.to_json() for r in self.routes],
            "attributes": self.attributes,
            "unmerged": self.unmerged,
            "conflict_markers": self.markers,
            "kept_whole": [k.to_json() for k in self.kept],
            "problem": self.problem,
            "hint": self.hint(),
            "sync": {"remotes": [r.to_json() for r in self.remotes]},
        }


def _program_missing(command: str) -> bool:
    from shardpy.gitsync.setup import driver_words

    words = driver_words(command)
    if not words:
        return True
    program = words[0]
    if os.path.isabs(program):
        return not os.access(program, os.X_OK)
    return shutil.which(program) is None


def _lines(text: str) -> list[str]:
    return sorted({p for p in text.split("\0") if p})


def _drivers(vault: Path) -> dict[str, list[str]]:
    """Every ``merge.<name>.driver`` git sees (all scopes), its values in git's order (the last wins)."""
    done = git(["config", "-z", "--get-regexp", r"^merge\..*\.driver$"], vault, check=False)
    out: dict[str, list[str]] = {}
    for entry in done.stdout.split("\0"):
        key, _, value = entry.partition("\n")
        if key.startswith("merge.") and key.endswith(".driver"):
            out.setdefault(key[len("merge.") : -len(".driver")], []).append(value)
    return out


def _merge_names(line: str) -> list[str]:
    """The ``merge=NAME`` attributes of one .gitattributes line (its pattern skipped)."""
    line = line.strip()
    if not line or line.startswith("#"):
        return []
    if line.startswith('"'):
        close = line.find('"', 1)
        while close > 0 and line[close - 1] == "\\":
            close = line.find('"', close + 1)
        rest = line[close + 1 :] if close > 0 else ""
    else:
        rest = line.split(None, 1)[1] if len(line.split(None, 1)) > 1 else ""
    return [a[len("merge=") :] for a in rest.split() if a.startswith("merge=")]


def _attribute_files(vault: Path, top: Path) -> list[str]:
    """Tracked .gitattributes at or below the vault, and those of the folders above it up to ``top``."""
    listed = ["ls-files", "-z", "--full-name", "--", ":(glob)**/.gitattributes"]
    below = _lines(git(listed, vault, check=False).stdout)
    above = [
        (d / ".gitattributes").relative_to(top).as_posix()
        for d in vault.parents
        if d.is_relative_to(top) and (d / ".gitattributes").is_file()
    ]
    return sorted(set(above) | set(below))[:MAX_ATTRIBUTE_FILES]


def _read_attributes(path: Path) -> str:
    if path.is_symlink():
        return ""  # git never reads a .gitattributes that is a symbolic link either
    try:
        with path.open("rb") as fh:
            return fh.read(MAX_ATTRIBUTE_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return ""


def foreign_routes(vault: Path, top: Path, drivers: dict[str, list[str]]) -> list[AttributeRoute]:
    """The .gitattributes lines that send files to a driver other than shardpy's (bounded)."""
    from shardpy.gitsync.repo import DRIVER_NAME

    routes: list[AttributeRoute] = []
    for rel in _attribute_files(vault, top):
        for number, line in enumerate(_read_attributes(top / rel).splitlines(), start=1):
            for name in _merge_names(line):
                if name in BUILTIN_DRIVERS or name == DRIVER_NAME:
                    continue
                command = drivers[name][-1] if name in drivers else None
                routes.append(AttributeRoute(rel, number, name, command))
                if len(routes) >= MAX_ROUTES:
                    return routes
    return routes


def _driver_facts(report: GitReport, vault: Path, top: Path) -> None:
    from shardpy.gitsync.repo import DRIVER_NAME
    from shardpy.gitsync.setup import is_own_driver

    drivers = _drivers(vault)
    ours = drivers.get(DRIVER_NAME, [])
    if ours and ours[-1].strip():
        report.driver = ours[-1].strip()
        report.driver_program_missing = _program_missing(report.driver)
        # The value git uses (the last: local config is read after the global one).
        report.driver_unsafe = not is_own_driver(report.driver)
    report.routes = foreign_routes(vault, top, drivers)


def git_report(vault: Path) -> GitReport | None:
    """None when the vault is not in a git work tree."""
    top = find_repo_dir(vault)
    if top is None:
        return None
    from shardpy.gitsync.setup import BEGIN

    report = GitReport()
    try:
        attrs = (vault / ".gitattributes").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        attrs = ""
    report.attributes = BEGIN in attrs
    try:
        _driver_facts(report, vault, top)
        unmerged = ["diff", "--name-only", "--relative", "--diff-filter=U", "-z"]
        report.unmerged = _lines(git(unmerged, vault, check=False).stdout)
        grep = ["grep", "-l", "-z", "-I", "--all-match", "-e", "^<<<<<<< ", "-e", "^>>>>>>> ", "--", "*.md"]
        report.markers = _lines(git(grep, vault, check=False).stdout)
        _sync_facts(report, vault, top)
    except ShardpyError as exc:
        report.problem = exc.message
    return report


def _sync_facts(report: GitReport, vault: Path, top: Path) -> None:
    """Each remote's state and the files kept whole, from this machine's records (``sync/records.py``
    reads them; one ``git config`` here)."""
    from shardpy.sync import records

    # The git folder as git finds it (GIT_DIR, a `.git` file of a linked work tree): local_config's
    # cache is kept by that folder's config file, so a guessed `top/.git` could serve a stale read.
    repo = open_repo(vault)
    config = local_config(repo)
    report.remotes = remote_statuses(vault, records.snapshot(repo, config))
    report.kept = kept_files(vault, top, records.kept(repo, config))


def kept_files(vault: Path, top: Path, entries: list[tuple[str, str]]) -> list[KeptFile]:
    """The files a sync kept whole (``shardpy-sync.kept`` records) still as their merge left them."""
    if not entries:
        return []
    from shardpy.sync import records

    try:
        prefix = vault.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return []
    prefix = "" if prefix == "." else prefix + "/"
    inside = [(c, p) for c, p in entries if p.startswith(prefix)]
    return [KeptFile(p.removeprefix(prefix), c, p) for c, p in records.standing(top, inside)]


def remote_statuses(vault: Path, values: dict[str, str]) -> list[RemoteStatus]:
    """Each remote's ahead/behind (from the last fetch) and ``shardpy sync``'s records of it
    (``values``: this machine's ``shardpy-sync.*`` records, read once by :func:`git_report`)."""
    from shardpy.sync import records

    names = [r for r in git(["remote"], vault, check=False).stdout.split() if r]
    if not names:
        return []
    branch = git(["symbolic-ref", "--quiet", "--short", "HEAD"], vault, check=False).stdout.strip()
    out = []
    for name in names:
        ref = f"HEAD...refs/remotes/{name}/{branch}"
        counts = git(["rev-list", "--left-right", "--count", ref], vault, check=False).stdout.split()
        ahead, behind = (int(counts[0]), int(counts[1])) if len(counts) == 2 else (None, None)
        out.append(
            RemoteStatus(
                name,
                ahead,
                behind,
                values.get(records.remote_key(name, "ok")),
                values.get(records.remote_key(name, "error")),
            )
        )
    return out
