"""The copier render's speed-ups keep copier's bytes: compiled templates
cached across runs (never trusted when stale or damaged), text with no
Jinja syntax passed through, copier imported without its prompt library."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.copier.kit import ANSWERS_BODY, ANSWERS_TEMPLATE, build_template, copier_copy, snapshot
from tests.shardkit import Cli


def _cache_entries(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted((root / "copier-jinja").rglob("*.jbc"))}


def _install(cli: Cli, template: Path, dest: Path, tag: str) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    res = cli.run("install", f"{template}@{tag}", dest, "--defaults", cwd=dest.parent)
    assert res.exit_code == 0, res.output


def test_cached_compiles_render_what_copier_renders(cli: Cli, template: Path, tmp_path: Path) -> None:
    cache = Path(os.environ["SHARDPY_CACHE_DIR"])
    theirs = tmp_path / "theirs" / "proj"
    copier_copy(template, theirs, "v1.0.0")
    _install(cli, template, tmp_path / "a" / "proj", "v1.0.0")
    first = _cache_entries(cache)
    # One entry per file template (each rendered at least once here).
    assert len(first) == len(list((template / "template").rglob("*.jinja"))) == 7
    # The second install compiles nothing (the entries are untouched) and writes the same bytes.
    _install(cli, template, tmp_path / "b" / "proj", "v1.0.0")
    assert _cache_entries(cache) == first
    assert snapshot(tmp_path / "b" / "proj") == snapshot(theirs)


def test_damaged_entries_are_not_used(cli: Cli, template: Path, tmp_path: Path) -> None:
    cache = Path(os.environ["SHARDPY_CACHE_DIR"])
    _install(cli, template, tmp_path / "a" / "proj", "v1.0.0")
    entries = _cache_entries(cache)
    for path, data in entries.items():
        # Same length, one payload byte changed: a check of the size alone would pass it.
        path.write_bytes(data[:-5] + bytes([data[-5] ^ 0xFF]) + data[-4:])
    _install(cli, template, tmp_path / "b" / "proj", "v1.0.0")
    theirs = tmp_path / "theirs" / "proj"
    copier_copy(template, theirs, "v1.0.0")
    assert snapshot(tmp_path / "b" / "proj") == snapshot(theirs)
    rewritten = _cache_entries(cache)  # compiled again and rewritten, each sound again
    assert rewritten.keys() == entries.keys()
    assert all(hashlib.sha256(data[32:]).digest() == data[:32] for data in rewritten.values())


def test_changed_source_compiles_again(cli: Cli, tmp_path: Path) -> None:
    """A template's new version (same file names, other text, other
    delimiters) never renders with the old version's compiled code."""
    tpl = build_template(
        tmp_path / "tpl",
        {
            "v1.0.0": {
                "copier.yml": "name:\n  type: str\n  default: n\n",
                ANSWERS_TEMPLATE: ANSWERS_BODY,
                "a.txt.jinja": "one {{ name }}\n",
            },
            "v2.0.0": {"a.txt.jinja": "two {{ name }} [[ name ]]\n"},
            "v3.0.0": {
                "copier.yml": "name:\n  type: str\n  default: n\n"
                "_envops:\n  variable_start_string: '[['\n  variable_end_string: ']]'\n"
            },
        },
    )
    for tag in ("v1.0.0", "v2.0.0", "v3.0.0"):
        mine, theirs = tmp_path / f"mine-{tag}" / "proj", tmp_path / f"theirs-{tag}" / "proj"
        _install(cli, tpl, mine, tag)
        copier_copy(tpl, theirs, tag)
        assert snapshot(mine) == snapshot(theirs), tag
    assert (tmp_path / "mine-v3.0.0/proj/a.txt").read_text() == "two {{ name }} n\n"
    # The other delimiters are another environment: their entries sit apart.
    assert len({p.parent for p in _cache_entries(Path(os.environ["SHARDPY_CACHE_DIR"]))}) == 2


