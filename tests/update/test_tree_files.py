"""vault/files.tree_files (the cached templates an update may delete) lists what
the rglob expression it replaced listed, in the same order, on random trees
with links to folders, links to files and dangling links."""

from __future__ import annotations

import random
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.vault.files import tree_files

_NAMES = ["a", "a-b", "b", "A", "z.md", "x y", "é", "a.b"]


def _reference(base: Path) -> list[str]:
    return [
        p.relative_to(base).as_posix()
        for p in sorted(p for p in base.rglob("*") if p.is_file() and not p.is_symlink())
    ]


def _build(base: Path, seed: int, size: int) -> None:
    rnd = random.Random(seed)
    folders, files = [base], []
    for _ in range(size):
        path = rnd.choice(folders) / f"{rnd.choice(_NAMES)}{rnd.choice(['', '', '0', '1'])}"
        if path.exists() or path.is_symlink():
            continue
        kind = rnd.random()
        if kind < 0.3:
            path.mkdir()
            folders.append(path)
        elif kind < 0.75 or not files:
            path.write_text("x")
            files.append(path)
        elif kind < 0.85:
            path.symlink_to(rnd.choice(folders))
        elif kind < 0.95:
            path.symlink_to(rnd.choice(files))
        else:
            path.symlink_to(base / "nowhere")


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), size=st.integers(0, 60))
def test_tree_files_equal_the_rglob_reference(seed: int, size: int) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder) / "templates"
        base.mkdir()
        _build(base, seed, size)
        assert tree_files(base) == _reference(base)


def test_order_is_by_parts_as_path_sorts(tmp_path: Path) -> None:
    for rel in ("a/x", "a-b", "a.b"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert tree_files(tmp_path) == _reference(tmp_path) == ["a/x", "a-b", "a.b"]


def test_a_missing_folder_has_no_files(tmp_path: Path) -> None:
    assert tree_files(tmp_path / "absent") == []
