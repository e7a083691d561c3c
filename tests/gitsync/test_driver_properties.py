"""The driver against `git merge-file`, and its convergence, on random note triples."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from shardpy.gitsync.merge import merge_bytes
from shardpy.notes.frontmatter import split_frontmatter
from tests.merge.gitref import GitRef
from tests.merge.strategies import triples

GIT = settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _no_frontmatter(*texts: str) -> bool:
    return not any(t.startswith("---") for t in texts)


@GIT
@given(triples())
def test_identical_to_git_merge_file_where_git_is_clean(gitref: GitRef, abc: tuple[str, str, str]) -> None:
    base, ours, theirs = abc
    if not _no_frontmatter(base, ours, theirs):
        event("frontmatter: skipped")
        return
    expected, conflicts = gitref.merge_file(base, ours, theirs)
    got = merge_bytes(base.encode(), ours.encode(), theirs.encode(), "notes/n.md")
    if conflicts == 0:
        event("git clean")
        assert got.clean
        assert got.data == expected.encode()
    else:
        event("git conflict")


@FAST
@given(triples())
def test_merging_a_into_b_equals_b_into_a_where_clean(abc: tuple[str, str, str]) -> None:
    base, a, b = (t.encode() for t in abc)
    ab = merge_bytes(base, a, b, "n.md")
    ba = merge_bytes(base, b, a, "n.md")
    assert ab.clean == ba.clean
    if ab.clean:
        assert ab.data == ba.data


KEYS = ["status", "priority", "owner"]
VALUES = ["draft", "done", "high", "low", "x y", "é"]
TAGS = ["work", "home", "idea", "later", "日本"]


@st.composite
def fm(draw: st.DrawFn) -> dict[str, Any]:
    out: dict[str, Any] = {k: draw(st.sampled_from(VALUES)) for k in KEYS if draw(st.booleans())}
    out["tags"] = draw(st.lists(st.sampled_from(TAGS), unique=True, max_size=4))
    return out


@st.composite
def fm_edit(draw: st.DrawFn, base: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for k in KEYS:
        roll = draw(st.integers(0, 5))
        if roll == 0:
            out.pop(k, None)
        elif roll == 1:
            out[k] = draw(st.sampled_from(VALUES))
    tags = [t for t in out["tags"] if draw(st.integers(0, 4)) > 0]
    tags += [t for t in draw(st.lists(st.sampled_from(TAGS), unique=True, max_size=2)) if t not in tags]
    out["tags"] = tags
    return out


def render(data: dict[str, Any], body: str) -> bytes:
    lines = [f"{k}: {v}" for k, v in data.items() if k != "tags"]
    lines.append("tags: [" + ", ".join(data["tags"]) + "]")
    return ("---\n" + "\n".join(lines) + "\n---\n" + body).encode()


@FAST
@given(st.data())
def test_notes_with_frontmatter_converge_and_keep_valid_yaml(data: st.DataObject) -> None:
    base_fm = data.draw(fm())
    bodies = data.draw(triples())
    if not _no_frontmatter(*bodies):
        return
    base = render(base_fm, bodies[0])
    a = render(data.draw(fm_edit(base_fm)), bodies[1])
    b = render(data.draw(fm_edit(base_fm)), bodies[2])
    ab = merge_bytes(base, a, b, "n.md")
    ba = merge_bytes(base, b, a, "n.md")
    assert ab.clean == ba.clean
    if ab.clean:
        event("clean")
        assert ab.data == ba.data
    for result in (ab, ba):
        # Never markers inside YAML: the frontmatter of every result parses.
        assert split_frontmatter(result.data.decode()).state == "present"


@FAST
@given(st.data())
def test_a_block_all_sides_share_merges_as_merge_document_does(data: st.DataObject) -> None:
    """The driver merges a note whose frontmatter block is the same on all three sides by lines
    (issue 30, the driver's cost): the bytes and the verdict merge_document gives, in both orders."""
    from shardpy.merge import merge_document

    block = render(data.draw(fm()), "")
    bodies = data.draw(triples())
    # LF text: merge_document keeps line ends by its own rules, the driver by _as_sides_wrote.
    assume(not any("\r" in body for body in bodies))
    base, a, b = (block + body.encode() for body in bodies)
    for ours, theirs in ((a, b), (b, a)):
        got = merge_bytes(base, ours, theirs, "n.md")
        first, second = sorted((ours, theirs))
        ref = merge_document(
            base, first, second, user_label="ours", shard_label="theirs", key_conflicts="markers"
        )
        if ref.kind != "clean":
            ref = merge_document(
                base, ours, theirs, user_label="ours", shard_label="theirs", key_conflicts="markers"
            )
        if ours == theirs or base in (ours, theirs):
            continue  # git's own shortcut, before any rule
        event(ref.kind)
        assert got.clean == (ref.kind == "clean")
        assert got.data == ref.data
