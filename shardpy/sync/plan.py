"""What a sync round would do, read from git (no write, no fetch): a plan/sync.py SyncPlan."""

from __future__ import annotations

import os
import re
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.fsutil import printable
from shardpy.gitsync.repo import Repo, cat_blobs, git, local_config, open_repo_at
from shardpy.plan.sync import SyncPlan
from shardpy.record import Record
from shardpy.sync import records
from shardpy.sync.access import unreadable

__all__ = [
    "Changes",
    "head_blobs",
    "local_excludes",
    "local_only",
    "plan_sync",
    "working_changes",
]


def local_excludes() -> list[str]:
    """Pathspecs keeping the machine-local records out of every sync commit (setup's list)."""
    from shardpy.gitsync.setup import LOCAL

    return [f":(exclude,glob){p}**" if p.endswith("/") else f":(exclude,glob){p}" for p in LOCAL]


# Files one machine keeps for itself: Obsidian's per-device layout (its window, open tabs, last
# files: rewritten as you click; merged between machines it is JSON with conflict markers, and
# Obsidian resets the layout) and editors' working files (swap, backup, lock). A round never
# adds a new one to git; one already tracked is yours and syncs (tests/sync/test_sync.py).
_DEVICE_FILES = frozenset({".obsidian/workspace.json", ".obsidian/workspace-mobile.json"})
_WORKING_FILES = ("*.swp", "*.swo", "*~", ".#*", "#*#", "~$*", ".~lock.*#", ".DS_Store", "Thumbs.db")


def local_only(path: str) -> bool:
    """``path`` (vault-relative) is a file one machine keeps for itself, never added by a round."""
    from fnmatch import fnmatchcase

    name = path.rsplit("/", 1)[-1]
    return path in _DEVICE_FILES or any(fnmatchcase(name, pattern) for pattern in _WORKING_FILES)


def _would_commit(vault: Path, prefix: str) -> list[str]:
    """What a round's commit would take (a dry run): the round's own selection."""
    return commit_selection(vault, prefix).committed()


class Changes(Record, frozen=True):
    """What ``git status`` sees changed in the vault, names as the file system gives them
    (a name that is not UTF-8 as surrogate escapes, to be handed back to git)."""

    paths: list[str]  # vault-relative, sorted
    closed: list[str]  # folders git could not open (a permission): their notes are not seen
    unmerged: list[str]  # paths with conflicts git's index still holds (not a round's: undone first)
    untracked: list[str]  # new files git does not know yet


# git status's two letters for a path left unmerged in the index (git help status).
_UNMERGED = {"DD", "AU", "UD", "UA", "DU", "AA", "UU"}


# git's warning for a folder it cannot list (it speaks the C locale here, shardpy.gitrun).
_CLOSED = re.compile(r"^warning: could not open directory '(.+)': ", re.MULTILINE)


def working_changes(vault: Path, prefix: str) -> Changes:
    """The changed paths, and the folders git could not list (reported by the round, not
    silently left unsynced: tests/sync/test_unreadable.py)."""
    done = git(
        ["status", "--porcelain=v1", "-z", "--untracked-files=all", "--", ".", *local_excludes()],
        vault,
        errors="surrogateescape",
    )
    words = done.stdout.split("\0")
    out: list[str] = []
    unmerged: list[str] = []
    untracked: list[str] = []
    i = 0
    while i < len(words):
        entry = words[i]
        i += 1
        if len(entry) < 4:
            continue
        if entry[0] in "RC":
            i += 1  # the rename's source follows
        out.append(entry[3:].removeprefix(prefix))
        if entry[:2] in _UNMERGED:
            unmerged.append(out[-1])
        elif entry[:2] == "??":
            untracked.append(out[-1])
    closed = sorted({m.removeprefix(prefix) for m in _CLOSED.findall(done.stderr)})
    return Changes(sorted(set(out)), closed, sorted(unmerged), sorted(untracked))


class Selection(Record, frozen=True):
    """What a round's commit takes from the working changes: decided here once, for the round
    (sync.round) and for its dry run alike."""

    changes: Changes
    unreadable: list[str]  # files this account may not read: git cannot index them (access.unreadable)
    local_only: list[str]  # new files one machine keeps for itself (local_only)

    def left_out(self) -> set[str]:
        return set(self.unreadable) | set(self.local_only)

    def committed(self) -> list[str]:
        left = self.left_out()
        return [printable(p) for p in self.changes.paths if p not in left]


def commit_selection(vault: Path, prefix: str) -> Selection:
    """The vault's changes, less the files this account may not read and the new files one
    machine keeps for itself: a round leaves both out of its commit."""
    changes = working_changes(vault, prefix)
    kept_here = [p for p in changes.untracked if local_only(p)]
    return Selection(changes, unreadable(vault, changes.paths), kept_here)


def head_blobs(repo: Repo, paths: list[str]) -> dict[str, bytes | None]:
    """Each repository path's bytes at HEAD (None: not there), read in one ``git cat-file``."""
    found = cat_blobs(repo, [f"HEAD:{p}" for p in paths], timeout=60)
    return {spec.removeprefix("HEAD:"): data for spec, data in found.items()}


