"""sync merges the files both sides changed in its own process (issue 30, the driver's cost):
the result must be the bytes the per-file merge driver gives under ``git pull``, with and
without a rename (the read-tree path and the ``git merge`` path of shardpy.sync.inprocess)."""

from __future__ import annotations

import os
from pathlib import Path

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
    from shardpy.sync.inprocess import heads, merge_plumbing, plan_plumbing
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
    known = heads(plan.repo, "refs/remotes/origin/main")
    assert known is not None
    fast = plan_plumbing(plan.repo, known)
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


# Names git allows and an editor can make; another machine may send any of them. Each broke a round
# for good before: a line break (malformed index info), a backslash (the stamps' writer refuses it:
# the whole sync stopped), bytes that are not UTF-8 (the merged file went to a U+FFFD twin, the
# original stayed unmerged and no commit could be made).
ODD_NAMES = [
    b"notes/odd\nname.md",
    b"notes/back\\slash.md",
    b"notes/latin1-\xe9.md",
    b"notes/tab\there.md",
    b"notes/-dash.md",
    b"notes/--upload-pack=x.md",
    "notes/cafe\u0301 nfd.md".encode(),
]


def _put(root: Path, name: bytes, data: bytes) -> None:
    (root / os.fsdecode(name)).write_bytes(data)


def test_notes_with_odd_names_merge_and_are_reported_printably(fleet: Fleet) -> None:
    text = b"---\ntitle: Odd\nstatus: one\n---\n" + b"".join(b"l%d\n" % i for i in range(6))
    fleet.start({"notes/plain.md": "# Plain\n"})
    a, b = fleet.machines["a"], fleet.machines["b"]
    clash = b"notes/latin1-clash-\xe9.md"  # both sides change its one line: markers
    for name in ODD_NAMES:
        _put(a, name, text)
    _put(a, clash, b"# Clash\n\nline\n")
    fleet.sync("a")
    fleet.sync("b")
    for name in ODD_NAMES:
        _put(a, name, text.replace(b"l1\n", b"l1 (a)\n").replace(b"status: one", b"status: a"))
    _put(a, clash, b"# Clash\n\nline on a\n")
    fleet.sync("a")
    for name in ODD_NAMES:
        _put(b, name, text.replace(b"l5\n", b"l5 (b)\n").replace(b"title: Odd", b"title: Odd\nowner: b"))
    _put(b, clash, b"# Clash\n\nline on b\n")
    report = fleet.sync("b")  # printable JSON (the kit parses it), exit 0
    remote = report["remotes"][0]
    assert remote["status"] == "ok" and remote["merged"], report
    assert remote["conflicts"] == ["notes/latin1-clash-\ufffd.md"]
    assert report["unstamped"] == ["notes/back\\slash.md"]  # committed, not stamped: not written
    for name in ODD_NAMES:
        merged = (b / os.fsdecode(name)).read_bytes()
        assert b"l1 (a)" in merged and b"l5 (b)" in merged and b"owner: b" in merged, name
    assert fleet.clean("b")
    fleet.settle()


def test_a_name_with_a_carriage_return_merges_and_the_next_round_goes_on(fleet: Fleet) -> None:
    """git's output was decoded with universal newlines: "cr\\rname.md" came back "cr\\nname.md",
    that other path was given back to git (a phantom file staged, the real one left unmerged), and
    every round after stopped at the commit (helper-found; gitrun.run decodes it itself now)."""
    name, data = "notes/cr\rname.md", ".obsidian/cr\rdata.json"
    fleet.start({name: "a\nb\nc\n", data: '{\n  "t": 1\n}\n'})
    fleet.write("b", name, "a (b)\nb\nc\n")
    fleet.write("b", data, '{\n  "t": 2\n}\n')
    fleet.sync("b")
    fleet.write("c", name, "a\nb\nc (c)\n")
    fleet.write("c", data, '{\n  "t": 3\n}\n')
    remote = fleet.sync("c")["remotes"][0]
    assert remote["merged"] and remote["kept"] == [data]
    assert fleet.read("c", name) == "a (b)\nb\nc (c)\n"
    kept = fleet.shardpy("c", "status", "--json").json()["git"]["kept_whole"]
    assert [k["path"] for k in kept] == [data]  # the record gives the name back as it is
    fleet.write("c", "notes/next.md", "# next\n")
    assert fleet.sync("c")["committed"] == ["notes/next.md"]  # the next round goes on
    fleet.settle()
    assert len({fleet.read(m, name) for m in ("a", "b", "c")}) == 1


def test_git_names_the_merged_blobs_it_stores(tmp_path: Path) -> None:
    """git_writes asks fast-import for each stored blob's id (`get-mark`) rather than hashing the
    bytes here: the index then holds git's ids, equal to blob_id's, for bytes of any shape."""
    from shardpy.gitsync.repo import open_repo_at
    from shardpy.sync.inprocess import blob_id, git_writes

    git(tmp_path, "init", "-q")
    git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "x")
    results = {
        "a.md": ("100644", b"alpha\n"),
        "dir/b.md": ("100644", b"no final newline"),
        "c.md": ("100644", b""),
        "d.bin": ("100644", bytes(range(256)) * 40),
    }
    git_writes(open_repo_at(tmp_path)[0], results)
    listed = git(tmp_path, "ls-files", "-s").stdout
    staged = {line.split("\t")[1]: line.split()[1] for line in listed.splitlines()}
    assert staged == {path: blob_id(data) for path, (_, data) in results.items()}
    for path, (_, data) in results.items():
        assert (tmp_path / path).read_bytes() == data


@pytest.mark.parametrize("renamed_on", ["here", "there", "neither"])
def test_renames_are_seen_on_either_side_in_one_git_command(tmp_path: Path, renamed_on: str) -> None:
    """plan_plumbing's rename check diffs the base to each tip in one `diff-tree --stdin` ("<tip>
    <base>": a commit and its parent); a rename on either side sends the merge to git's own."""
    from shardpy.gitsync.repo import open_repo_at
    from shardpy.sync.inprocess import _renames

    def commit(message: str) -> str:
        git(tmp_path, "add", "-A")
        git(
            tmp_path,
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            message,
        )
        return git(tmp_path, "rev-parse", "HEAD").stdout.strip()

    git(tmp_path, "init", "-q")
    (tmp_path / "note.md").write_text("".join(f"line {i}\n" for i in range(20)))
    base = commit("base")
    tips = {}
    for side in ("here", "there"):
        git(tmp_path, "checkout", "-q", "-B", side, base)
        if side == renamed_on:
            git(tmp_path, "mv", "note.md", "moved.md")
        else:
            (tmp_path / "other.md").write_text(f"{side}\n")
        tips[side] = commit(side)
    repo = open_repo_at(tmp_path)[0]
    assert _renames(repo, base, (tips["here"], tips["there"])) is (renamed_on != "neither")
