"""A basic-memory note whose ``aliases`` the user wrote with an anchor or comments (a helper's
probe). The import adds the note's title to ``aliases`` when the file name had to differ; that
rewrite dropped the anchor (``aliases: &names``), so ``search_names: *names`` named nothing and
the frontmatter no longer parsed, and it dropped the comments. Such lines now stay as written.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.notes.frontmatter import split_frontmatter
from tests.shardkit import run_shardpy

NOTES = {
    "anchors.md": '---\ntitle: "Q: anchors"\naliases: &names\n  - Quick\nsearch_names: *names\n---\nbody\n',
    "comment.md": (
        '---\ntitle: "Q: comment"\naliases:\n  - Quick2   # shown in search\n  - Other    # old name\n'
        "---\nbody\n"
    ),
    "plain.md": '---\ntitle: "Q: plain"\naliases:\n  - Quick3\n---\nbody\n',
}


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("alias-lines")
    assert run_shardpy("install", "--defaults", root / "vault", cwd=root, timeout=300).returncode == 0
    (root / "project").mkdir()
    for name, text in NOTES.items():
        (root / "project" / name).write_text(text, encoding="utf-8")
    args = ("import", "--from", "basic-memory", root / "project", root / "vault", "--into", "bm", "--apply")
    done = run_shardpy(*args, cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    return root / "vault/bm"


def test_an_anchored_aliases_key_stays_and_the_yaml_still_reads(imported: Path) -> None:
    text = (imported / "Q- anchors.md").read_text(encoding="utf-8")
    assert "aliases: &names\n  - Quick\nsearch_names: *names\n" in text
    assert split_frontmatter(text).state == "present"


def test_commented_aliases_keep_their_comments(imported: Path) -> None:
    text = (imported / "Q- comment.md").read_text(encoding="utf-8")
    assert "  - Quick2   # shown in search\n  - Other    # old name\n" in text


def test_plain_aliases_take_the_title(imported: Path) -> None:
    data = split_frontmatter((imported / "Q- plain.md").read_text(encoding="utf-8")).data
    assert data["aliases"] == ["Quick3", "Q: plain"]
