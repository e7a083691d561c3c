"""Issue 26, item 14: `adopt` that leaves a conflict for the user exits 3, as
`update` does (one rule: FileAction.conflict_left); a clean adopt exits 0."""

from __future__ import annotations

from pathlib import Path

from tests.adopt.test_adopt import _env, clone, note, repo, run  # noqa: F401  (fixtures)
from tests.shardkit import Cli


def test_a_conflict_kept_by_adopt_exits_3(repo: Path, tmp_path: Path, cli: Cli) -> None:  # noqa: F811
    vault = clone(repo, tmp_path / "vault", "1.0.0")
    mine = note("A", "1.0.0").replace("top line of A", "top line of A, rewritten by me")
    (vault / "brain/A.md").write_text(mine)  # 1.1.0 rewrote the same line: a conflict
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "merge", "--yes")
    assert out["summary"]["conflicted"] == 1, out
    assert code == 3
    assert (vault / "brain/A.md").read_text() == mine  # kept, as --yes says


def test_a_clean_adopt_exits_0(repo: Path, tmp_path: Path, cli: Cli) -> None:  # noqa: F811
    vault = clone(repo, tmp_path / "vault", "1.0.0")
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "merge", "--yes")
    assert code == 0 and out["summary"]["conflicted"] == 0, out
