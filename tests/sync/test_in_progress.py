"""Issue 30, faults: a git operation of the user's that waits in the vault's repository.

A cherry-pick, revert, rebase or ``git am`` that stopped on a conflict, or a ``git stash pop``
that did, leaves conflict markers in the note and the conflict in git's index. A round
(or ``sync --watch``, unasked) committed that half-done state, markers included, and pushed
it to every machine, and a cherry-pick or revert in progress lost its state to the commit.
Now the round leaves the repository as it is and says what to finish: SYNC_GIT_OPERATION for
an operation git records, SYNC_UNMERGED for conflicts only the index holds. Nothing is
committed and nothing reaches the hub.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable

import pytest

from tests.gitsync.kit import git
from tests.sync.kit import Fleet

NOTE = "notes/plan.md"
BASE = "---\ntitle: Plan\n---\n\nThe plan.\n"


def _conflicting_commit(fleet: Fleet, name: str, text: str) -> str:
    """A commit on a side branch of b that rewrites the note's last line: its id."""
    b = fleet.machines["b"]
    git(b, "checkout", "--quiet", "-b", name, "HEAD~0")
    fleet.write("b", NOTE, BASE.replace("The plan.", text))
    git(b, "commit", "--quiet", "-am", name)
    made = git(b, "rev-parse", "HEAD").stdout.strip()
    git(b, "checkout", "--quiet", "main")
    return made


def _on_main(fleet: Fleet, text: str) -> None:
    fleet.write("b", NOTE, BASE.replace("The plan.", text))
    git(fleet.machines["b"], "commit", "--quiet", "-am", text)


def _cherry_pick(fleet: Fleet) -> str:
    side = _conflicting_commit(fleet, "side", "Side's plan.")
    _on_main(fleet, "Main's plan.")
    git(fleet.machines["b"], "cherry-pick", side, ok=False)
    return "CHERRY_PICK_HEAD"


def _revert(fleet: Fleet) -> str:
    _on_main(fleet, "First plan.")
    first = git(fleet.machines["b"], "rev-parse", "HEAD").stdout.strip()
    _on_main(fleet, "Second plan.")
    git(fleet.machines["b"], "revert", "--no-edit", first, ok=False)
    return "REVERT_HEAD"


def _rebase(fleet: Fleet) -> str:
    _conflicting_commit(fleet, "side", "Side's plan.")
    _on_main(fleet, "Main's plan.")
    git(fleet.machines["b"], "checkout", "--quiet", "side")
    git(fleet.machines["b"], "rebase", "main", ok=False)  # stops on a detached HEAD
    return "rebase-merge"


def _am(fleet: Fleet) -> str:
    b = fleet.machines["b"]
    side = _conflicting_commit(fleet, "side", "Side's plan.")
    patch = git(b, "format-patch", "--stdout", f"{side}~1..{side}").stdout
    _on_main(fleet, "Main's plan.")
    subprocess.run(["git", "am"], cwd=b, input=patch, text=True, capture_output=True, check=False)
    return "rebase-apply"


OPERATIONS: dict[str, Callable[[Fleet], str]] = {
    "cherry-pick": _cherry_pick,
    "revert": _revert,
    "rebase": _rebase,
    "am": _am,
}


@pytest.mark.parametrize("operation", OPERATIONS)
def test_an_operation_that_stopped_is_left_to_the_user(fleet: Fleet, operation: str) -> None:
    fleet.start({NOTE: BASE})
    hub = git(fleet.root, "--git-dir", str(fleet.hub), "rev-parse", "main").stdout
    state = OPERATIONS[operation](fleet)
    b = fleet.machines["b"]
    assert (b / ".git" / state).exists()
    before = (b / NOTE).read_text(), git(b, "rev-parse", "HEAD").stdout
    report = fleet.sync("b", exit_code=1)
    assert report["error"]["code"] == "SYNC_GIT_OPERATION", report
    assert "--continue" in report["error"]["hint"] and "--abort" in report["error"]["hint"]
    assert (b / ".git" / state).exists()  # the operation is still the user's to finish
    assert ((b / NOTE).read_text(), git(b, "rev-parse", "HEAD").stdout) == before
    assert git(fleet.root, "--git-dir", str(fleet.hub), "rev-parse", "main").stdout == hub


def test_a_stash_pop_that_stopped(fleet: Fleet) -> None:
    """Only the index knows: no state file, the note has markers, status says UU."""
    fleet.start({NOTE: BASE})
    b = fleet.machines["b"]
    hub = git(fleet.root, "--git-dir", str(fleet.hub), "rev-parse", "main").stdout
    fleet.write("b", NOTE, BASE.replace("The plan.", "Stashed plan."))
    git(b, "stash", "--quiet")
    _on_main(fleet, "Main's plan.")
    git(b, "stash", "pop", ok=False)
    assert git(b, "status", "--porcelain").stdout.startswith("UU ")
    report = fleet.sync("b", exit_code=1)
    assert report["error"]["code"] == "SYNC_UNMERGED", report
    assert NOTE in report["error"]["message"]
    assert git(fleet.root, "--git-dir", str(fleet.hub), "rev-parse", "main").stdout == hub
    assert "<<<<<<<" in (b / NOTE).read_text()  # left as the user's to resolve

    fleet.write("b", NOTE, BASE.replace("The plan.", "Both plans, resolved."))
    git(b, "add", NOTE)
    assert fleet.sync("b")["commit"]
    fleet.sync("c")
    assert fleet.read("c", NOTE) == BASE.replace("The plan.", "Both plans, resolved.")


def test_after_the_abort_the_round_syncs(fleet: Fleet) -> None:
    fleet.start({NOTE: BASE})
    _cherry_pick(fleet)
    fleet.sync("b", exit_code=1)
    git(fleet.machines["b"], "cherry-pick", "--abort")
    assert [r["status"] for r in fleet.sync("b")["remotes"]] == ["ok"]
    fleet.sync("c")
    assert fleet.read("c", NOTE) == BASE.replace("The plan.", "Main's plan.")
