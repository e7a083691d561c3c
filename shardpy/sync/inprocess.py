"""The merge driver's work for a whole ``git merge``, in this process (issue 30, the driver's cost).

git starts the merge driver once per file both sides changed: a Python start
and shardpy's imports per note, ~50x git's own text merge for a pull that
touches 500 notes (docs/GIT.md, "Limitations"). ``shardpy sync`` already runs
Python, so it merges every such file itself: for its ``git merge`` the driver
command is replaced (``git -c``, this one command only) by a shell line that
leaves the file to us (exit 1: git records the three versions in the index
and moves on), except the import ledger, which keeps the real driver (it is
merged as SQLite files). After git stops, :func:`merge_deferred` reads the
three versions of every unmerged path in one ``git cat-file --batch``,
merges each with :func:`shardpy.gitsync.merge.merge_bytes` — the very
function the driver calls, so the bytes are the driver's — and writes the
results through one transaction. ``bench/gitsync_bench.py`` measures it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from shardpy.gitsync.repo import (
    DRIVER_KEY,
    Repo,
    cannot_write,
    cat_blobs,
    config_get,
    failure,
    git,
    git_bytes,
)
from shardpy.record import Record, field
from shardpy.sync.access import unreadable_refusal

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from shardpy.apply.transaction import Op

__all__ = ["Deferred", "defer_args", "heads", "merge_deferred", "merge_plumbing", "plan_plumbing"]

_REGULAR = ("100644", "100755")
_OBJECT_ID = re.compile(r"[0-9a-f]{40}")  # what fast-import's get-mark answers (SHA-1 repositories)


def defer_args(repo: Repo) -> list[str]:
    """``git -c`` arguments deferring every file but the ledger to :func:`merge_deferred`."""
    real = config_get(repo, DRIVER_KEY)
    if not real:
        return []
    line = f"case %P in *.shardmind/imports/ledger.sqlite3) {real} ;; *) exit 1 ;; esac"
    return ["-c", f"{DRIVER_KEY}={line}"]


class Deferred(Record):
    """The paths a merge left to this process, once merged."""

    merged: list[str] = field(default_factory=list)  # repository paths written clean
    conflicted: list[str] = field(default_factory=list)  # left with markers, or not a content merge
    # Conflicted paths resolved as this machine's file whole (no markers: a JSON or YAML file no
    # line merge parses, a binary note): recorded, so `status` still shows them after the round.
    kept: list[str] = field(default_factory=list)
    # Paths still unmerged in the index (the caller resolves them as the work tree holds them):
    # known here, so no ``git diff --diff-filter=U`` has to refresh the whole index to find them.
    unresolved: list[str] = field(default_factory=list)


def _stages(repo: Repo) -> dict[str, dict[int, tuple[str, str]]]:
    """path → stage → (mode, object) for every unmerged path. A name that is not UTF-8 is kept
    byte for byte (surrogate escapes) to be handed back to git (tests/sync/test_inprocess.py)."""
    done = git(["ls-files", "-u", "-z"], repo.top, errors="surrogateescape")
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for entry in done.stdout.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and path:
            out.setdefault(path, {})[int(parts[2])] = (parts[0], parts[1])
    return out


def _blobs(repo: Repo, names: set[str]) -> dict[str, bytes]:
    return {n: data for n, data in cat_blobs(repo, sorted(names)).items() if data is not None}


def merge_deferred(
    repo: Repo,
    vault_prefix: str,
    write: Callable[[list[Op]], None],
    restore: dict[str, str] | None = None,
    stages: dict[str, dict[int, tuple[str, str]]] | None = None,
) -> Deferred:
    """Merge every content conflict git left; ``write(ops)`` applies the results (a transaction).

    A path that is not a three-way content merge of regular files (deleted on
    one side, a link, the ledger the real driver already handled, a path
    outside the vault) is left as git left it and counted as conflicted.
    ``stages``: the unmerged index entries when the caller has just read them.
    """
    from shardpy.gitsync.merge import kind_of, merge_bytes
    from shardpy.gitsync.result import FileKind

    stages = _stages(repo) if stages is None else stages
    wanted = {
        path: st
        for path, st in stages.items()
        if 2 in st
        and 3 in st
        and all(m in _REGULAR for m, _ in st.values())
        and path.startswith(vault_prefix)
        and kind_of(path) is not FileKind.LEDGER
    }
    restore = {p: o for p, o in (restore or {}).items() if p.startswith(vault_prefix)}
    blobs = _blobs(repo, {obj for st in wanted.values() for _, obj in st.values()} | set(restore.values()))
    result = Deferred(conflicted=sorted(set(stages) - set(wanted)))
    results: dict[str, tuple[str, bytes]] = {}
    for path, obj in sorted(restore.items()):
        # Changed on their side, deleted on ours: the changed file comes back (never lost).
        if obj in blobs:
            results[path] = (stages[path][3][0], blobs[obj])
    for path, st in sorted(wanted.items()):
        sides = [blobs.get(st[k][1]) if k in st else b"" for k in (1, 2, 3)]
        if any(s is None for s in sides):
            result.conflicted.append(path)
            continue
        base, ours, theirs = (s or b"" for s in sides)
        merged = merge_bytes(base, ours, theirs, path)
        results[path] = (st[2][0], merged.data)
        (result.merged if merged.clean else result.conflicted).append(path)
        if not merged.clean and merged.data == ours:
            result.kept.append(path)
    by_git = _write_results(repo, vault_prefix, results, write, _sha1(stages))
    result.conflicted.sort()
    result.unresolved = sorted(set(stages) - set(results) if by_git else stages)
    return result


def _sha1(stages: dict[str, dict[int, tuple[str, str]]]) -> bool:
    """The repository names objects by SHA-1 (40 hex digits): read off the ids git listed."""
    return all(len(obj) == 40 for st in stages.values() for _, obj in st.values())


def _write_results(
    repo: Repo,
    vault_prefix: str,
    results: dict[str, tuple[str, bytes]],
    write: Callable[[list[Op]], None],
    sha1: bool,
) -> bool:
    """git writes the merged files (as git merge would; True); a transaction where git cannot
    (the index keeps those paths unmerged: the caller resolves them)."""
    from shardpy.apply.transaction import Op
    from shardpy.errors import ShardpyError

    try:
        if sha1:
            git_writes(repo, results)
            return True
    except ShardpyError as exc:
        raise ShardpyError(
            exc.code,
            f"git could not record the merged files: {exc.message}",
            (
                "Free some space on the vault's disk"
                if exc.code == "DISK_FULL"
                else "Run `git status` in the vault"
            )
            + "; the next sync undoes this merge and tries again.",
        ) from None
    write([Op.write(p[len(vault_prefix) :], data) for p, (_, data) in results.items()])
    return False


Heads = tuple[str, str, list[str]]  # (HEAD, theirs, every merge base)


def heads(repo: Repo, ref: str) -> Heads | None:
    """What a merge of ``ref`` starts from, in two git commands (a `rev-list --count`, a
    `rev-parse` and a `merge-base` were three: ~2 ms of a sync, issue 30); None when ``ref`` is
    unknown. ``theirs`` among the bases: nothing to merge; HEAD the only base: a fast-forward."""
    done = git(["rev-parse", "HEAD", f"{ref}^{{commit}}"], repo.top, check=False)
    ids = done.stdout.split()
    if done.returncode != 0 or len(ids) != 2:
        return None
    here, theirs = ids
    found = git(["merge-base", "--all", here, theirs], repo.top, check=False)
    return here, theirs, found.stdout.split() if found.returncode == 0 else []


def _renames(repo: Repo, base: str, tips: tuple[str, str]) -> bool:
    """Whether git pairs a renamed (or copied) file from ``base`` to either tip. One
    ``diff-tree --stdin``, where a `git diff -M` each were two (issue 30): a line "<tip> <base>"
    is a commit and its parent, so each is diffed from the base to the tip."""
    from shardpy.errors import ShardpyError

    asked = "".join(f"{tip} {base}\n" for tip in tips).encode()
    args = ["diff-tree", "--stdin", "--no-commit-id", "-r", "-M", "--diff-filter=RC", "--name-only", "-z"]
    try:
        return bool(git_bytes(args, repo.top, input=asked).strip(b"\0"))
    except ShardpyError:
        return True  # not known: git's own merge, which pairs them itself


def plan_plumbing(repo: Repo, known: Heads) -> tuple[str, str] | None:
    """(merge base, theirs) when the merge needs no rename detection and has one base, else None.
    ``known``: :func:`heads` of the merge."""
    here, theirs, bases = known
    if len(bases) != 1:
        return None  # criss-cross history (several bases): git's own merge builds the virtual base
    base = bases[0]
    if _renames(repo, base, (here, theirs)):
        return None  # git merge pairs renamed notes with their edits; read-tree would not
    return base, theirs


def merge_plumbing(
    repo: Repo,
    vault_prefix: str,
    base: str,
    theirs: str,
    write: Callable[[list[Op]], None],
    *,
    source: str = "the remote",
    suspects: list[str] | None = None,
) -> Deferred:
    """The three-way merge of HEAD and ``theirs`` in the index and work tree, files merged here.

    ``git read-tree -m -u`` settles every path only one side changed; each path
    both sides changed is merged by :func:`merge_deferred`; a path one side
    deleted and the other changed keeps the changed file. MERGE_HEAD is set
    first, so a round killed here is undone like any merge of ours.
    """
    git(["update-ref", "MERGE_HEAD", theirs], repo.top)
    done = git(["read-tree", "-m", "-u", base, "HEAD", theirs], repo.top, check=False)
    if done.returncode != 0:
        # Nothing changed (read-tree checks every path first): a file edited since the round's
        # commit would be overwritten. No merge is left behind.
        git(["update-ref", "-d", "MERGE_HEAD"], repo.top, check=False)
        from shardpy.errors import ShardpyError

        said = done.stderr.strip() or done.stdout.strip()
        if cannot_write(said, repo.top):
            raise failure(["read-tree", "-m"], done.returncode, said, repo.top)
        closed = unreadable_refusal(said, repo.top, source, suspects or [])
        if closed is not None:
            raise closed
        last = said.splitlines()
        raise ShardpyError(
            "SYNC_MERGE_FAILED",
            f"the merge did not start: {last[0] if last else 'git read-tree failed'}",
            "A note changed since the round's commit; the next round commits it and merges.",
        )
    stages = _stages(repo)
    theirs_only = {
        path: st[3][1] for path, st in stages.items() if 3 in st and 2 not in st and st[3][0] in _REGULAR
    }
    return merge_deferred(repo, vault_prefix, write, theirs_only, stages)


def blob_id(data: bytes) -> str:
    """git's object id of a blob holding ``data`` (SHA-1 repositories)."""
    from shardpy.fsutil import sha1_hex

    return sha1_hex(b"blob %d\0" % len(data) + data)


