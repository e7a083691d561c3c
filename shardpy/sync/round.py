"""One sync round: recover, stamp and commit, then per remote fetch, merge, push.

The vault lock is held only while committing or merging (a fetch or a push
can take long and touches no vault file). Between steps the round asks
``stop`` and ends early when told (SIGTERM, Ctrl-C under ``--watch``), never
in the middle of a merge. A round killed anyway leaves at most a merge of its
own behind (marked by ``shardpy-sync.merging``): the next round undoes it
before anything else (``tests/sync/test_watch.py``), then starts over.

Merges are ``git merge`` (never a rebase) through the merge driver; paths git
leaves conflicted hold the driver's markers in the body (the YAML always
parses) and are committed as they are, so the round never stops mid-merge
and every machine converges on the same files; ``shardpy status`` lists the
notes with markers. A path deleted on one side and changed on the other keeps
the changed file (nothing is lost). Pushes are plain (never ``--force``): a
push the remote rejects because another machine pushed first is followed by
a fetch and a merge, then tried again, at most :data:`PUSH_ATTEMPTS` times.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from shardpy.controls import dropped
from shardpy.errors import ShardpyError
from shardpy.fsutil import printable, rel_parts, utf8_name
from shardpy.gitsync.repo import cannot_write, disk_full, failure, git, git_bytes, object_format
from shardpy.gitsync.setup import tracked_local
from shardpy.plan.sync import SyncPlan
from shardpy.record import Record, field
from shardpy.sync import records
from shardpy.sync.access import unreadable_refusal
from shardpy.sync.inprocess import defer_args, heads, merge_deferred, merge_plumbing, plan_plumbing
from shardpy.sync.plan import ahead_behind, commit_selection, head_blobs, operation_in_progress

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any

    from shardpy.apply.session import Session
    from shardpy.apply.transaction import Op

__all__ = ["PUSH_ATTEMPTS", "RemoteResult", "SyncReport", "run_round"]

PUSH_ATTEMPTS = 3
INDEX_LOCK_WAIT_S = 10.0
MESSAGE_NOTES = 5
PATHS_PER_CALL = 500


class RemoteResult(Record):
    """One remote's part of a sync round."""

    name: str
    status: str = "ok"  # ok | unreachable | error | stopped
    merged: bool = False
    pushed: bool = False
    conflicts: list[str] = field(default_factory=list)
    # Of ``conflicts``, those resolved as this machine's file whole (no markers to find): the
    # other machine's version is in the merge commit's second parent (records.KEPT_KEY).
    kept: list[str] = field(default_factory=list)
    resurrected: list[str] = field(default_factory=list)  # purged elsewhere, edited here: kept
    error: str | None = None
    code: str | None = None  # the error's stable code (DISK_FULL, SYNC_PUSH_REJECTED, ...)
    hint: str | None = None
    notice: str | None = None  # what went through but wants the user's eye (a branch no clone checks out)

    def failed(self, status: str, error: ShardpyError) -> None:
        # The message quotes git, and git quotes the remote (a hook's output, its server's words):
        # its control characters are dropped, so no remote writes escape sequences into this
        # machine's terminal or watcher log (tests/sync/test_faults.py).
        self.status, self.code, self.hint = status, error.code, error.hint
        self.error = dropped(error.message)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "merged": self.merged,
            "pushed": self.pushed,
            "conflicts": self.conflicts,
            "kept": self.kept,
            "resurrected": self.resurrected,
            "error": self.error,
            "code": self.code,
            "hint": self.hint,
            "notice": self.notice,
        }


class SyncReport(Record):
    """What a sync round did."""

    plan: SyncPlan
    commit: str | None = None
    committed: list[str] = field(default_factory=list)
    stamped: list[str] = field(default_factory=list)
    unstamped: list[str] = field(default_factory=list)  # changed notes whose names shardpy never writes
    nested: list[str] = field(default_factory=list)  # folders that are git repositories: not synced
    unreadable: list[str] = field(default_factory=list)  # files and folders git may not read: not synced
    local_only: list[str] = field(default_factory=list)  # new per-device and editors' files: never added
    recovered: list[str] = field(default_factory=list)
    remotes: list[RemoteResult] = field(default_factory=list)
    stopped: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.commit or any(r.merged or r.pushed for r in self.remotes))

    def to_json(self) -> dict[str, Any]:
        return {
            **self.plan.to_json(),
            "commit": self.commit,
            "committed": self.committed,
            "stamped": self.stamped,
            "unstamped": self.unstamped,
            "nested": self.nested,
            "unreadable": self.unreadable,
            "local_only": self.local_only,
            "recovered": self.recovered,
            "remotes": [r.to_json() for r in self.remotes],
            "stopped": self.stopped,
        }


