"""Soft delete, restore and purge across machines (issue 30, "Deletes")."""

from __future__ import annotations

import json

import pytest

from tests.gitsync.kit import git
from tests.shardkit import run_shardpy
from tests.sync.kit import MACHINES, Fleet

NOTE = "---\ntitle: Old\nstatus: draft\n---\n# Old\n\nbody\n"
OLD = NOTE.replace("status: draft\n", "status: draft\ndisabled: true\ndisabled_at: 2020-01-01T00:00:00Z\n")


def test_rm_and_restore_are_key_edits_that_merge(fleet: Fleet) -> None:
    fleet.start({"notes/old.md": NOTE})
    out = fleet.shardpy("a", "rm", "notes/old.md", "--json").json()
    assert out == {"note": "notes/old.md", "disabled": True, "changed": True}
    assert fleet.shardpy("a", "rm", "notes/old.md", "--json").json()["changed"] is False
    text = fleet.read("a", "notes/old.md")
    assert "disabled: true\n" in text and "disabled_at: " in text and text.endswith("body\n")
    fleet.write("b", "notes/old.md", NOTE.replace("draft", "done"))  # edited elsewhere meanwhile
    fleet.settle()
    for m in MACHINES:  # the delete and the edit both kept: a disabled note with b's status
        merged = fleet.read(m, "notes/old.md")
        assert "disabled: true" in merged and "status: done" in merged
    fleet.shardpy("c", "restore", "notes/old.md")
    fleet.settle()
    assert "\ndisabled:" not in fleet.read("a", "notes/old.md")
    missing = fleet.shardpy("a", "rm", "notes/none.md", "--json", ok=False)
    assert missing.error_code() == "NOTE_NOT_FOUND"


def test_purge_deletes_old_disabled_notes_and_an_edit_elsewhere_is_kept_loudly(fleet: Fleet) -> None:
    fleet.start({"notes/old.md": OLD, "notes/keep.md": NOTE})
    dry = fleet.shardpy("a", "purge", "--older-than", "30", "--dry-run", "--json").json()
    assert dry["notes"] == ["notes/old.md"] and (fleet.machines["a"] / "notes/old.md").exists()
    fleet.write("b", "notes/old.md", OLD.replace("body", "body, edited on b"))
    done = fleet.shardpy("a", "purge", "--older-than", "30", "--json").json()
    assert done["notes"] == ["notes/old.md"] and done["commit"]
    assert not (fleet.machines["a"] / "notes/old.md").exists()
    assert "shardpy-purge: notes/old.md" in git(fleet.machines["a"], "log", "-1", "--format=%B").stdout
    fleet.sync("a")
    report = fleet.sync("b")
    assert report["remotes"][0]["resurrected"] == ["notes/old.md"]
    fleet.settle()
    for m in MACHINES:  # the edit survives, still disabled; the untouched note stays
        assert "edited on b" in fleet.read(m, "notes/old.md")
        assert (fleet.machines[m] / "notes/keep.md").exists()


def test_the_purge_plan_is_pure_and_counts_from_disabled_at() -> None:
    # plan/purge.py decides over texts it is given (issue 27: plans in plan/, pure): the cutoff
    # is inclusive, a disabled note without a readable time is old, an enabled one never is.
    from datetime import UTC, datetime

    from shardpy.plan.purge import plan_purge

    now = datetime(2020, 1, 31, tzinfo=UTC)
    notes = [
        ("a.md", OLD),  # disabled 2020-01-01: 30 days before now
        ("b.md", OLD.replace("2020-01-01", "2020-01-02")),  # 29 days
        ("c.md", OLD.replace("disabled_at: 2020-01-01T00:00:00Z\n", "disabled_at: someday\n")),
        ("d.md", NOTE),
    ]
    plan = plan_purge("/v", 30, iter(notes), now)
    assert plan.notes == ["a.md", "c.md"]
    assert plan.to_json() == {"vault": "/v", "older_than_days": 30, "notes": ["a.md", "c.md"]}