def git_writes(repo: Repo, results: dict[str, tuple[str, bytes]]) -> None:
    """Resolve ``results`` (repository path → (mode, merged bytes)) the way git merge does:
    the blobs into git's object store (``git fast-import``), the index entries at stage 0
    (``update-index --index-info``), the files checked out by git (``checkout-index``).

    git, not shardpy, writes these work-tree files, as ``git merge`` writes every file it
    merges; git's checkout never writes through a linked folder. SHA-1 repositories only (the
    caller checks). fast-import names each blob it stores; :func:`blob_id` (the same id) only
    if its answer is not one id per blob.
    """
    if not results:
        return
    # Each blob marked, then its id asked back (`get-mark`, answered on stdout): git names the
    # blobs it stores, where hashing each here cost a sync merging 500 notes ~3 ms (issue 30).
    stream = b"".join(
        b"blob\nmark :%d\ndata %d\n%s\n" % (i, len(data), data)
        for i, (_, data) in enumerate(results.values(), 1)
    )
    asks = b"".join(b"get-mark :%d\n" % i for i in range(1, len(results) + 1))
    named = git_bytes(["fast-import", "--quiet", "--done"], repo.top, input=stream + asks + b"done\n")
    ids = named.decode("ascii", "replace").split()
    if len(ids) != len(results) or not all(_OBJECT_ID.fullmatch(oid) for oid in ids):  # name them here
        ids = [blob_id(data) for _, data in results.values()]
    # -z: a path may hold a line break (a note named so on another machine); one ended by a line
    # break was malformed index info, and the round could never finish (tests/sync/test_inprocess.py).
    entries = zip(results.items(), ids, strict=True)
    info = "".join(f"{mode} {oid} 0\t{path}\0" for (path, (mode, _)), oid in entries)
    git_bytes(["update-index", "-z", "--index-info"], repo.top, input=info.encode("utf-8", "surrogateescape"))
    paths = "".join(f"{path}\0" for path in results)
    # -u: the index records the written files' stat data, as git merge's checkout does (else
    # every later git command re-reads and hashes each merged file to know it is unchanged).
    git_bytes(
        ["checkout-index", "-f", "-u", "-z", "--stdin"],
        repo.top,
        input=paths.encode("utf-8", "surrogateescape"),
    )
