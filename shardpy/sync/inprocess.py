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

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from shardpy.gitsync.repo import DRIVER_KEY, Repo, config_get, git

if TYPE_CHECKING:
    from shardpy.apply.transaction import Op

__all__ = ["Deferred", "defer_args", "merge_deferred"]

_REGULAR = ("100644", "100755")


def defer_args(repo: Repo) -> list[str]:
    """``git -c`` arguments deferring every file but the ledger to :func:`merge_deferred`."""
    real = config_get(repo, DRIVER_KEY)
    if not real:
        return []
    line = f"case %P in *.shardmind/imports/ledger.sqlite3) {real} ;; *) exit 1 ;; esac"
    return ["-c", f"{DRIVER_KEY}={line}"]


@dataclass
class Deferred:
    merged: list[str] = field(default_factory=list)  # repository paths written clean
    conflicted: list[str] = field(default_factory=list)  # left with markers, or not a content merge


def _stages(repo: Repo) -> dict[str, dict[int, tuple[str, str]]]:
    """path → stage → (mode, object) for every unmerged path."""
    done = git(["ls-files", "-u", "-z"], repo.top)
    out: dict[str, dict[int, tuple[str, str]]] = {}
    for entry in done.stdout.split("\0"):
        meta, _, path = entry.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and path:
            out.setdefault(path, {})[int(parts[2])] = (parts[0], parts[1])
    return out


def _blobs(repo: Repo, names: set[str]) -> dict[str, bytes]:
    ordered = sorted(names)
    done = subprocess.run(
        ["git", "cat-file", "--batch"],
        cwd=repo.top,
        input="".join(f"{n}\n" for n in ordered).encode(),
        capture_output=True,
        timeout=300,
        check=False,
    )
    out: dict[str, bytes] = {}
    data, pos = done.stdout, 0
    for name in ordered:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        header = data[pos:nl].split()
        pos = nl + 1
        if len(header) == 3 and header[1] == b"blob":
            size = int(header[2])
            out[name] = data[pos : pos + size]
            pos += size + 1
    return out


def merge_deferred(repo: Repo, vault_prefix: str, write: Callable[[list[Op]], None]) -> Deferred:
    """Merge every content conflict git left; ``write(ops)`` applies the results (a transaction).

    A path that is not a three-way content merge of regular files (deleted on
    one side, a link, the ledger the real driver already handled, a path
    outside the vault) is left as git left it and counted as conflicted.
    """
    from shardpy.apply.transaction import Op
    from shardpy.gitsync.merge import FileKind, kind_of, merge_bytes

    stages = _stages(repo)
    wanted = {
        path: st
        for path, st in stages.items()
        if 2 in st
        and 3 in st
        and all(m in _REGULAR for m, _ in st.values())
        and path.startswith(vault_prefix)
        and kind_of(path) is not FileKind.LEDGER
    }
    blobs = _blobs(repo, {obj for st in wanted.values() for _, obj in st.values()})
    result = Deferred(conflicted=sorted(set(stages) - set(wanted)))
    ops: list[Op] = []
    for path, st in sorted(wanted.items()):
        sides = [blobs.get(st[k][1]) if k in st else b"" for k in (1, 2, 3)]
        if any(s is None for s in sides):
            result.conflicted.append(path)
            continue
        base, ours, theirs = (s or b"" for s in sides)
        merged = merge_bytes(base, ours, theirs, path)
        ops.append(Op.write(path[len(vault_prefix) :], merged.data))
        (result.merged if merged.clean else result.conflicted).append(path)
    if ops:
        write(ops)
    result.conflicted.sort()
    return result