def _fault(point: str) -> None:
    # Test-only: die at a named point of the round (tests/sync/test_watch.py kills a round
    # mid-merge this way), or be interrupted there as by Ctrl-C ("POINT:int",
    # tests/sync/test_faults.py). Never set in normal use.
    wanted = os.environ.get("SHARDPY_TEST_SYNC_FAULT")
    if wanted == point:
        os.kill(os.getpid(), signal.SIGKILL)
    if wanted == f"{point}:int":
        os.kill(os.getpid(), signal.SIGINT)


def _root(plan: SyncPlan) -> Path:
    return Path(plan.vault)


def _wait_index_lock(plan: SyncPlan) -> None:
    lock = plan.repo.git_dir / "index.lock"
    deadline = time.monotonic() + INDEX_LOCK_WAIT_S
    while lock.exists():
        if time.monotonic() > deadline:
            raise ShardpyError(
                "SYNC_GIT_BUSY",
                "Another git command holds the repository's index (.git/index.lock)",
                "Wait for it to finish; if no git is running, remove .git/index.lock and sync again.",
            )
        time.sleep(0.2)


def _recover(plan: SyncPlan, report: SyncReport, writer: Session) -> None:
    """Undo what a killed round left: a transaction (stamps; the write session recovered it), a
    merge of ours."""
    done = writer.recovery
    if done is not None:
        report.recovered.append(f"transaction {done.label}: {done.action}")
    _wait_index_lock(plan)
    ours = plan.records.get(records.MERGING_KEY)
    if (plan.repo.git_dir / "MERGE_HEAD").exists():
        if ours is None:
            raise ShardpyError(
                "SYNC_MERGE_IN_PROGRESS",
                "A merge is in progress in the vault's repository (not one sync started)",
                "Finish it (`git commit`) or undo it (`git merge --abort`), then sync again.",
            )
        # A round killed mid-write can leave index entries whose stat data is stale; git's
        # abort refuses those ("not uptodate") unless the index is refreshed first
        # (tests/sync/test_watch.py, the watcher killed mid-merge).
        git(["update-index", "-q", "--refresh"], plan.repo.top, check=False)
        if git(["merge", "--abort"], plan.repo.top, check=False).returncode != 0:
            git(["reset", "--merge"], plan.repo.top)
        report.recovered.append(f"undid the interrupted merge of {ours}")
    if ours is not None:
        records.drop(plan.repo, records.MERGING_KEY)
    busy = operation_in_progress(plan.repo)
    if busy is not None:
        raise busy


def _message(plan: SyncPlan, paths: list[str]) -> str:
    """``sync: HOST (ID): 2 notes: a.md, b.md`` — the machine and what it changed."""
    notes = [p for p in paths if p.endswith(".md")]
    listed = notes or paths
    more = len(listed) - MESSAGE_NOTES
    shown = ", ".join(listed[:MESSAGE_NOTES]) + (f" (+{more} more)" if more > 0 else "")
    what = f"{len(notes)} note{'s' * (len(notes) != 1)}" if notes else f"{len(paths)} file(s)"
    return f"sync: {plan.host} ({plan.machine}): {what}: {shown}"


def _writable_name(rel: str) -> bool:
    """shardpy writes no path it refuses everywhere (a backslash: another path on Windows)."""
    try:
        rel_parts(rel)
    except ShardpyError:
        return False
    return True


