"""Issue 26, item 22: `update --on-conflict theirs` says where your version of
each conflicted file was saved (the transaction's backups), in the summary and
in `--json`."""

from __future__ import annotations

from pathlib import Path

from tests.shardkit import Cli, make_shard

TEXT = "# Note\n\nthe line both sides change\n"


def test_theirs_says_where_your_version_is(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "src", files={"Note.md": TEXT}, manifest={"version": "1.0.0"})
    vault = tmp_path / "vault"
    assert cli.run("install", shard, vault, "--defaults").exit_code == 0
    mine = TEXT.replace("both sides change", "I changed")
    (vault / "Note.md").write_text(mine)
    make_shard(
        shard,
        files={"Note.md": TEXT.replace("both sides change", "the shard changed")},
        manifest={"version": "1.1.0"},
    )
    res = cli.run("update", "--yes", "--on-conflict", "theirs", "--json", cwd=vault)
    assert res.exit_code == 0, res.output
    saved = res.json()["saved_yours"]
    assert list(saved) == ["Note.md"] and saved["Note.md"].startswith(".shardmind/backups/")
    assert (vault / saved["Note.md"]).read_text() == mine
    assert "the shard changed" in (vault / "Note.md").read_text()


def test_the_plain_summary_names_the_backup(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "src", files={"Note.md": TEXT}, manifest={"version": "1.0.0"})
    vault = tmp_path / "vault"
    assert cli.run("install", shard, vault, "--defaults").exit_code == 0
    (vault / "Note.md").write_text(TEXT.replace("both sides change", "I changed"))
    make_shard(
        shard,
        files={"Note.md": TEXT.replace("both sides change", "the shard changed")},
        manifest={"version": "1.1.0"},
    )
    res = cli.run("update", "--yes", "--on-conflict", "theirs", cwd=vault)
    assert res.exit_code == 0, res.output
    assert "your version is saved as .shardmind/backups/" in res.stdout, res.stdout