def test_a_hand_written_disabled_at_without_a_zone_is_read_as_utc() -> None:
    # A note is anyone's to edit (docs/GIT.md, "Deletes"): `disabled_at: 2020-01-01` written by
    # hand (a date, or a time without a zone) is UTC; it made purge's comparison with the aware
    # cutoff raise TypeError, a traceback.
    from datetime import UTC, datetime

    from shardpy.plan.purge import plan_purge

    now = datetime(2020, 1, 31, tzinfo=UTC)
    zones = ["2020-01-01", '"2020-01-01T00:00:00"', "2020-01-01 00:00:00", '"2020-01-02"']
    notes = [
        (f"{i}.md", OLD.replace("disabled_at: 2020-01-01T00:00:00Z\n", f"disabled_at: {v}\n"))
        for i, v in enumerate(zones)
    ]
    assert plan_purge("/v", 30, iter(notes), now).notes == ["0.md", "1.md", "2.md"]


def test_numbers_of_days_or_seconds_that_are_no_number_are_usage_errors(fleet: Fleet) -> None:
    """`purge --older-than inf` ended in a traceback (timedelta overflow) and `sync --watch
    --interval nan` was taken (nan is not below the minimum); a huge finite age is no note.
    Real processes, as a user runs them (the usage error's JSON is the entry point's)."""
    fleet.start({"notes/plan.md": NOTE})
    a = fleet.machines["a"]
    for argv in (
        *(["purge", "--older-than", days, "--dry-run", "--json"] for days in ("inf", "1e309", "nan")),
        ["sync", "--watch", "--interval", "nan", "--json"],
    ):
        done = run_shardpy(*argv, cwd=a)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert json.loads(done.stdout)["error"]["code"] == "USAGE", done.stdout
    huge = run_shardpy("purge", "--older-than", "1e12", "--dry-run", "--json", cwd=a)
    assert huge.returncode == 0 and json.loads(huge.stdout)["notes"] == []


WRITTEN = {
    "crlf": NOTE.replace("\n", "\r\n").encode(),
    "bom": ("\ufeff" + NOTE).encode(),
    "bom-crlf": ("\ufeff" + NOTE).replace("\n", "\r\n").encode(),
    "no-frontmatter-crlf": b"# Plain\r\n\r\nbody\r\n",
    "no-frontmatter": b"# Plain\n\nbody\n",
}


@pytest.mark.parametrize("shape", WRITTEN)
def test_rm_and_restore_keep_how_the_note_is_written(fleet: Fleet, shape: str) -> None:
    """Read as text, a CRLF note came back LF in every line, a BOM one was refused, and a note
    without frontmatter kept an empty block after restore: now rm edits only its keys, in the
    note's own line ends, and restore gives back the very bytes."""
    fleet.start()
    path = fleet.machines["a"] / "notes/written.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(WRITTEN[shape])
    assert fleet.shardpy("a", "rm", "notes/written.md", "--json").json()["changed"] is True
    disabled = path.read_bytes()
    assert b"disabled: true" in disabled
    crlf = b"\r\n" in WRITTEN[shape]
    assert disabled.count(b"\r\n") == (disabled.count(b"\n") if crlf else 0)
    assert disabled.startswith(b"\xef\xbb\xbf") == WRITTEN[shape].startswith(b"\xef\xbb\xbf")
    assert fleet.shardpy("a", "rm", "notes/written.md", "--json").json()["changed"] is False
    assert fleet.shardpy("a", "restore", "notes/written.md", "--json").json()["changed"] is True
    assert path.read_bytes() == WRITTEN[shape]


@pytest.mark.parametrize(
    ("data", "why"), [(b"# Mixed\r\n\nbody\n", "mixes line endings"), (b"caf\xe9\n", "not UTF-8")]
)
def test_a_note_rm_cannot_edit_alike_is_a_typed_error(fleet: Fleet, data: bytes, why: str) -> None:
    fleet.start()
    path = fleet.machines["a"] / "notes/odd.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    res = fleet.shardpy("a", "rm", "notes/odd.md", "--json", ok=False)
    assert res.error_code() == "NOTE_NOT_EDITABLE" and why in res.json()["error"]["message"]
    assert path.read_bytes() == data
