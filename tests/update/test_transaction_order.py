"""The transaction's order when a run turns a file into a folder or a folder into a file
(apply/transaction._order), and its undo at any failure (helper-found cases: a deeper folder, a
move, a link)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.apply.transaction import Op, Transaction
from shardpy.errors import ShardpyError


def _tree(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): ("dir" if p.is_dir() else p.read_text())
        for p in sorted(root.rglob("*"))
        if ".shardmind" not in p.relative_to(root).parts
    }


CASES = {
    "file to a deeper folder": ({"a": "old a", "z.md": "z"}, [Op.delete("a"), Op.write("a/b/c.md", b"c")]),
    "folder to a file": (
        {"kit/sub/a.md": "a", "kit/b.md": "b"},
        [Op.delete("kit/sub/a.md"), Op.delete("kit/b.md"), Op.write("kit", b"k")],
    ),
    "a file moved away for a folder": (
        {"guide": "g"},
        [Op.write("guide/intro.md", b"i"), Op.move("guide", "old-guide")],
    ),
    "a folder's file moved away for a file": (
        {"kit/a.md": "a"},
        [Op.write("kit", b"k"), Op.move("kit/a.md", "x/a.md")],
    ),
}


def _trial(
    root: Path, files: dict[str, str], ops: list[Op], fail_at: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Run ``ops`` over ``files``, failing after the ``fail_at``-th op (0: never)."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    before = _tree(root)
    done: list[str] = []
    real = Transaction._apply_op

    def failing(self: Transaction, op: Op, durable: bool) -> None:
        real(self, op, durable)
        done.append(op.path)
        if len(done) == fail_at:
            raise OSError(5, "injected")

    with monkeypatch.context() as patch:
        patch.setattr(Transaction, "_apply_op", failing)
        if fail_at == 0:
            Transaction(root, "t").run(ops)
            assert "last.md" in _tree(root)
            return
        with pytest.raises(ShardpyError):
            Transaction(root, "t").run(ops)
    assert _tree(root) == before, fail_at  # files and folders alike
    assert not (root / ".shardmind/journal.json").exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_it_applies_and_any_failure_undoes_all_of_it(
    tmp_path: Path, case: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    files, ops = CASES[case]
    ops = [*ops, Op.write("last.md", b"last")]
    for fail_at in range(len(ops) + 1):
        _trial(tmp_path / f"{fail_at}", files, ops, fail_at, monkeypatch)


def test_a_link_never_takes_a_folders_place_and_the_run_is_undone(tmp_path: Path) -> None:
    """Its journal could not name the paths below a link: such a run stopped with its journal
    refused for ever (TRANSACTION_JOURNAL_INVALID). It fails at the link and is rolled back."""
    (tmp_path / "kit").mkdir()
    (tmp_path / "kit/a.md").write_text("a")
    with pytest.raises(ShardpyError):
        Transaction(tmp_path, "t").run([Op.delete("kit/a.md"), Op.link("kit", "target")])
    assert _tree(tmp_path) == {"kit": "dir", "kit/a.md": "a"}
    assert not (tmp_path / ".shardmind/journal.json").exists()