def _stamp(plan: SyncPlan, paths: list[str], writer: Session, report: SyncReport) -> list[str]:
    """Stamp the scalar keys each changed note changed since HEAD (one transaction). A note whose
    name shardpy never writes is committed unstamped and reported, not a reason to stop the
    whole sync (tests/sync/test_inprocess.py, odd names)."""
    from shardpy.apply.transaction import Op
    from shardpy.merge.revisions import stamp_note

    notes = [p for p in paths if p.endswith(".md") and (_root(plan) / p).is_file()]
    report.unstamped = [p for p in notes if not _writable_name(p)]
    refused = set(report.unstamped)
    notes = [p for p in notes if p not in refused]
    old = head_blobs(plan.repo, [plan.prefix + p for p in notes])
    ops: list[Op] = []
    for rel in notes:
        before = old.get(plan.prefix + rel)
        try:
            now = (_root(plan) / rel).read_bytes().decode("utf-8")
            prior = before.decode("utf-8") if before is not None else None
        except (OSError, UnicodeDecodeError):
            continue
        stamped = stamp_note(prior, now, plan.machine)
        if stamped is not None:
            ops.append(Op.write(rel, stamped.encode("utf-8")))
    if ops:
        writer.run(ops, label="sync")
    return [op.path for op in ops]


def _staged(plan: SyncPlan, report: SyncReport) -> list[str]:
    """The paths staged for the round's commit. A folder that is a git repository of its own (a
    project cloned into the vault) would go in as a bare pointer — its notes on no other
    machine: it is taken out again and reported, unless .gitmodules makes it a submodule on
    purpose (tests/sync/test_sync.py)."""
    top = plan.repo.top
    raw = git(["diff", "--cached", "--raw", "--no-renames", "-z"], top, errors="surrogateescape").stdout
    words = raw.split("\0")  # ":OLDMODE NEWMODE OLD NEW STATUS", then the path, for each entry
    entries = [(words[i + 1], words[i].split()) for i in range(0, len(words) - 1, 2)]
    added_links = [path for path, meta in entries if meta[:2] == [":000000", "160000"]]
    wanted = _submodule_paths(top) if added_links else set()
    nested = [p for p in added_links if p not in wanted]
    if nested:
        git(["reset", "--quiet", "--", *nested], top)  # unstaged: new, so nothing in HEAD to keep
        report.nested = [printable(p.removeprefix(plan.prefix)) for p in nested]
    left_out = set(nested)
    return [path for path, _ in entries if path not in left_out]