def _head_branch(repo: Repo) -> str | None:
    """The branch HEAD names, read off ``HEAD`` as git writes it (``ref: refs/heads/NAME``);
    None where only git can tell (a detached HEAD, a reference store of another format)."""
    try:
        head = (repo.git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        return None
    name = head.removeprefix("ref: refs/heads/")
    # ".invalid": the placeholder a reftable repository keeps in HEAD for older gits.
    ok = name != head and name and name != ".invalid" and "\n" not in name
    return name if ok else None


# What a git operation of the user's leaves while it waits for them (git's state files in the
# repository's folder): a round would commit its half-done state, conflict markers included, and
# push it to every machine (tests/sync/test_in_progress.py). (file, operation, continue, abort)
_IN_PROGRESS = (
    ("CHERRY_PICK_HEAD", "A cherry-pick", "git cherry-pick --continue", "git cherry-pick --abort"),
    ("REVERT_HEAD", "A revert", "git revert --continue", "git revert --abort"),
    ("rebase-merge", "A rebase", "git rebase --continue", "git rebase --abort"),
    (
        "rebase-apply",
        "A rebase or `git am`",
        "git rebase --continue",
        "git rebase --abort` or `git am --abort",
    ),
)


def operation_in_progress(repo: Repo) -> ShardpyError | None:
    """SYNC_GIT_OPERATION when a cherry-pick, revert, rebase or `git am` waits in the repository."""
    for name, what, go_on, undo in _IN_PROGRESS:
        if (repo.git_dir / name).exists():
            return ShardpyError(
                "SYNC_GIT_OPERATION",
                f"{what} is in progress in the vault's repository; sync left it as it is",
                f"Finish it (`{go_on}`) or undo it (`{undo}`), then sync again.",
            )
    return None


def current_branch(repo: Repo) -> str:
    known = _head_branch(repo)  # no `git symbolic-ref` (issue 30, the driver's cost)
    if known is not None:
        return known
    done = git(["symbolic-ref", "--quiet", "--short", "HEAD"], repo.top, check=False)
    if done.returncode != 0 or not done.stdout.strip():
        busy = operation_in_progress(repo)  # a rebase works on a detached HEAD: say that instead
        if busy is not None:
            raise busy
        raise ShardpyError(
            "SYNC_DETACHED",
            "The vault's repository is not on a branch (a detached HEAD)",
            "Check out the branch the machines share (`git switch main`), then sync again.",
        )
    return done.stdout.strip()


def configured_remotes(repo: Repo, config: dict[str, list[str]] | None = None) -> list[str]:
    """The repository's remotes: those with a URL in ``config`` (the local config already read),
    else as ``git remote`` lists them (remotes set up in an included or global file)."""
    # A local config that includes other files may name remotes there: git's list then.
    if config is not None and not any(k.startswith(("include.", "includeif.")) for k in config):
        urls = (k for k in config if k.startswith("remote.") and k.endswith(".url"))
        named = sorted({k.removeprefix("remote.").removesuffix(".url") for k in urls})
        if named:
            return named
    return [r for r in git(["remote"], repo.top).stdout.split() if r]


def ahead_behind(repo: Repo, ref: str) -> tuple[int, int] | None:
    """(commits here not there, commits there not here), None when ``ref`` is unknown."""
    done = git(["rev-list", "--left-right", "--count", f"HEAD...{ref}"], repo.top, check=False)
    parts = done.stdout.split()
    if done.returncode != 0 or len(parts) != 2:
        return None
    return int(parts[0]), int(parts[1])


def _setup_needed(vault: Path, repo: Repo, config: dict[str, list[str]]) -> bool:
    from shardpy.gitsync.setup import plan_setup

    return plan_setup(vault, dry_run=True, repo=repo, config=config).changed


def _host() -> str:
    # os.uname's node name is gethostname's answer, without importing socket (a quiet round's
    # start-up: issue 30, the driver's cost); socket where os.uname does not exist (Windows).
    uname = getattr(os, "uname", None)
    if uname is not None:
        name: str = uname().nodename
    else:
        import socket

        name = socket.gethostname()
    return name.split(".")[0] or "this machine"


def plan_sync(
    vault: Path, *, remotes: list[str] | None = None, push: bool = True, dry_run: bool = False
) -> SyncPlan:
    """What a round would do in ``vault`` (reads only: no fetch, no id made).

    ``changes`` is read here for a dry run only: a round reads them again under the vault
    lock when it commits (and reports those), so reading them twice would only cost a
    ``git status`` (issue 30, the driver's cost: bench/gitsync_bench.py).
    """
    repo, prefix = open_repo_at(vault)
    config = local_config(repo)  # one read: remotes, this machine's records, the driver's keys
    known = configured_remotes(repo, config)
    chosen = remotes or known
    if any(r not in known for r in chosen):
        known = configured_remotes(repo)  # git's own list (a remote named outside the local file)
    unknown = [r for r in chosen if r not in known]
    if unknown:
        raise ShardpyError(
            "SYNC_REMOTE_UNKNOWN",
            f"No remote named {unknown[0]!r} in the vault's repository",
            "See `git remote -v`; add one with `shardpy sync add-remote NAME URL`.",
        )
    branch = current_branch(repo)
    plan = SyncPlan(
        vault=str(vault),
        repo=repo,
        branch=branch,
        machine=records.machine_id(repo, create=False, known=records.snapshot(repo, config)),
        host=_host(),
        prefix=prefix,
        remotes=chosen,
        changes=_would_commit(vault, prefix) if dry_run else [],
        setup_needed=_setup_needed(vault, repo, config),
        push=push,
        dry_run=dry_run,
    )
    for r in chosen:
        plan.ahead_behind[r] = ahead_behind(repo, f"refs/remotes/{r}/{branch}")
    return plan
