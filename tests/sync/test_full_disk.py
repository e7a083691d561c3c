"""Issue 30, faults: `shardpy sync` on a disk that really is full.

A machine's clone is copied onto a small tmpfs in a private mount namespace
(tests/hardening/faults.py), the disk is filled to a few kilobytes, and a real
``python -m shardpy sync`` child runs there. Each amount of space left makes a different step
run out (git's status, the stamps' transaction, the commit, the fetch, the merge). The answer
must be DISK_FULL — the command's error, or the remote's in the round's report, with exit code
1 — never a traceback and never "unreachable". Then the space is freed and the next round must
finish the sync to exactly the tree a machine with space made: nothing lost, nothing left half
merged.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.gitsync.kit import git
from tests.hardening.faults import skip_without_a_mount_namespace
from tests.shardkit import child_env, shardpy_argv
from tests.sync.kit import Fleet

NOTES = 24
# Space left (KiB): each runs out at another step (measured: status, the stamps' backup, a stamped
# note, the commit, the fetch, the merge's fast-import at 450-500; 550 and up were enough here:
# the levels above that leave margin for another git's object sizes).
FREE_KB = (0, 12, 120, 200, 300, 350, 400, 450, 500, 550, 600, 700)
# Runs as root in its own mount namespace: $1 mount point, $2 the clone, $3 where to report,
# $4 kilobytes to leave free; the rest is the command.
ON_A_FULL_DISK = r"""
set -u
mnt=$1; src=$2; out=$3; free=$4; shift 4
mount -t tmpfs -o size=16m tmpfs "$mnt" || exit 1
cp -a "$src" "$mnt/v" || exit 1
avail=$(df --output=avail -k "$mnt" | tail -n 1)
if [ "$avail" -gt "$free" ]; then head -c $(( (avail - free) * 1024 )) /dev/zero > "$mnt/filler"; fi
cd "$mnt/v"
"$@" > "$out/first.out" 2> "$out/first.err"; echo $? > "$out/first.rc"
: > "$out/left"
for f in .git/MERGE_HEAD .git/index.lock .shardmind/journal.json; do
  if [ -e "$f" ]; then echo "$f" >> "$out/left"; fi
done
git config --get shardpy-sync.merging > "$out/marker.first"
rm -f "$mnt/filler"
"$@" > "$out/second.out" 2> "$out/second.err"; echo $? > "$out/second.rc"
git status --porcelain=v1 --untracked-files=all > "$out/status"
git rev-parse 'HEAD^{tree}' > "$out/tree"
git config --get shardpy-sync.merging > "$out/marker"
exit 0
"""


def _note(i: int, status: str = "draft", edits: dict[int, str] | None = None) -> str:
    lines = [f"Line {n} of note {i}: the release plan, its owners and what we learnt." for n in range(60)]
    for n, text in (edits or {}).items():
        lines[n] = text
    return f"---\ntitle: Note {i}\nstatus: {status}\ntags: [plan]\n---\n\n" + "\n".join(lines) + "\n"


@pytest.fixture
def diverged(fleet: Fleet) -> Fleet:
    """Machine c edited every note's status and top line and pushed; b edited each note's
    bottom line and gave it an owner (a key to stamp) and has not synced: b's next round stamps,
    commits, fetches and merges every note."""
    skip_without_a_mount_namespace(fleet.root / "probe")
    fleet.start({f"notes/n{i:02}.md": _note(i) for i in range(NOTES)})
    for i in range(NOTES):
        fleet.write("c", f"notes/n{i:02}.md", _note(i, "done", {3: "c changed the top."}))
        mine = _note(i, "review", {55: "b changed the bottom."})
        fleet.write("b", f"notes/n{i:02}.md", mine.replace("tags:", "owner: b\ntags:"))
    fleet.sync("c")
    return fleet


def _read(out: Path, name: str) -> str:
    return (out / name).read_text(encoding="utf-8")


def _first_error(out: Path) -> dict[str, Any] | None:
    """The first round's error (the command's, or its remote's), or None when it had space enough."""
    answer = json.loads(_read(out, "first.out"))
    if "error" in answer:
        error: dict[str, Any] = answer["error"]
        return error
    (remote,) = answer["remotes"]
    if remote["status"] == "ok":
        return None
    return {"code": remote["code"], "message": remote["error"], "hint": remote["hint"]}


def _on_a_full_disk(clone: Path, run: Path, free_kb: int) -> Path:
    """Sync a copy of ``clone`` with ``free_kb`` left, then with space again; the reports' folder."""
    mnt, out = run / "mnt", run / "out"
    mnt.mkdir(parents=True)
    out.mkdir()
    argv = ["unshare", "-m", "sh", "-c", ON_A_FULL_DISK, "sh", mnt, clone, out, str(free_kb)]
    argv += shardpy_argv("sync", "--no-push", "--json")
    done = subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return out


def test_sync_on_a_full_disk_is_disk_full_and_the_next_round_finishes_it(
    diverged: Fleet, tmp_path: Path
) -> None:
    b = diverged.machines["b"]
    failed_at: dict[int, str] = {}
    trees: set[str] = set()
    for free_kb in FREE_KB:
        out = _on_a_full_disk(b, tmp_path / f"free-{free_kb}", free_kb)
        for run in ("first", "second"):
            assert "Traceback" not in _read(out, f"{run}.err") + _read(out, f"{run}.out")
        error = _first_error(out)
        if error is not None:
            assert error["code"] == "DISK_FULL", (free_kb, error)
            assert "space" in error["hint"]
            assert _read(out, "first.rc").strip() == "1"
            failed_at[free_kb] = re.sub(r"\d", "", error["message"].split(" failed")[0])
        # Left for the next round only what it undoes: a merge of its own (MERGE_HEAD with this
        # machine's marker). Never a lock, never a half-written transaction.
        left = _read(out, "left").split()
        assert ".git/index.lock" not in left and ".shardmind/journal.json" not in left, (free_kb, left)
        if ".git/MERGE_HEAD" in left:
            assert _read(out, "marker.first").strip()
            failed_at[free_kb] += " (mid-merge)"
        second = json.loads(_read(out, "second.out"))
        assert _read(out, "second.rc").strip() == "0", second
        assert [r["status"] for r in second["remotes"]] == ["ok"], second
        assert _read(out, "status") == "" and _read(out, "marker") == ""
        trees.add(_read(out, "tree").strip())
    # The disk ran out at different steps (git's writes and shardpy's, once mid-merge) ...
    steps = set(failed_at.values())
    assert len(steps) >= 4 and any("mid-merge" in at for at in steps), failed_at
    # ... and each copy ended with the tree the machine itself makes with space to spare (the
    # same machine id, so the same stamps).
    diverged.sync("b", "--no-push")
    assert trees == {git(b, "rev-parse", "HEAD^{tree}").stdout.strip()}, failed_at
    note = (b / "notes/n00.md").read_text(encoding="utf-8")
    assert "b changed the bottom." in note and "c changed the top." in note and "owner: b" in note
