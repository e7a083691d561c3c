"""A vault checked out by git with ``core.autocrlf=true`` (git's setting on Windows).

The shard writes LF; such a checkout holds every text file with CRLF line ends, and git stores
them LF again. By their bytes every produced file looked edited: ``shardpy status`` counted 89
of the flagship's files "modified" in a fresh clone, and ``update`` kept a file the shard
changed as the user's (merged, and "modified" for ever after). A file whose LF form is what
shardpy wrote is now unedited (``shardpy/notes/written.lf_form``) and takes the shard's new
version in its own line ends; a real edit still is one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.notes.written import lf_form
from tests.shardkit import Cli
from tests.update.kit import Scenario

V1 = {"brain/Plan.md": "# Plan\n\nFirst line.\n\nSecond line.\n", "brain/Keep.md": "# Keep\n\nAs it is.\n"}
V2 = {**V1, "brain/Plan.md": "# Plan\n\nFirst line, changed by the shard.\n\nSecond line.\n"}


@pytest.fixture
def crlf(tmp_path: Path, cli: Cli) -> Scenario:
    sc = Scenario(tmp_path, cli)
    sc.shard("1.0.0", dict(V1))
    sc.install("--defaults")
    for rel in V1:  # as git's core.autocrlf checks them out
        sc.write(rel, sc.read_bytes(rel).replace(b"\n", b"\r\n"))
    return sc


def test_status_counts_a_crlf_checkout_as_unedited(crlf: Scenario) -> None:
    status = crlf.cli("status", "--json").json()
    assert [m["path"] for m in status["modified"]] == []
    crlf.write("brain/Keep.md", crlf.read_bytes("brain/Keep.md") + b"Mine.\r\n")  # a real edit
    assert [m["path"] for m in crlf.cli("status", "--json").json()["modified"]] == ["brain/Keep.md"]


def test_one_unreadable_file_leaves_the_crlf_checkouts_unedited(crlf: Scenario) -> None:
    """A FIFO in a managed file's place sent the scan down its one-file-at-a-time path, which did
    not know the CRLF rule: every CRLF checkout was "modified" (helper-found)."""
    import os

    (crlf.vault / "brain/Keep.md").unlink()
    os.mkfifo(crlf.vault / "brain/Keep.md")
    modified = crlf.cli("status", "--json").json()["modified"]
    assert [m["path"] for m in modified] == ["brain/Keep.md"]  # the FIFO only, not brain/Plan.md


def test_update_takes_the_shards_version_of_a_crlf_checkout(crlf: Scenario) -> None:
    crlf.shard("1.1.0", dict(V2))
    report = crlf.update_json("--yes")
    plan = crlf.action(report, "brain/Plan.md")
    assert plan is not None and plan["action"] == "update", plan
    # The shard's new version, in the file's own line ends (a user who chose CRLF keeps it).
    assert crlf.read_bytes("brain/Plan.md") == V2["brain/Plan.md"].replace("\n", "\r\n").encode()
    assert crlf.ownership("brain/Plan.md") == "managed"
    assert crlf.ownership("brain/Keep.md") == "managed"


def test_lf_form_is_only_a_whole_crlf_file() -> None:
    assert lf_form(b"a\r\nb\r\n") == b"a\nb\n"
    assert lf_form(b"a\r\nb\n") is None  # mixed: an edit, not a checkout
    assert lf_form(b"a\nb\n") is None
    assert lf_form(b"a\rb\r\n") is None
    assert lf_form(b"") is None