def _copier_env() -> object:
    import tempfile

    from shardpy.sources.copier import CopierTemplate

    root = Path(tempfile.mkdtemp())
    (root / "copier.yml").write_text("a:\n  type: int\n  default: 1\n")
    return CopierTemplate(root, str(root), None, None).worker(root / "dst", {}).jinja_env


_ENV: object = None


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", exclude_characters="\x00"), max_size=30))
def test_text_passed_through_is_what_jinja_renders(text: str) -> None:
    from shardpy.sources.copier.internals import _plain_check

    global _ENV
    if _ENV is None:
        _ENV = _copier_env()
    env: object = _ENV
    if _plain_check(env)(text):
        assert env.from_string(text).render(a=1) == text  # type: ignore[attr-defined]


def test_copier_imports_without_its_prompt_library(template: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from shardpy.sources.copier.internals import import_copier\n"
        "import_copier()\n"
        "assert 'copier._main' in sys.modules and 'copier._user_data' in sys.modules\n"
        "assert 'questionary' not in sys.modules and 'prompt_toolkit' not in sys.modules\n"
        "import questionary\n"  # a later import gets the real package
        "assert hasattr(questionary, 'select') and 'prompt_toolkit' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # A whole install in a process of its own (choices and multiselect parsed
    # through the stand-in's Choice), byte for byte what copier writes.
    mine, theirs = tmp_path / "mine" / "proj", tmp_path / "theirs" / "proj"
    mine.parent.mkdir()
    cmd = [sys.executable, "-m", "shardpy", "install", f"{template}@v1.0.0", str(mine), "--defaults"]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    copier_copy(template, theirs, "v1.0.0")
    assert snapshot(mine) == snapshot(theirs)


def test_links_and_modes_as_copier_writes_them(cli: Cli, tmp_path: Path) -> None:
    """The render is kept in memory: a link's target copied (copier's
    default), the executable bit kept, and a link copier preserves
    (``_preserve_symlinks``) made as copier makes it."""
    tpl = tmp_path / "tpl"
    build_template(
        tpl,
        {
            "v1.0.0": {
                "copier.yml": "name:\n  type: str\n  default: n\n",
                ANSWERS_TEMPLATE: ANSWERS_BODY,
                "run.sh.jinja": "#!/bin/sh\necho {{ name }}\n",
                "target.txt": "target\n",
                "empty/.keep": "",
            }
        },
    )
    (tpl / "run.sh.jinja").chmod(0o755)
    (tpl / "link.txt").symlink_to("target.txt")
    from tests.copier.kit import git

    git(tpl, "add", "-A")
    git(tpl, "commit", "--quiet", "-m", "link and mode")
    git(tpl, "tag", "v1.1.0")
    mine, theirs = tmp_path / "mine" / "proj", tmp_path / "theirs" / "proj"
    _install(cli, tpl, mine, "v1.1.0")
    copier_copy(tpl, theirs, "v1.1.0")
    assert snapshot(mine) == snapshot(theirs)
    assert (mine / "link.txt").read_text() == "target\n" and not (mine / "link.txt").is_symlink()
    assert (mine / "run.sh").stat().st_mode & 0o111
    (tpl / "copier.yml").write_text("name:\n  type: str\n  default: n\n_preserve_symlinks: true\n")
    git(tpl, "commit", "--quiet", "-am", "preserve links")
    git(tpl, "tag", "v1.2.0")
    # A kept link pointing inside the project is installed as the link copier makes (issue 26
    # item 4; the rest is tests/hardening/test_copier_links.py).
    linked, theirs_linked = tmp_path / "linked" / "proj", tmp_path / "theirs-linked" / "proj"
    _install(cli, tpl, linked, "v1.2.0")
    copier_copy(tpl, theirs_linked, "v1.2.0")
    assert snapshot(linked) == snapshot(theirs_linked)
    assert os.readlink(linked / "link.txt") == "target.txt"
