"""Issue 26, item 8: a search sees the notes as they are when it starts. It
was up to 60 s stale with no sign: a note written a moment ago was not found
and a deleted one was still returned. Now a search stats the folders the last
walk saw (notes added, removed, renamed) and the notes it is about to return
(edited in place, deleted), and refreshes first when any changed."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.shardkit import run_shardpy


def _hits(vault: Path, query: str) -> list[str]:
    proc = run_shardpy("search", query, "--vault", vault, "--mode", "lexical", "--json", cwd=vault)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [h["path"] for h in json.loads(proc.stdout)["hits"]]


def test_new_deleted_and_edited_notes_are_seen_at_once(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "inbox").mkdir(parents=True)
    (vault / "notes").mkdir()
    (vault / "notes" / "old.md").write_text("# Old\n\nthe quokka census\n")
    (vault / "notes" / "kept.md").write_text("# Kept\n\nanother quokka\n")
    assert sorted(_hits(vault, "quokka")) == ["notes/kept.md", "notes/old.md"]  # indexed now

    (vault / "inbox" / "new.md").write_text("# New\n\na quokka seen today\n")  # a folder with no note yet
    assert "inbox/new.md" in _hits(vault, "quokka")

    (vault / "notes" / "old.md").unlink()
    assert "notes/old.md" not in _hits(vault, "quokka")

    kept = vault / "notes" / "kept.md"
    with open(kept, "r+") as fh:  # edited in place: the folder does not change
        fh.write("# Kept\n\nanother wombat\n")
    os.utime(kept, ns=(kept.stat().st_atime_ns, kept.stat().st_mtime_ns + 1_000_000_000))
    assert "notes/kept.md" not in _hits(vault, "quokka")
    assert _hits(vault, "wombat") in (["notes/kept.md"], [])  # seen at refresh_seconds if not a hit
