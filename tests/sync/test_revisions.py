"""Issue 30, revision stamps on notes written with CRLF line ends or a BOM.

Stamps were read and written on plain LF notes only, so a note saved by a Windows editor, and
every note of a repository checked out with ``core.autocrlf=true`` (git's usual setting on
Windows), was never stamped: a scalar key changed on two machines stayed a conflict block for a
human, the one thing stamps exist to prevent. Now a note is stamped and settled on its LF text
and given back as it was written (BOM and line ends); a note with mixed line ends is still left
unstamped (no one way to write it back).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.merge.revisions import REV_KEY, resolve_sides, stamp_note
from tests.gitsync.kit import git
from tests.sync.kit import MACHINES, Fleet

BOM = "\ufeff"


def _crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def _note(status: str, body: str = "Body.\n", rev: str | None = None) -> str:
    stamp = f"{REV_KEY}: {rev}\n" if rev else ""
    return f"---\ntitle: Plan\nstatus: {status}\n{stamp}---\n\n{body}"


def test_a_crlf_note_is_stamped_and_keeps_its_line_ends() -> None:
    plain = stamp_note(_note("draft"), _note("done"), "aaaa1111")
    assert plain is not None and f"{REV_KEY}: status=1.aaaa1111\n" in plain
    assert stamp_note(_crlf(_note("draft")), _crlf(_note("done")), "aaaa1111") == _crlf(plain)
    # HEAD's copy as git stores it (LF, core.autocrlf) and the work tree's (CRLF): the same.
    assert stamp_note(_note("draft"), _crlf(_note("done")), "aaaa1111") == _crlf(plain)
    assert stamp_note(_note("draft"), BOM + _note("done"), "aaaa1111") == BOM + plain
    assert stamp_note(_note("draft"), BOM + _crlf(_note("done")), "aaaa1111") == BOM + _crlf(plain)


def test_mixed_line_ends_stay_unstamped() -> None:
    mixed = _note("done").replace("title: Plan\n", "title: Plan\r\n")
    assert stamp_note(_note("draft"), mixed, "aaaa1111") is None
    assert stamp_note(_note("draft"), _note("done").replace("Body.", "Bo\rdy."), "aaaa1111") is None


def test_crlf_sides_are_settled_like_lf_ones() -> None:
    base = _note("draft")
    ours, theirs = _note("done", rev="status=2.aaaa1111"), _note("review", rev="status=3.bbbb2222")
    plain = resolve_sides(base, ours, theirs)
    assert plain is not None and "status: review" in plain[0]
    assert resolve_sides(_crlf(base), _crlf(ours), _crlf(theirs)) == (_crlf(plain[0]), _crlf(plain[1]))
    # Each side keeps its own writing: a Windows machine's CRLF against a LF one.
    assert resolve_sides(base, _crlf(ours), theirs) == (_crlf(plain[0]), plain[1])
    assert resolve_sides(base, BOM + ours, theirs) == (BOM + plain[0], plain[1])


_values = st.sampled_from(["draft", "done", "review", "'quoted'", "2026-12-04", "42", "null", "x y"])
_bodies = st.lists(st.sampled_from(["Body.", "", "- item", "# Heading", "text: like a key"]), max_size=4)


@settings(max_examples=150, deadline=None)
@given(
    old=_values,
    new=_values,
    body=_bodies,
    bom=st.booleans(),
    rev=st.sampled_from([None, "status=4.cccc3333"]),
)
def test_stamping_written_text_is_stamping_its_lf_text(
    old: str, new: str, body: list[str], bom: bool, rev: str | None
) -> None:
    text = "\n".join(body) + "\n"
    before, after = _note(old, text, rev), _note(new, text, rev)
    plain = stamp_note(before, after, "dddd4444")
    written = stamp_note(_crlf(before), (BOM if bom else "") + _crlf(after), "dddd4444")
    assert written == (None if plain is None else (BOM if bom else "") + _crlf(plain))


def test_machines_checking_out_crlf_converge_without_a_human(fleet: Fleet) -> None:
    """core.autocrlf=true on every machine (the work trees hold CRLF, git stores LF): the same key
    changed on two machines ends with one value everywhere, no conflict block."""
    fleet.start({"notes/plan.md": _note("draft")})
    for m in MACHINES:
        git(fleet.machines[m], "config", "core.autocrlf", "true")
        (fleet.machines[m] / "notes/plan.md").unlink()
        git(fleet.machines[m], "checkout", "--", "notes/plan.md")  # checked out again: CRLF
    assert b"\r\n" in (fleet.machines["b"] / "notes/plan.md").read_bytes()
    fleet.write("b", "notes/plan.md", _crlf(_note("done")))
    fleet.sync("b")
    fleet.write("c", "notes/plan.md", _crlf(_note("review", "Body, from c.\n")))
    report = fleet.sync("c")
    assert report["remotes"][0]["conflicts"] == [], report
    fleet.settle()
    texts = {m: (fleet.machines[m] / "notes/plan.md").read_bytes() for m in MACHINES}
    assert len(set(texts.values())) == 1, texts
    final = texts["a"].decode("utf-8")
    assert "<<<<<<<" not in final and final.count("status:") == 1
    assert "Body, from c." in final and "\r\n" in final
