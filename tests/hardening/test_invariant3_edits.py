"""Issue 26, item 1: Invariant 3 guards the user's edits too. A post-update
hook may create new files and change the files this update added; any other
write it makes to a file the shard produced — unedited (managed) or edited
by the user (modified) — is undone, byte for byte, and reported. On main only
managed files were guarded: a hook appending to the user's edited CLAUDE.md
clobbered it for good."""

from __future__ import annotations

from pathlib import Path

from tests.shardkit import Cli
from tests.update.kit import Scenario

HOOK = """
import pathlib
for name in ("CLAUDE.md", "Notes.md", "New.md"):
    p = pathlib.Path(name)
    p.write_bytes(p.read_bytes() + b"hooked\\n")
pathlib.Path("Hook made.md").write_text("made by the hook\\n")
"""
HOOKS = {"post-update": ".shardmind/hooks/post_update.py"}
FILES: dict[str, str | bytes] = {
    "CLAUDE.md": "# Manual\n\nrules\n",
    "Notes.md": "notes\n",
    ".shardmind/hooks/post_update.py": HOOK,
}


def test_post_update_writes_to_edited_and_unedited_files_are_undone(tmp_path: Path, cli: Cli) -> None:
    sc = Scenario(tmp_path, cli)
    sc.shard("1.0.0", FILES, hooks=HOOKS)
    sc.install("--defaults")
    mine = b"# Manual\r\n\r\nrules\r\nmy own rule\r\n"  # the user's edit, CRLF: restored byte for byte
    sc.write("CLAUDE.md", mine)
    sc.shard("1.1.0", {**FILES, "New.md": "new\n"}, hooks=HOOKS)

    report = sc.update_json("--yes")

    assert report["hooks"][0]["status"] == "ok"
    assert sc.read_bytes("CLAUDE.md") == mine
    assert sc.read_bytes("Notes.md") == b"notes\n"
    assert sc.read("Hook made.md") == "made by the hook\n"  # a new file: allowed
    assert sc.read("New.md") == "new\nhooked\n"  # added by this update: allowed
    assert sorted(report["hook_changes_restored"]) == ["CLAUDE.md", "Notes.md"]
    for path in ("CLAUDE.md", "Notes.md"):
        assert any(path in w and "restored" in w for w in report["warnings"]), report["warnings"]
    assert sc.ownership("CLAUDE.md") == "modified" and sc.ownership("Notes.md") == "managed"


LINKING_HOOK = """
import os
os.unlink("Notes.md")
os.symlink("../outside.md", "Notes.md")
"""


def test_a_file_the_hook_turned_into_a_link_is_reported_not_written_through(tmp_path: Path, cli: Cli) -> None:
    """shardpy never writes through a link, so the guard cannot put the file
    back: the update still finishes, and says what to do."""
    sc = Scenario(tmp_path, cli)
    outside = tmp_path / "outside.md"
    outside.write_text("outside\n")
    files: dict[str, str | bytes] = {"Notes.md": "notes\n", ".shardmind/hooks/post_update.py": LINKING_HOOK}
    sc.shard("1.0.0", files, hooks=HOOKS)
    sc.install("--defaults")
    sc.shard("1.1.0", {**files, "New.md": "new\n"}, hooks=HOOKS)

    report = sc.update_json("--yes")

    assert outside.read_text() == "outside\n"
    assert report["hook_changes_restored"] == []
    [warning] = [w for w in report["warnings"] if "Notes.md" in w]
    assert "symbolic link" in warning and "not restored" in warning
