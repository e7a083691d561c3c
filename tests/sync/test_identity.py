"""Issue 30, a newcomer's machine: a commit git will not make as configured.

A fresh machine often has no git identity (no ``user.name`` / ``user.email``, and a host name
git may not guess an address from), and many developers sign every commit
(``commit.gpgsign``) with a key that is not usable on every machine. A sync round's commit
then failed as GIT_FAILED with "run the same git command by hand": now each is its own typed
error whose hint is the fix, the one-shot command's and the merge's alike, and nothing is
committed or lost.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitsync.kit import git
from tests.sync.kit import Fleet

NOTE = "notes/plan.md"


def _without_identity(fleet: Fleet, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Machine b as a fresh machine: no identity anywhere, and git told not to guess one (a host
    with a domain would let it)."""
    bare = tmp_path / "bare-gitconfig"
    bare.write_text("[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(bare))
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    git(fleet.machines["b"], "config", "user.useConfigOnly", "true")


def test_no_identity_is_said_with_its_fix(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fleet.start({NOTE: "# Plan\n"})
    _without_identity(fleet, monkeypatch, tmp_path)
    fleet.write("b", NOTE, "# Plan\n\nb's line\n")
    report = fleet.sync("b", exit_code=1)
    assert report["error"]["code"] == "GIT_NO_IDENTITY", report
    assert "git config --global user.email" in report["error"]["hint"]
    assert fleet.read("b", NOTE) == "# Plan\n\nb's line\n"

    git(fleet.machines["b"], "config", "user.name", "B")
    git(fleet.machines["b"], "config", "user.email", "b@example.invalid")
    assert fleet.sync("b")["commit"]


def test_a_merge_without_identity_is_that_remotes_error(
    fleet: Fleet, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Nothing of b's own to commit, but c's work to merge: the merge commit needs the identity."""
    fleet.start({NOTE: "# Plan\n\nfirst\n\nlast\n"})
    fleet.write("b", NOTE, "# Plan\n\nb's first\n\nlast\n")
    git(fleet.machines["b"], "commit", "--quiet", "-am", "b")
    fleet.write("c", NOTE, "# Plan\n\nfirst\n\nc's last\n")
    fleet.sync("c")
    _without_identity(fleet, monkeypatch, tmp_path)
    report = fleet.sync("b", exit_code=1)
    (remote,) = report["remotes"]
    assert remote["code"] == "GIT_NO_IDENTITY", remote
    # The merge git could not commit is undone by the next round, which merges again.
    git(fleet.machines["b"], "config", "user.name", "B")
    git(fleet.machines["b"], "config", "user.email", "b@example.invalid")
    again = fleet.sync("b")
    assert [r["merged"] for r in again["remotes"]] == [True], again
    assert fleet.read("b", NOTE) == "# Plan\n\nb's first\n\nc's last\n"
    assert fleet.clean("b")


def test_signing_that_cannot_sign_is_said_with_its_fix(fleet: Fleet, tmp_path: Path) -> None:
    fleet.start({NOTE: "# Plan\n"})
    b = fleet.machines["b"]
    git(b, "config", "commit.gpgsign", "true")
    git(b, "config", "gpg.program", str(tmp_path / "no-such-gpg"))
    fleet.write("b", NOTE, "# Plan\n\nb's line\n")
    report = fleet.sync("b", exit_code=1)
    assert report["error"]["code"] == "GIT_SIGNING_FAILED", report
    assert "commit.gpgsign false" in report["error"]["hint"]
    git(b, "config", "commit.gpgsign", "false")
    assert fleet.sync("b")["commit"]


def test_a_filter_this_machine_cannot_run_is_said_with_its_fix(fleet: Fleet) -> None:
    """A .gitattributes from a machine with Git LFS, and a machine without it: `git add` stopped
    with GIT_FAILED, "run it by hand"."""
    fleet.start({NOTE: "# Plan\n"})
    b = fleet.machines["b"]
    fleet.write("b", ".gitattributes", "*.pdf filter=lfs diff=lfs merge=lfs -text\n")
    git(b, "config", "filter.lfs.clean", "no-such-git-lfs clean -- %f")
    git(b, "config", "filter.lfs.required", "true")
    (b / "paper.pdf").write_bytes(b"%PDF-1.4\n")
    report = fleet.sync("b", exit_code=1)
    assert report["error"]["code"] == "GIT_FILTER_FAILED", report
    assert "'lfs'" in report["error"]["message"] and "git lfs install" in report["error"]["hint"]
