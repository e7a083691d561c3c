"""sync merges the files both sides changed in its own process (issue 30, the driver's cost):
the result must be the bytes the per-file merge driver gives under ``git pull``, with and
without a rename (the read-tree path and the ``git merge`` path of shardpy.sync.inprocess)."""

from __future__ import annotations

import pytest

from tests.gitsync.kit import git
from tests.sync.kit import Fleet

BASE = {
    "notes/keys.md": "---\ntitle: Keys\nstatus: draft\nowner: sam\ntags: [a]\n---\n# Keys\n\none\ntwo\n",
    "notes/body.md": "# Body\n\none\ntwo\nthree\nfour\nfive\nsix\n",
    "notes/clash.md": "---\ntitle: Clash\n---\nline\n",
    "notes/gone.md": "---\ntitle: Gone\n---\nkeep me\n",
    "notes/moved.md": "---\ntitle: Moved\n---\n" + "".join(f"text {i}\n" for i in range(12)),
    # Shapes the driver merges by lines as a whole, or key by key (issue 30, the driver's
    # cost): the frontmatter one side changed, a body holding `---` rules, CRLF.
    "notes/one-side.md": "---\ntitle: One\nstatus: draft\n---\n" + "".join(f"l{i}\n" for i in range(8)),
    "notes/rules.md": "---\ntitle: Rules\n---\n---\ntop\n---\nmiddle\n\n---\nend\n",
    "notes/crlf.md": "---\r\ntitle: Crlf\r\n---\r\none\r\ntwo\r\nthree\r\nfour\r\n",
}


def _edits(fleet: Fleet, rename: bool) -> None:
    fleet.write("a", "notes/keys.md", BASE["notes/keys.md"].replace("draft", "done").replace("[a]", "[a, x]"))
    fleet.write("b", "notes/keys.md", BASE["notes/keys.md"].replace("sam", "kim").replace("[a]", "[a, y]"))
    fleet.write("a", "notes/body.md", BASE["notes/body.md"].replace("two", "two (a)"))
    fleet.write("b", "notes/body.md", BASE["notes/body.md"].replace("five", "five (b)"))
    fleet.write("a", "notes/clash.md", "---\ntitle: Clash\n---\nline on a\n")
    fleet.write("b", "notes/clash.md", "---\ntitle: Clash\n---\nline on b\n")
    fleet.write("a", "notes/gone.md", "---\ntitle: Gone\n---\nkeep me, edited\n")
    (fleet.machines["b"] / "notes/gone.md").unlink()
    fleet.write("b", "notes/new.md", "# New on b\n")
    one = BASE["notes/one-side.md"]
    fleet.write("a", "notes/one-side.md", one.replace("draft", "done").replace("l1\n", "l1 (a)\n"))
    fleet.write("b", "notes/one-side.md", one.replace("l6\n", "l6 (b)\n"))
    rules = BASE["notes/rules.md"]
    fleet.write("a", "notes/rules.md", rules.replace("title: Rules\n", "title: Rules\ntype: hr\n"))
    fleet.write("b", "notes/rules.md", rules.replace("---\ntop", "---\n---\ntop").replace("end", "end (b)"))
    crlf = BASE["notes/crlf.md"]
    fleet.write("a", "notes/crlf.md", crlf.replace("one", "one (a)"))
    fleet.write("b", "notes/crlf.md", crlf.replace("four", "four (b)"))
    if rename:
        git(fleet.machines["a"], "mv", "notes/moved.md", "notes/moved-on-a.md")
        fleet.write("b", "notes/moved.md", BASE["notes/moved.md"].replace("text 11", "text 11 (b)"))


def _work_tree(fleet: Fleet, machine: str) -> dict[str, bytes]:
    root = fleet.machines[machine]
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*.md"))
        if ".git" not in p.parts
    }


