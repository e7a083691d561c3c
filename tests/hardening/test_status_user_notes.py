"""Issue 26, item 18: `status --verbose` checks required frontmatter on user
notes only. A fresh flagship install reported 42 notes missing keys, every one
the shard's own infrastructure (agent manuals, commands, CLAUDE.md, templates);
a note the user writes without the keys is still reported."""

from __future__ import annotations

from pathlib import Path

from tests.shardkit import run_shardpy


def test_a_fresh_flagship_has_no_violations_and_a_user_note_does(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    assert run_shardpy("install", "--defaults", vault, cwd=tmp_path).returncode == 0
    fresh = run_shardpy("status", "--verbose", "--json", cwd=vault)
    assert fresh.returncode == 0, fresh.stderr
    assert '"frontmatter_violations": {}' in fresh.stdout.replace("\n", "").replace("  ", ""), fresh.stdout
    (vault / "brain" / "Mine.md").write_text("# Mine\n\nno frontmatter at all\n")
    (vault / ".claude" / "commands" / "mine.md").write_text("a command of my own: no note\n")
    after = run_shardpy("status", "--verbose", "--json", cwd=vault)
    assert "brain/Mine.md" in after.stdout and ".claude/commands/mine.md" not in after.stdout, after.stdout
