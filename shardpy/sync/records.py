"""This machine's sync records, in the repository's ``.git/config`` (``git config --local``).

git keeps them: they never reach a commit, a pull cannot change them, and
shardpy writes no file for them. Keys (section ``shardpy-sync``):

* ``machine``: this clone's id (8 hex digits, made once), the tie-break of
  revision stamps and the name in commit messages;
* ``<remote>.ok`` / ``<remote>.error``: the last successful sync with a
  remote (UTC, ISO 8601) and the last failure's message (cleared by a success);
* ``merging``: set while a round merges, so the next round knows a merge
  left behind is its own to undo (a merge the user started is never touched);
* ``kept`` (one value per file, ``<merge commit> <repository path>``): a file
  both machines changed that a round's merge resolved as this machine's whole
  (no line merge of the two parses), so ``status`` shows it after the round
  until the file changes again (gitsync/report.kept_files).
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

from shardpy.gitsync.repo import Repo, git, local_config

SECTION = "shardpy-sync"
MACHINE_KEY = f"{SECTION}.machine"
MERGING_KEY = f"{SECTION}.merging"
KEPT_KEY = f"{SECTION}.kept"
MAX_KEPT = 100  # the latest: each is a `git config` to write, and a path for `status` to check
_MACHINE = re.compile(r"[0-9a-f]{8}")


def get(repo: Repo, key: str) -> str | None:
    done = git(["config", "--local", "--get", key], repo.top, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def put(repo: Repo, key: str, value: str) -> None:
    git(["config", "--local", key, value], repo.top)


def drop(repo: Repo, key: str) -> None:
    git(["config", "--local", "--unset-all", key], repo.top, check=False)


def snapshot(repo: Repo, config: dict[str, list[str]] | None = None) -> dict[str, str]:
    """Every record of this machine (key → its last value), read with one ``git config``:
    a round reads them once instead of a ``git config --get`` each (issue 30, the driver's cost).
    ``config``: the whole local config already read (``gitsync.repo.local_config``)."""
    listed = local_config(repo) if config is None else config
    return {key: values[-1] for key, values in listed.items() if key.startswith(f"{SECTION}.") and values}


def machine_id(repo: Repo, *, create: bool = True, known: dict[str, str] | None = None) -> str:
    """This clone's id; made on first use (a planning caller passes ``create=False``).
    ``known``: a :func:`snapshot` already read (no second ``git config``)."""
    current = known.get(MACHINE_KEY) if known is not None else get(repo, MACHINE_KEY)
    if current and _MACHINE.fullmatch(current):
        return current
    made = os.urandom(4).hex()
    if create:
        put(repo, MACHINE_KEY, made)
    return made


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def remote_key(remote: str, what: str) -> str:
    return f"{SECTION}.{remote}.{what}"


def record_ok(repo: Repo, remote: str, known: dict[str, str] | None = None) -> None:
    """A success; the last error is cleared (not asked of git when ``known`` says there is none)."""
    put(repo, remote_key(remote, "ok"), now())
    if known is None or remote_key(remote, "error") in known:
        drop(repo, remote_key(remote, "error"))


def record_error(repo: Repo, remote: str, message: str) -> None:
    put(repo, remote_key(remote, "error"), f"{now()} {message}"[:500])


def last(repo: Repo, remote: str) -> tuple[str | None, str | None]:
    """(last success, last error) with ``remote``."""
    return get(repo, remote_key(remote, "ok")), get(repo, remote_key(remote, "error"))


def kept(repo: Repo, config: dict[str, list[str]] | None = None) -> list[tuple[str, str]]:
    """The ``kept`` records: (merge commit, repository path), oldest first. A value that is not
    a commit id and a path (the config is this machine's, but a hand edit can break it) is skipped.
    ``config``: the whole local config already read (``gitsync.repo.local_config``)."""
    return parse_kept((local_config(repo) if config is None else config).get(KEPT_KEY, []))


def parse_kept(values: list[str]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        commit, _, path = value.partition(" ")
        if _COMMIT.fullmatch(commit) and path:
            out.append((commit, path))
    return out


_COMMIT = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")


def set_kept(repo: Repo, entries: list[tuple[str, str]]) -> None:
    """Replace the ``kept`` records with ``entries`` (none: the key is removed)."""
    drop(repo, KEPT_KEY)
    for commit, path in entries:
        git(["config", "--local", "--add", KEPT_KEY, f"{commit} {path}"], repo.top)


def standing(top: Path, entries: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The ``entries`` whose file is still as the merge left it (work tree against the merge
    commit, one ``git diff`` per commit): a file changed since was taken up by the user."""
    by_commit: dict[str, list[str]] = {}
    for commit, path in entries:
        by_commit.setdefault(commit, []).append(path)
    out = []
    for commit, paths in by_commit.items():
        specs = [f":(literal){p}" for p in paths]
        done = git(["diff", "--name-only", "--no-renames", "-z", commit, "--", *specs], top, check=False)
        if done.returncode != 0:
            continue  # a commit this repository no longer has: nothing left to show
        changed = set(done.stdout.split("\0"))
        out += [(commit, p) for p in paths if p not in changed]
    return out