@pytest.mark.parametrize("rename", [False, True], ids=["read-tree", "git-merge"])
def test_sync_merges_as_the_driver_does(fleet: Fleet, rename: bool) -> None:
    fleet.start(BASE)
    _edits(fleet, rename)
    for m in ("a", "b"):  # plain commits: nothing stamped, the same inputs for both merges
        git(fleet.machines[m], "add", "-A")
        git(fleet.machines[m], "commit", "-qm", f"edits on {m}")
    git(fleet.machines["a"], "push", "-q", "origin", "main")
    b = fleet.machines["b"]
    before = git(b, "rev-parse", "HEAD").stdout.strip()
    git(b, "pull", "--no-rebase", "--no-edit", "origin", "main", ok=False)  # the driver, per file
    by_driver = _work_tree(fleet, "b")
    git(b, "merge", "--abort", ok=False)
    git(b, "reset", "-q", "--hard", before)
    report = fleet.sync("b", "--no-push")
    assert report["remotes"][0]["merged"] is True
    assert sorted(report["remotes"][0]["conflicts"]) == ["notes/clash.md", "notes/gone.md"]
    assert _work_tree(fleet, "b") == by_driver
    assert fleet.clean("b")  # everything committed, nothing left mid-merge


def test_a_note_edited_during_the_round_stops_the_merge_cleanly(fleet: Fleet) -> None:
    """read-tree refuses to overwrite a file changed since the round's commit: nothing is
    merged, no merge is left behind, and the next round commits the edit and merges."""
    from shardpy.errors import ShardpyError
    from shardpy.sync.inprocess import merge_plumbing, plan_plumbing
    from shardpy.sync.plan import plan_sync

    fleet.start(BASE)
    fleet.write("a", "notes/body.md", BASE["notes/body.md"].replace("one", "one (a)"))
    fleet.sync("a")
    fleet.write("b", "notes/keys.md", BASE["notes/keys.md"].replace("sam", "kim"))
    fleet.sync("b", "--no-push", "--remote", "origin")  # committed and merged: b is ahead now
    fleet.write("a", "notes/body.md", BASE["notes/body.md"].replace("six", "six (a)"))
    fleet.sync("a")
    b = fleet.machines["b"]
    git(b, "fetch", "-q", "origin")
    fleet.write("b", "notes/body.md", "edited while the round ran\n")  # not committed
    plan = plan_sync(b)
    fast = plan_plumbing(plan.repo, "refs/remotes/origin/main")
    assert fast is not None
    try:
        merge_plumbing(plan.repo, plan.prefix, *fast, lambda ops: None)
    except ShardpyError as exc:
        assert exc.code == "SYNC_MERGE_FAILED"
    else:
        raise AssertionError("read-tree overwrote an edited note")
    assert not (b / ".git/MERGE_HEAD").exists()
    assert fleet.read("b", "notes/body.md") == "edited while the round ran\n"
    fleet.settle()
    assert fleet.read("c", "notes/body.md") == fleet.read("b", "notes/body.md")


def test_a_note_whose_name_holds_a_line_break_merges(fleet: Fleet) -> None:
    """git allows a line break in a path, so another machine can name a note so. The merged file's
    index entry was given to git line by line: "malformed index info", the merge left for the next
    round, which failed the same way, for ever. Given NUL-separated, it merges like any note."""
    name = "notes/odd\nname.md"
    text = "---\ntitle: Odd\n---\n" + "".join(f"l{i}\n" for i in range(6))
    fleet.start({name: text})
    fleet.write("a", name, text.replace("l1\n", "l1 (a)\n"))
    fleet.sync("a")
    fleet.write("b", name, text.replace("l5\n", "l5 (b)\n"))
    report = fleet.sync("b")
    assert report["remotes"][0]["status"] == "ok" and report["remotes"][0]["merged"], report
    merged = fleet.read("b", name)
    assert "l1 (a)" in merged and "l5 (b)" in merged
    assert fleet.clean("b")
