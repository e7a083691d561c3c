"""The flagship keeps shardpy's full-text index fresh and tells agents about it:
the PostToolUse hook refreshes the notes just written, the briefing names
`shardpy search` when qmd is absent, bootstrap builds the first index."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from shardpy import index
from tests.flagship import payloads
from tests.flagship.conftest import run_script
from tests.flagship.shardtools import Layout
from tests.flagship.test_lifecycle_hooks import _context, _git_only_path, run_hook

NOTE = (
    "---\ndate: 2026-11-29\ndescription: x\ntags: [brain]\n---\n"
    "# Quokka facts\n\nSee [[North Star]].\n\nquokkas smile\n"
)


def _shardpy_path(tmp: Path) -> str:
    """A PATH holding this environment's `shardpy` (and git), nothing else."""
    bindir = tmp / "shardpybin"
    bindir.mkdir(exist_ok=True)
    script = bindir / "shardpy"
    script.write_text(f"#!{sys.executable}\nfrom shardpy.cli.app import main\nmain()\n", encoding="utf-8")
    script.chmod(0o755)
    return os.pathsep.join([str(bindir), _git_only_path(tmp)])


def test_post_write_refreshes_the_note_in_the_index(
    make_vault: Callable[..., Layout], tmp_path: Path
) -> None:
    v = make_vault()
    index.refresh(v.root)
    rel = "brain/Quokka.md"
    (v.root / rel).write_text(NOTE, encoding="utf-8")
    assert index.search(v.root, "quokkas", max_age=float("inf")).hits == []
    r = run_script(
        v.root,
        "validate_write.py",
        payloads.claude_write(v.root, rel, NOTE),
        env={"PATH": _shardpy_path(tmp_path)},
    )
    assert r.returncode == 0, r.stderr
    hits = index.search(v.root, "quokkas", max_age=float("inf")).hits
    assert [h.path for h in hits] == [rel]


def test_post_write_without_shardpy_is_harmless(make_vault: Callable[..., Layout], tmp_path: Path) -> None:
    v = make_vault()
    rel = "brain/Quokka.md"
    (v.root / rel).write_text(NOTE, encoding="utf-8")
    r = run_script(
        v.root,
        "validate_write.py",
        payloads.claude_write(v.root, rel, NOTE),
        env={"PATH": _git_only_path(tmp_path)},
    )
    assert r.returncode == 0 and r.json() == {}, r.stderr
    assert not index.index_path(v.root).exists()


def test_briefing_names_shardpy_search_when_qmd_is_absent(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    with_shardpy = run_script(
        v.root, "session_start.py", {}, args=("--text",), env={"PATH": _shardpy_path(tmp_path)}
    )
    assert with_shardpy.returncode == 0, with_shardpy.stderr
    assert 'shardpy search "terms"' in with_shardpy.stdout
    without = run_script(
        v.root, "session_start.py", {}, args=("--text",), env={"PATH": _git_only_path(tmp_path)}
    )
    assert "shardpy search" not in without.stdout


def test_bootstrap_builds_the_first_index(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    r = run_hook(
        "bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": _git_only_path(tmp_path)}, tmp=tmp_path
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "search: full-text index built" in r.stdout
    assert index.search(v.root, "north star", max_age=float("inf")).hits
