"""A Claude Code fact whose frontmatter already holds keys the import sets (a helper's probe).

Only five keys of the source block were known to the import, so ``scope``, ``projects`` and the
provenance keys a fact already had were written a second time: duplicate keys, and shardpy's
own reader then found the whole frontmatter malformed. The user's ``project``, ``session_id``
and aliases were replaced. Every key of the block is known now; the fact's own reach, session
and aliases stay, and nothing is written twice.
"""

from __future__ import annotations

from pathlib import Path

from shardpy.notes.frontmatter import split_frontmatter
from tests.shardkit import run_shardpy

FACT = (
    "---\nname: x11 setup\ndescription: how the display works\ntype: project\nscope: private\n"
    "projects: [a]\nproject: mine\nsession_id: mine\naliases: [X11]\nimported_from: by hand\n---\n"
    "The display runs on :1.\n"
)


def test_keys_the_fact_has_are_kept_and_never_written_twice(tmp_path: Path) -> None:
    done = run_shardpy("install", "--defaults", tmp_path / "vault", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    memory = tmp_path / "cc/memory"
    memory.mkdir(parents=True)
    (memory / "x11_setup.md").write_text(FACT, encoding="utf-8")
    (memory / "MEMORY.md").write_text("- [x11 setup](x11_setup.md)\n", encoding="utf-8")
    args = ("import", "--from", "claude-code-memory", memory, tmp_path / "vault", "--into", "cc", "--apply")
    done = run_shardpy(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    (note,) = [p for p in (tmp_path / "vault/cc").rglob("*.md") if p.name != "MEMORY.md"]
    text = note.read_text(encoding="utf-8")
    split = split_frontmatter(text)
    assert split.state == "present", (split.error, text)
    keys = [line.split(":", 1)[0] for line in text.split("---\n", 2)[1].splitlines() if line[:1].isalpha()]
    assert len(keys) == len(set(keys)), keys
    data = split.data
    assert data["scope"] == "private" and data["projects"] == ["a"]
    assert data["project"] == "mine" and data["session_id"] == "mine"
    assert "X11" in data["aliases"]
    assert data["imported_from"] == "by hand" and data["shardpy_imported_from"]