def _submodule_paths(top: Path) -> set[str]:
    """The paths .gitmodules declares. The file comes with a pull, so it is only compared with:
    read by `git config -f` (no include followed), never run, no path taken from it to write."""
    done = git(["config", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$"], top, check=False)
    return {line.split(" ", 1)[1] for line in done.stdout.splitlines() if " " in line}


def _commit(plan: SyncPlan, report: SyncReport, writer: Session) -> None:
    selection = commit_selection(_root(plan), plan.prefix)
    changes = selection.changes
    if changes.unmerged:
        # Conflicts git's index holds that no round of ours left (a `git stash pop` that stopped,
        # an operation's): committed, their markers would reach every machine.
        more = len(changes.unmerged) - 5
        shown = ", ".join(printable(p) for p in changes.unmerged[:5]) + (
            f" (+{more} more)" if more > 0 else ""
        )
        raise ShardpyError(
            "SYNC_UNMERGED",
            f"git's index holds unresolved conflicts: {shown}",
            "Resolve them and `git add` each (or undo what made them), then sync again.",
        )
    plan.unreadable = [plan.prefix + p for p in selection.unreadable]
    report.unreadable = [printable(p) for p in sorted(changes.closed + selection.unreadable)]
    report.local_only = [printable(p) for p in selection.local_only]
    skipped = selection.left_out()
    paths = selection.committed()
    plan.changes = paths
    if not paths:
        return
    report.stamped = _stamp(plan, paths, writer, report)
    # Left out of the commit: a file git cannot read (it stopped `git add -A` for the whole vault,
    # "unable to index file"; it stays as HEAD has it: tests/sync/test_unreadable.py) and a new
    # file one machine keeps for itself (tests/sync/test_sync.py).
    leave = [f":(exclude,literal){p}" for p in sorted(skipped)]
    _with_pathspecs(["add", "-A"], [".", *leave], _root(plan))
    # Never a machine-local record, even one tracked by mistake (git setup's list).
    tracked = tracked_local(_root(plan))
    if tracked:
        git(["rm", "--cached", "--quiet", "--", *tracked], _root(plan))
    staged = _staged(plan, report)
    mine = [p for p in staged if p.startswith(plan.prefix)]
    if not mine:
        return
    if report.nested:  # named in the message and the report only as what was not synced
        left_out = set(report.nested)
        paths = [p for p in paths if printable(p.rstrip("/")) not in left_out]
    # `commit -- .` (the vault's paths only) takes every path it lists from the work tree, so a
    # record untracked just above, still in HEAD and on disk, went back in (tests/sync/test_sync.py,
    # the vault id): the index is committed as staged unless something outside the vault is staged.
    commit = ["commit", "--quiet", "-m", _message(plan, paths)]
    if len(mine) < len(staged):
        _with_pathspecs(commit, [".", *leave], _root(plan))
    else:
        git(commit, _root(plan))
    report.commit = git(["rev-parse", "HEAD"], plan.repo.top).stdout.strip()
    report.committed = paths


def _with_pathspecs(args: list[str], specs: list[str], cwd: Path) -> None:
    """``git ARGS -- SPECS``; many of them (a .DS_Store in each of thousands of folders left out)
    go through stdin, never a command line past the system's limit."""
    if len(specs) <= PATHS_PER_CALL:
        git([*args, "--", *specs], cwd)
        return
    data = b"".join(os.fsencode(s) + b"\0" for s in specs)
    git_bytes([*args, "--pathspec-from-file=-", "--pathspec-file-nul"], cwd, input=data)


def _write(writer: Session, ops: list[Op]) -> None:
    writer.run(ops, label="sync-merge")


def _resolve(plan: SyncPlan, unmerged: list[str]) -> None:
    """Mark every unmerged path resolved as the work tree holds it: the merge result, or the side
    that changed a file the other deleted (nothing either machine wrote is dropped)."""
    top = plan.repo.top
    present = [p for p in unmerged if (top / p).exists() or (top / p).is_symlink()]
    gone = [p for p in unmerged if p not in set(present)]
    for i in range(0, len(present), PATHS_PER_CALL):
        git(["add", "--", *present[i : i + PATHS_PER_CALL]], top)
    for i in range(0, len(gone), PATHS_PER_CALL):
        git(["rm", "--cached", "--quiet", "--", *gone[i : i + PATHS_PER_CALL]], top, check=False)


def _merge(plan: SyncPlan, ref: str, out: RemoteResult, writer: Session) -> None:
    """Merge ``ref`` into HEAD (the caller holds the vault lock); conflicts are committed as left.

    Nothing of ours to merge: a fast-forward. Else, when no rename needs git's
    detection and the history has one merge base, the merge is done here
    (``read-tree`` and the driver's rules in this process, see
    :mod:`shardpy.sync.inprocess`); otherwise by ``git merge``, with the driver's
    work still done in this process.
    """
    known = heads(plan.repo, ref)
    if known is None or known[1] in known[2]:  # unknown, or nothing there that is not here
        return
    top = plan.repo.top
    message = f"sync: {plan.host} ({plan.machine}) merged {ref.removeprefix('refs/remotes/')}"
    if known[2] == [known[0]]:  # nothing here that is not there
        git(["merge", "--ff-only", "--quiet", ref], top)
        out.merged = True
        return
    records.put(plan.repo, records.MERGING_KEY, ref)
    fast = plan_plumbing(plan.repo, known)
    if fast is not None:
        source = ref.removeprefix("refs/remotes/").split("/", 1)[0]
        write = partial(_write, writer)
        try:
            deferred = merge_plumbing(
                plan.repo, plan.prefix, *fast, write, source=source, suspects=plan.unreadable
            )
        except ShardpyError:
            if not (plan.repo.git_dir / "MERGE_HEAD").exists():  # refused before it began
                records.drop(plan.repo, records.MERGING_KEY)
            raise
        _fault("merging")
    else:
        done = git([*defer_args(plan.repo), "merge", "--no-edit", "-m", message, ref], top, check=False)
        _fault("merging")
        if done.returncode == 0:
            _merged(plan, out, [])
            return
        if not (plan.repo.git_dir / "MERGE_HEAD").exists():
            records.drop(plan.repo, records.MERGING_KEY)
            said = done.stderr.strip() or done.stdout.strip()
            raise _not_started(ref, done.returncode, said, top, plan.unreadable)
        deferred = merge_deferred(plan.repo, plan.prefix, lambda ops: _write(writer, ops))
    out.resurrected = [printable(p) for p in _purged_but_edited(plan, deferred.conflicted)]
    _resolve(plan, deferred.unresolved)
    # The fetch just ran git's automatic maintenance; the commit's own check would start another
    # git process to find nothing to do (~3 ms of a sync merging 500 notes, issue 30).
    git(["-c", "maintenance.auto=false", "commit", "--quiet", "--no-verify", "-m", message], top)
    _merged(plan, out, [p.removeprefix(plan.prefix) for p in deferred.conflicted])
    _record_kept(plan, deferred.kept)
    out.kept = [printable(p.removeprefix(plan.prefix)) for p in deferred.kept]


def _record_kept(plan: SyncPlan, paths: list[str]) -> None:
    """This merge's files kept whole, and the earlier ones still as their merge left them, in
    this machine's records (``status`` lists them; tests/sync/test_sync.py). Nothing is asked of
    git when there are none (a quiet round: issue 30, the driver's cost)."""
    if not paths and records.KEPT_KEY not in plan.records:
        return
    top = plan.repo.top
    entries = records.kept(plan.repo) if records.KEPT_KEY in plan.records else []
    earlier = records.standing(top, entries) if entries else []
    commit = git(["rev-parse", "HEAD"], top).stdout.strip() if paths else ""
    # A name git config can hold and give back: not one kept byte for byte from another system.
    fresh = [(commit, p) for p in paths if utf8_name(p)]
    again = {p for _c, p in fresh}
    wanted = ([e for e in earlier if e[1] not in again] + fresh)[-records.MAX_KEPT :]
    if wanted != entries:  # a git config per record: none when nothing changed
        records.set_kept(plan.repo, wanted)
    if wanted:
        plan.records[records.KEPT_KEY] = wanted[-1][0]


def _not_started(ref: str, code: int, said: str, top: Path, suspects: list[str]) -> ShardpyError:
    """Why ``git merge`` did not start, as the error the remote's report carries."""
    if cannot_write(said, top):
        return failure(["merge", ref], code, said, top)
    closed = unreadable_refusal(said, top, ref.removeprefix("refs/remotes/").split("/", 1)[0], suspects)
    if closed is not None:
        return closed
    if "refusing to merge unrelated histories" in said:  # git speaks the C locale here (gitrun)
        # A vault started by `git init` on a second machine, then given the seed as a remote: its
        # history and the seed's share no commit. Never joined silently: the remote may be
        # another person's vault (tests/sync/test_sync.py).
        name = ref.removeprefix("refs/remotes/")
        return ShardpyError(
            "SYNC_UNRELATED_HISTORIES",
            f"This vault's history and {name}'s share no commit: they were started apart",
            f"If {name} is this vault on your other machines, join the two once: "
            f"`git merge --allow-unrelated-histories {name}` (the merge driver merges the notes both "
            "have), then `shardpy sync`. Else remove the remote (`shardpy sync remove-remote`).",
        )
    last = said.splitlines()
    return ShardpyError(
        "SYNC_MERGE_FAILED",
        f"git merge {ref} did not start: {last[-1] if last else 'exit ' + str(code)}",
        "Commit or move the files git names, then sync again.",
    )


def _purged_but_edited(plan: SyncPlan, conflicted: list[str]) -> list[str]:
    """Notes one side purged (sync/deletes.py records it in the commit) that the other edited:
    kept, and reported — a purge never silently loses an edit, nor is silently undone."""
    top = plan.repo.top
    kept = [p for p in conflicted if (top / p).is_file()]
    if not kept:
        return []
    from shardpy.sync.deletes import PURGE_TRAILER

    base = git(["merge-base", "HEAD", "MERGE_HEAD"], top, check=False).stdout.strip()
    if not base:
        return []
    log = ["log", "--format=%B", "--diff-filter=D", "HEAD", "MERGE_HEAD", "--not", base, "--", *kept]
    text = git(log, top, check=False).stdout
    purged = {
        line[len(PURGE_TRAILER) :].strip() for line in text.splitlines() if line.startswith(PURGE_TRAILER)
    }
    return [p.removeprefix(plan.prefix) for p in kept if p.removeprefix(plan.prefix) in purged]


def _merged(plan: SyncPlan, out: RemoteResult, conflicts: list[str]) -> None:
    out.merged = True
    out.conflicts = [printable(p) for p in conflicts]
    records.drop(plan.repo, records.MERGING_KEY)


def _fetch(plan: SyncPlan, remote: str) -> str | None:
    """None when fetched, else why not (the remote unreachable); what this machine could not store
    (a full or read-only disk) is raised: the remote's error, not "unreachable"."""
    try:
        # `--`: a remote is a name from the repository's config (an included file may set it);
        # one named `--upload-pack=...` would otherwise be an option that runs a command
        # (tests/sync/test_sync.py, a remote named like an option).
        done = git(["fetch", "--quiet", "--no-tags", "--", remote], plan.repo.top, check=False)
    except ShardpyError as exc:
        return exc.message
    if done.returncode != 0:
        said = done.stderr.strip() or done.stdout.strip()
        if cannot_write(said, plan.repo.top):  # reachable, but this machine cannot store what it fetched
            raise failure(["fetch", remote], done.returncode, said, plan.repo.top)
        if _auth_failed(said):
            raise _auth_error(remote, said)
        _check_format(plan, remote, said)
        if _NOT_FOUND.search(said):
            raise _RemoteFailure("error", _not_found(remote, said))
        lines = said.splitlines()
        return lines[-1] if lines else f"git fetch exited {done.returncode}"
    return None


def _locked_merge(plan: SyncPlan, ref: str, out: RemoteResult) -> None:
    from shardpy.apply.session import session

    with session(_root(plan), "sync") as writer:  # issue 27: the one write session
        _wait_index_lock(plan)
        _merge(plan, ref, out, writer)


def _push(plan: SyncPlan, remote: str, ref: str, out: RemoteResult, stop: Callable[[], bool]) -> None:
    for _ in range(PUSH_ATTEMPTS):
        ab = ahead_behind(plan.repo, ref)
        if ab is not None and ab[0] == 0:
            return
        refspec = f"HEAD:refs/heads/{plan.branch}"
        done = git(["push", "--porcelain", "--", remote, refspec], plan.repo.top, check=False)
        if done.returncode == 0:
            _fetch(plan, remote)  # the remote's branch as pushed (its failure changes nothing here)
            out.pushed = True
            if ab is None:  # the remote had no such branch: this push made it
                out.notice = _other_default_branch(plan, remote)
            return
        text = done.stdout + done.stderr
        # Another machine pushed first: git says `[rejected]` (seen before sending), or the remote
        # found its branch moved while this push was on the way ("is at X but expected Y").
        raced = "[rejected]" in text or "but expected" in text
        if not raced and "[remote rejected]" in text:  # reached, and it said no: disk, hook, rules
            raise _RemoteFailure("error", _refused(remote, text))
        if not raced:
            said = done.stderr.strip() or done.stdout.strip()
            if _auth_failed(said):
                raise _auth_error(remote, said)
            _check_format(plan, remote, said)
            lines = said.splitlines()
            raise _unreachable(lines[-1] if lines else "git push failed")
        if stop():
            return
        # Another machine pushed first: take its work, then try again.
        why = _fetch(plan, remote)
        if why is not None:
            raise _unreachable(why)
        _locked_merge(plan, ref, out)
    raise _RemoteFailure(
        "error",
        ShardpyError(
            "SYNC_PUSH_REJECTED",
            f"the push was rejected {PUSH_ATTEMPTS} times (others keep pushing)",
            "The next round merges what the others pushed and pushes again.",
        ),
    )


def _other_default_branch(plan: SyncPlan, remote: str) -> str | None:
    """Said when this machine's first push made a branch the remote's HEAD does not name (a
    hub made with `main` on GitHub, a machine whose git says `master`): a clone of the remote
    then checks out the other branch, or nothing, and machines on the two never meet
    (tests/sync/test_sync.py)."""
    done = git(["ls-remote", "--symref", "--", remote, "HEAD"], plan.repo.top, check=False)
    if done.returncode != 0:
        return None  # not known: nothing said
    first = done.stdout.split("\n", 1)[0]
    mine = plan.branch
    if not first.strip():  # its HEAD names a branch it does not have (git prints nothing)
        return (
            f"{remote}'s default branch (its HEAD) is not {mine!r} and does not exist: a clone of "
            f"{remote} checks out nothing. Make {mine!r} its default branch (on a hosting site: the "
            "repository's settings), or rename the branch here to the remote's default "
            f"(`git branch -m {mine} main`) and sync again before the other machines clone"
        )
    named = first.removeprefix("ref: refs/heads/").split("\t", 1)[0]
    if not first.startswith("ref: refs/heads/") or named == mine:
        return None
    return (
        f"{remote}'s default branch is {named!r}, this machine syncs {mine!r}: a clone of {remote} "
        f"checks out {named!r}, and machines on {named!r} never see this one's notes. Rename the "
        f"branch here (`git branch -m {mine} {named}`) and sync again, or make {mine!r} the "
        "remote's default branch"
    )


# git's words (C locale) when the two repositories name objects with different hashes (sha1 and
# sha256): the fetch's, the push's, and a push's into an empty repository of the other format.
_OTHER_FORMAT = ("mismatched algorithms", "does not support this repository's hash algorithm")
_EMPTY_OTHER_FORMAT = "unexpected capabilities^{}"


def _check_format(plan: SyncPlan, remote: str, said: str) -> None:
    """A remote of the other object format is never reached by waiting: its error, not
    "unreachable" tried again for ever (tests/sync/test_sync.py)."""
    mine = object_format(plan.repo)
    if not (any(w in said for w in _OTHER_FORMAT) or (_EMPTY_OTHER_FORMAT in said and mine != "sha1")):
        return
    raise _RemoteFailure(
        "error",
        ShardpyError(
            "SYNC_OBJECT_FORMAT",
            f"{remote} names its objects with another hash than this vault's ({mine}): git cannot "
            "sync the two",
            f"Give the machines a seed of this vault's format: `shardpy sync init-seed PATH` run in "
            f"this vault makes one ({mine}); then `shardpy sync remove-remote {remote}` and "
            "`add-remote` the new seed on each machine.",
        ),
    )


# A host's answer that the repository is not there (GitHub's and GitLab's "Repository not found",
# git's for an HTTP 404): a wrong address or a repository this machine may not see, which waiting
# never fixes. A folder that is missing stays "unreachable": a seed on a drive not mounted yet.
_NOT_FOUND = re.compile(r"Repository not found|repository '[^']*' not found", re.IGNORECASE)


def _not_found(remote: str, said: str) -> ShardpyError:
    last = [line for line in said.splitlines() if line.strip()]
    return ShardpyError(
        "SYNC_REMOTE_NOT_FOUND",
        f"{remote} answered that the repository does not exist: {last[-1] if last else 'not found'}",
        "Check the address (`git remote -v`; `shardpy sync add-remote` after `remove-remote` to "
        "change it) and that this machine's account may see the repository.",
    )


# git's and ssh's words (C locale) for credentials the remote did not take: never fixed by waiting,
# so an error (exit 1), not "unreachable" (tests/sync/test_faults.py).
_AUTH_WORDS = (
    "Authentication failed",
    "could not read Username",
    "could not read Password",
    "Permission denied (publickey",
    "Host key verification failed",
    "The requested URL returned error: 403",  # an HTTPS host that knows the account: not allowed
    "denied to ",  # GitHub's "Permission to u/vault.git denied to someone" (a read-only token)
)


def _auth_failed(said: str) -> bool:
    return any(words in said for words in _AUTH_WORDS)


def _auth_error(remote: str, said: str) -> ShardpyError:
    last = [line for line in said.splitlines() if line.strip()]
    return ShardpyError(
        "SYNC_REMOTE_AUTH",
        f"{remote} did not accept this machine's credentials: {last[-1] if last else 'no reason given'}",
        f"Check this machine's access to it: `git fetch {remote}` by hand (an SSH key, a credential "
        "helper or a token); sync never asks for a password.",
    )


def _refused(remote: str, text: str) -> ShardpyError:
    """The remote refused the push (``[remote rejected]``, not another machine's push first: that
    one is retried): its own words, and a disk it filled said so (tests/sync/test_faults.py)."""
    if "branch is currently checked out" in text or "refusing to update checked out branch" in text:
        # The remote is another machine's vault, its branch checked out: git refuses every push
        # into it, so "the next round pushes again" was never true (tests/sync/test_sync.py).
        return ShardpyError(
            "SYNC_REMOTE_CHECKED_OUT",
            f"{remote} is a vault with its branch checked out (another machine's clone), and git "
            "refuses pushes into it",
            "Sync the machines through a seed every one of them reaches: `shardpy sync init-seed PATH` "
            "(a bare repository), then `shardpy sync add-remote NAME PATH` on each. Until then "
            "`shardpy sync --no-push` here takes that vault's work without pushing into it.",
        )
    said = [line.removeprefix("remote:").strip() for line in text.splitlines() if line.startswith("remote:")]
    why = next((line for line in reversed(said) if line), "")
    if not why:
        status = [line for line in text.splitlines() if "[remote rejected]" in line]
        why = status[0].rsplit("[remote rejected]", 1)[-1].strip() if status else "no reason given"
    full = disk_full(text)  # git's words only: the remote's disk, not this machine's
    return ShardpyError(
        "SYNC_PUSH_REFUSED",
        f"{remote} refused the push: {why}",
        ("Free some space on the remote's disk (the seed's); " if full else "See the remote's words above; ")
        + "nothing was lost: the next round pushes again.",
    )


class _RemoteFailure(Exception):
    """A remote's part of the round ended early: ``status`` (unreachable | error) and why."""

    def __init__(self, status: str, error: ShardpyError) -> None:
        super().__init__(error.message)
        self.status = status
        self.error = error


def _unreachable(why: str) -> _RemoteFailure:
    return _RemoteFailure(
        "unreachable",
        ShardpyError(
            "SYNC_REMOTE_UNREACHABLE",
            why,
            "Check the remote's address and the network (`git remote -v`); the next round tries again.",
        ),
    )


def _sync_remote(plan: SyncPlan, remote: str, stop: Callable[[], bool]) -> RemoteResult:
    out = RemoteResult(remote)
    ref = f"refs/remotes/{remote}/{plan.branch}"
    try:
        why = _fetch(plan, remote)
        if why is not None:
            raise _unreachable(why)
        if stop():
            out.status = "stopped"
            return out
        _locked_merge(plan, ref, out)
        if plan.push and not stop():
            _push(plan, remote, ref, out, stop)
    except _RemoteFailure as exc:
        out.failed(exc.status, exc.error)
    except ShardpyError as exc:
        out.failed("error", exc)
    try:
        if out.error is None:
            records.record_ok(plan.repo, remote, plan.records)
        else:
            records.record_error(plan.repo, remote, out.error)
    except ShardpyError as exc:  # the record of the round, not the round: its report still goes out
        if out.error is None:
            out.failed("error", exc)
    return out


def undo_interrupted(plan: SyncPlan) -> list[str]:
    """After Ctrl-C stopped a round: undo at once what the next round would undo first (a merge of
    ours left half done; the stamps' transaction its session rolled back already). What it undid."""
    from shardpy.apply.session import session

    report = SyncReport(plan)
    with session(_root(plan), "sync") as writer:
        plan.records = records.snapshot(plan.repo)  # the round's own marker, set since it began
        _recover(plan, report, writer)
    return report.recovered


def run_round(plan: SyncPlan, *, stop: Callable[[], bool] = lambda: False) -> SyncReport:
    """One round in ``plan``'s vault; remote failures are reported, never raised."""
    from shardpy.apply.session import session

    report = SyncReport(plan)
    with session(_root(plan), "sync") as writer:  # issue 27: the one write session
        plan.records = records.snapshot(plan.repo)
        plan.machine = records.machine_id(plan.repo, known=plan.records)
        _recover(plan, report, writer)
        _commit(plan, report, writer)
    _fault("committed")
    for remote in plan.remotes:
        if stop():
            report.stopped = True
            break
        report.remotes.append(_sync_remote(plan, remote, stop))
    return report
