"""Issue 24 item 11: nothing either side wrote vanishes in the merge driver without a conflict.

Each shape is a note's base, ours and theirs. The driver runs as git runs it
(``shardpy merge-file --driver %O %A %B %P`` in a child process, the result in
``%A``), and in-process with the sides swapped. Either the merge is a
conflict (exit 1, markers in the file), or every change of each side is in
the result: its body lines as written, its frontmatter data (a key set,
changed or removed; list items added or removed), its comments, a BOM or a
line-ending style it changed, a frontmatter block it removed. Where no side
has frontmatter the driver is git's line merge: the result equals
``git merge-file``'s wherever git merges cleanly.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest

from shardpy.gitsync.merge import merge_bytes
from shardpy.merge.frontmatter import split_frontmatter
from shardpy.yamlsafe import load
from tests.merge.gitref import GitRef
from tests.shardkit import run_shardpy

BOM = "\ufeff"
NOTE = "---\ntitle: T\nstatus: draft\ntags: [a, b]\n---\n# Note\n\none\ntwo\nthree\nfour\nfive\n"
PLAIN = "# Plain\n\none\ntwo\nthree\nfour\nfive\n"

Expect = Literal["clean", "conflict", "either"]


@dataclass(frozen=True)
class Shape:
    base: str
    ours: str
    theirs: str
    expect: Expect = "either"


def edit(text: str, *pairs: tuple[str, str]) -> str:
    for old, new in pairs:
        assert old in text, old
        text = text.replace(old, new, 1)
    return text


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def fm(lines: str, base: str = NOTE) -> str:
    """NOTE with ``status: draft`` replaced by ``lines``."""
    return edit(base, ("status: draft", lines))


DEEP = "x: " + "[" * 5000 + "]" * 5000
BLOCK = "desc: |\n  line 1\n  line 2"
NESTED = "meta:\n  a: 1\n  b: 2"
ANCHORS = "x: &x {k: 1}\ny: *x"

SHAPES: dict[str, Shape] = {
    "plain CRLF": Shape(
        crlf(PLAIN), crlf(edit(PLAIN, ("one", "one (ours)"))), crlf(edit(PLAIN, ("five", "5"))), "clean"
    ),
    "plain BOM added by ours": Shape(
        PLAIN, BOM + edit(PLAIN, ("five", "5")), edit(PLAIN, ("two", "2")), "clean"
    ),
    "plain no final newline": Shape(PLAIN, PLAIN.rstrip("\n"), edit(PLAIN, ("one", "1")), "clean"),
    "plain both insert at one place": Shape(
        PLAIN, edit(PLAIN, ("two\n", "two\nours\n")), edit(PLAIN, ("two\n", "two\ntheirs\n"))
    ),
    "CRLF": Shape(crlf(NOTE), crlf(edit(NOTE, ("one", "1"))), crlf(fm("status: done")), "clean"),
    "CRLF made by ours": Shape(NOTE, crlf(edit(NOTE, ("title: T", "title: T2"))), fm("status: done")),
    "BOM added by ours": Shape(NOTE, BOM + edit(NOTE, ("one", "1")), fm("status: done"), "clean"),
    "BOM added by theirs": Shape(NOTE, edit(NOTE, ("one", "1")), BOM + fm("status: done"), "clean"),
    "no final newline": Shape(NOTE, NOTE.rstrip("\n"), fm("status: done"), "clean"),
    "inline comment added": Shape(
        NOTE, fm("status: done"), edit(NOTE, ("title: T", "title: T  # the title")), "clean"
    ),
    "comment line added": Shape(
        NOTE, fm("status: done"), edit(NOTE, ("tags:", "# why these\ntags:")), "clean"
    ),
    "comments on both sides": Shape(
        NOTE, fm("status: done  # ours"), edit(NOTE, ("tags: [a, b]", "tags: [a, b]  # theirs"))
    ),
    "comment removed": Shape(
        edit(NOTE, ("title: T", "title: T  # old")), edit(NOTE, ("title: T", "title: T")), fm("status: done")
    ),
    "key order": Shape(
        NOTE,
        edit(NOTE, ("title: T\nstatus: draft\n", "status: draft\ntitle: T\n")),
        edit(NOTE, ("[a, b]", "[a, b, c]")),
    ),
    "duplicate tags": Shape(
        NOTE, edit(NOTE, ("[a, b]", "[a, a, b, x]")), edit(NOTE, ("[a, b]", "[a, b, c]")), "clean"
    ),
    "block list tags": Shape(
        edit(NOTE, ("tags: [a, b]", "tags:\n  - a\n  - b")),
        edit(NOTE, ("tags: [a, b]", "tags:\n  - a\n  - b\n  - c")),
        edit(NOTE, ("tags: [a, b]", "tags:\n  - a\n  - d")),
        "clean",
    ),
    "multi-line value": Shape(
        fm(BLOCK), fm(BLOCK + " (ours)"), edit(fm(BLOCK), ("title: T", "title: T3")), "clean"
    ),
    "multi-line value both": Shape(fm(BLOCK), fm(BLOCK + " (ours)"), fm(BLOCK + " (theirs)"), "conflict"),
    "nested maps": Shape(fm(NESTED), fm("meta:\n  a: 10\n  b: 2"), fm("meta:\n  a: 1\n  b: 20"), "clean"),
    "anchors": Shape(fm(ANCHORS), edit(fm(ANCHORS), ("title: T", "title: T4")), fm(ANCHORS + "\nz: 3")),
    "dates": Shape(
        fm("date: 2026-01-01"),
        fm("date: 2026-02-01"),
        edit(fm("date: 2026-01-01"), ("title: T", "title: T5")),
        "clean",
    ),
    "invalid YAML on one side": Shape(NOTE, fm("status: done"), fm("status: [unclosed"), "conflict"),
    "frontmatter removed, other changed it": Shape(
        NOTE, fm("status: done"), NOTE.split("---\n", 2)[2], "conflict"
    ),
    "frontmatter removed, other changed the body": Shape(
        NOTE, edit(NOTE, ("five", "5")), NOTE.split("---\n", 2)[2], "clean"
    ),
    "frontmatter added by one side": Shape(
        PLAIN, "---\ntitle: N\n---\n" + PLAIN, edit(PLAIN, ("five", "5")), "clean"
    ),
    "both add keys": Shape(NOTE, fm("status: draft\nowner: me"), fm("status: draft\nprio: high"), "clean"),
    "one key changed differently": Shape(NOTE, fm("status: done"), fm("status: blocked"), "conflict"),
    "quoting changed": Shape(NOTE, edit(NOTE, ("title: T", "title: 'T'")), fm("status: done")),
    "dots closer and unicode": Shape(
        edit(NOTE, ("---\n#", "...\n#")),
        edit(NOTE, ("---\n#", "...\n#"), ("title: T", "title: Tē 🎉")),
        fm("status: ok"),
    ),
    "5,000-deep YAML on one side": Shape(NOTE, fm("status: done"), fm("status: draft\n" + DEEP)),
}


# -- what a side wrote -------------------------------------------------------
def _norm(text: str) -> str:
    return text.removeprefix(BOM).replace("\r\n", "\n")


def _endings(text: str) -> str | None:
    crlf_n = text.count("\r\n")
    lf_n = text.count("\n") - crlf_n
    return None if bool(crlf_n) == bool(lf_n) else ("crlf" if crlf_n else "lf")


def _added(old: str, new: str) -> list[str]:
    a, b = old.split("\n"), new.split("\n")
    out: list[str] = []
    for op, _, _, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op in ("replace", "insert"):
            out += b[j1:j2]
    return out


_COMMENT = re.compile(r"(?:^|[ \t])(#.*)$")


def _comments(block: str) -> Counter[str]:
    return Counter(m.group(1).rstrip() for line in block.split("\n") if (m := _COMMENT.search(line)))


def _data(inner: str | None) -> Any:
    if inner is None:
        return {}
    try:
        return load(inner) or {}
    except Exception:
        return None  # not YAML: the block's lines are compared as written


def _data_kept(b: Any, s: Any, r: Any, where: str) -> list[str]:
    if not isinstance(r, dict):
        return [f"{where}: result is not a mapping"]
    out: list[str] = []
    for k in set(b) | set(s):
        bv, sv = b.get(k, "<absent>"), s.get(k, "<absent>")
        if bv == sv:
            continue
        rv = r.get(k, "<absent>")
        if isinstance(bv, dict) and isinstance(sv, dict):
            out += _data_kept(bv, sv, rv, f"{where}{k}.")
        elif isinstance(bv, list) and isinstance(sv, list) and isinstance(rv, list):
            lost = [x for x in sv if x not in bv and x not in rv] + [x for x in bv if x not in sv and x in rv]
            out += [f"{where}{k}: item {x!r}" for x in lost]
        elif rv != sv:
            out.append(f"{where}{k}: {sv!r} became {rv!r}")
    return out


def _frontmatter_kept(base: str, side: str, result: str) -> list[str]:
    bfm, _ = split_frontmatter(base)
    sfm, _ = split_frontmatter(side)
    rfm, _ = split_frontmatter(result)
    if (bfm.block if bfm else "") == (sfm.block if sfm else ""):
        return []
    if sfm is None:
        return [] if rfm is None else ["a frontmatter block the side removed"]
    if rfm is None:
        return ["the side's frontmatter block"]
    added = Counter(_comments(sfm.block)) - _comments(bfm.block if bfm else "")
    out = [f"comment {c!r}" for c in added if _comments(rfm.block)[c] < added[c]]
    gone = _comments(bfm.block if bfm else "") - _comments(sfm.block)
    out += [
        f"removed comment {c!r} is back" for c in gone if _comments(rfm.block)[c] > _comments(sfm.block)[c]
    ]
    sdata = _data(sfm.inner)
    if sdata is None:
        rlines = set(rfm.block.split("\n"))
        return out + [line for line in _added(bfm.block if bfm else "", sfm.block) if line not in rlines]
    return out + _data_kept(_data(bfm.inner if bfm else None) or {}, sdata, _data(rfm.inner), "")


def _lost(base: str, side: str, result: str) -> list[str]:
    """What ``side`` wrote (against ``base``) that ``result`` does not hold."""
    out: list[str] = []
    if side.startswith(BOM) != base.startswith(BOM) and result.startswith(BOM) != side.startswith(BOM):
        out.append("BOM")
    if _endings(side) != _endings(base) and _endings(side) and _endings(result) != _endings(side):
        out.append(f"line endings {_endings(side)}")
    b, s, r = _norm(base), _norm(side), _norm(result)
    bbody, sbody, rbody = (split_frontmatter(x)[1] if split_frontmatter(x)[0] else x for x in (b, s, r))
    rlines = set(rbody.split("\n"))
    out += [f"body line {line!r}" for line in _added(bbody, sbody) if line not in rlines]
    return out + _frontmatter_kept(b, s, r)


def _check(shape: Shape, ours: str, theirs: str, result: str, clean: bool) -> None:
    if not clean:
        assert "<<<<<<< " in result and ">>>>>>> " in result, result[:400]
        assert shape.expect != "clean", f"a conflict where a clean merge keeps both:\n{result}"
        return
    assert shape.expect != "conflict", f"clean, but both sides changed the same thing:\n{result}"
    lost = _lost(shape.base, ours, result) + _lost(shape.base, theirs, result)
    assert not lost, f"clean, but lost {lost}:\n{result}"


@pytest.fixture(scope="module")
def gitref(tmp_path_factory: pytest.TempPathFactory) -> GitRef:
    return GitRef(tmp_path_factory.mktemp("gitref"))


@pytest.mark.parametrize("name", list(SHAPES))
def test_the_driver_keeps_what_each_side_wrote_or_reports_a_conflict(
    name: str, tmp_path: Path, gitref: GitRef
) -> None:
    shape = SHAPES[name]
    files = {}
    for role, text in (("base", shape.base), ("ours", shape.ours), ("theirs", shape.theirs)):
        files[role] = tmp_path / f"{role}.md"
        files[role].write_bytes(text.encode("utf-8"))
    done = run_shardpy(
        "merge-file", "--driver", files["base"], files["ours"], files["theirs"], "n.md", cwd=tmp_path
    )
    assert done.returncode in (0, 1), done.stderr
    assert "Traceback" not in done.stderr
    result = files["ours"].read_bytes().decode("utf-8")
    _check(shape, shape.ours, shape.theirs, result, done.returncode == 0)

    swapped = merge_bytes(shape.base.encode(), shape.theirs.encode(), shape.ours.encode(), "n.md")
    _check(shape, shape.theirs, shape.ours, swapped.data.decode("utf-8"), swapped.clean)

    git_text, git_conflicts = gitref.merge_file(shape.base, shape.ours, shape.theirs)
    if name.startswith("plain") and git_conflicts == 0:
        assert result == git_text  # no frontmatter anywhere: git's own line merge


VALUES = "user_name: ''\nlanguage: en\ntheme: dark\n"


@pytest.mark.parametrize(
    ("ours", "theirs"),
    [
        # The commenting side sorts second (by its bytes): a key-level merge starts from the other.
        (
            edit(VALUES, ("user_name: ''", "user_name: Bea  # me")),
            edit(VALUES, ("theme: dark", "theme: light")),
        ),
        (
            edit(VALUES, ("user_name: ''", "user_name: Zed\n# why fr")),
            edit(VALUES, ("theme: dark", "theme: light")),
        ),
        (
            edit(VALUES, ("theme: dark", "theme: light")),
            edit(VALUES, ("user_name: ''", "# who\nuser_name: ''")),
        ),
    ],
)
def test_shard_values_keep_both_sides_comments_or_conflict(ours: str, theirs: str) -> None:
    for o, t in ((ours, theirs), (theirs, ours)):
        r = merge_bytes(VALUES.encode(), o.encode(), t.encode(), "shard-values.yaml")
        text = r.data.decode()
        if r.clean:
            assert not _frontmatter_kept_values(o, text) and not _frontmatter_kept_values(t, text), text
        else:
            assert text == o  # kept ours (a values file never gets markers)


def _frontmatter_kept_values(side: str, result: str) -> list[str]:
    wrap = "---\n{}---\n"
    return _frontmatter_kept(wrap.format(VALUES), wrap.format(side), wrap.format(result))
