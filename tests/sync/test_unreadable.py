"""Issue 30, faults: a vault holding files this account may not read.

A note written by another account or under ``sudo``, or a folder left ``chmod 000``, is a real
vault's state. git cannot hash such a file, and ``git add -A`` stopped the whole round with
"unable to index file" on every round after (GIT_FAILED): nothing else synced, on no machine.
Now the round leaves such files out of its commit (as they are in HEAD), syncs the rest and
names them in the report's ``unreadable``; a folder git cannot list is named there too, where
git itself only warned and its notes silently stayed on this machine.

Root reads every file whatever its mode, so as root the sync runs in a child without the two
capabilities that let it (``setpriv``); another account needs nothing.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest

from tests.gitsync.kit import git
from tests.hardening.faults import as_a_user
from tests.shardkit import child_env, shardpy_argv
from tests.sync.kit import Fleet


def _sync(fleet: Fleet, machine: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [*as_a_user(), *shardpy_argv("sync", "--yes", "--json")],
        cwd=fleet.machines[machine],
        env=child_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout)


@pytest.fixture
def closed(fleet: Fleet) -> Iterator[Fleet]:
    """Machine b edited a note, added one, and holds a changed note and a folder it may not read."""
    fleet.start({"notes/open.md": "# Open\n\nfirst\n", "notes/locked.md": "# Locked\n\nfirst\n"})
    b = fleet.machines["b"]
    fleet.write("b", "notes/open.md", "# Open\n\nfirst\nb edited this\n")
    fleet.write("b", "notes/new.md", "# New\n\nmade on b\n")
    fleet.write("b", "notes/locked.md", "# Locked\n\nfirst\nb's edit, not readable\n")
    fleet.write("b", "notes/closed/inside.md", "# Inside\n\nin a closed folder\n")
    (b / "notes/locked.md").chmod(0)
    (b / "notes/closed").chmod(0)
    try:
        yield fleet
    finally:
        (b / "notes/closed").chmod(0o755)
        (b / "notes/locked.md").chmod(0o644)


def test_a_note_it_may_not_read_is_left_out_and_the_rest_syncs(closed: Fleet) -> None:
    code, report = _sync(closed, "b")
    assert code == 0, report
    assert report["unreadable"] == ["notes/closed/", "notes/locked.md"]
    assert report["committed"] == ["notes/new.md", "notes/open.md"]
    assert [r["status"] for r in report["remotes"]] == ["ok"]
    hub = git(closed.machines["c"], "ls-remote", str(closed.hub), "HEAD").stdout.split()[0]
    assert hub == closed.head("b")
    shown = git(closed.machines["b"], "show", "--name-only", "--format=", "HEAD").stdout.split()
    assert shown == ["notes/new.md", "notes/open.md"]
    # What HEAD holds of it is what the machines had: b's unreadable edit waits on b.
    assert git(closed.machines["b"], "show", "HEAD:notes/locked.md").stdout == "# Locked\n\nfirst\n"

    closed.sync("c")
    assert closed.read("c", "notes/new.md") == "# New\n\nmade on b\n"
    assert not (closed.machines["c"] / "notes/closed").exists()


def test_once_readable_again_the_edit_syncs(closed: Fleet) -> None:
    assert _sync(closed, "b")[0] == 0
    b = closed.machines["b"]
    (b / "notes/closed").chmod(0o755)
    (b / "notes/locked.md").chmod(0o644)
    code, report = _sync(closed, "b")
    assert code == 0, report
    assert report["unreadable"] == []
    assert report["committed"] == ["notes/closed/inside.md", "notes/locked.md"]
    closed.sync("c")
    assert closed.read("c", "notes/locked.md") == "# Locked\n\nfirst\nb's edit, not readable\n"
    assert closed.read("c", "notes/closed/inside.md") == "# Inside\n\nin a closed folder\n"


@pytest.mark.parametrize("rename", [False, True], ids=["read-tree", "git-merge"])
def test_a_pull_over_a_note_it_may_not_read(closed: Fleet, rename: bool) -> None:
    """Machine c changed the note b may not read: git refuses to merge over it. b's round says
    so (not "the next round commits it": it cannot), leaves no merge behind, and once the file
    is readable b's edit and c's merge. A rename on c takes the round through `git merge`
    instead of read-tree, whose refusal is worded differently."""
    closed.write("c", "notes/locked.md", "c's line\n# Locked\n\nfirst\n")
    if rename:
        git(closed.machines["c"], "mv", "notes/open.md", "notes/opened.md")
    closed.sync("c")
    b = closed.machines["b"]
    code, report = _sync(closed, "b")
    assert code == 1, report
    (remote,) = report["remotes"]
    assert remote["code"] == "SYNC_NOTE_UNREADABLE", remote
    assert "notes/locked.md" in remote["error"] and "chmod u+r" in remote["hint"]
    assert not (b / ".git/MERGE_HEAD").exists()
    assert git(b, "config", "--get", "shardpy-sync.merging", ok=False).stdout == ""
    assert (b / "notes/locked.md").read_text() == "# Locked\n\nfirst\nb's edit, not readable\n"

    (b / "notes/locked.md").chmod(0o644)
    code, report = _sync(closed, "b")
    assert code == 0, report
    assert closed.read("b", "notes/locked.md") == "c's line\n# Locked\n\nfirst\nb's edit, not readable\n"
    closed.sync("c")
    assert closed.tree("c") == closed.tree("b")
