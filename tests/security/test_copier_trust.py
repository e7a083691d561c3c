"""Issue 24, item 14: no module a copier template names is imported before consent.

A template's ``_jinja_extensions`` are imported by the Jinja environment copier builds; a module
there runs its import-time code. Without ``--trust`` (and without copier's own settings trusting
the template) shardpy refuses before any environment exists: before the questions, before the
trust check of the render, and the check itself builds none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shardkit import run_shardpy

EVIL = """\
import os, pathlib
pathlib.Path(os.environ["EVIL_MARKER"]).write_text("imported")
from jinja2.ext import Extension


class Ext(Extension):
    pass
"""


@pytest.fixture
def template(tmp_path: Path) -> Path:
    """A copier template whose extension module sits beside copier.yml (importable from the folder
    ``python -m shardpy`` runs in: the current folder comes first on its path)."""
    root = tmp_path / "tpl"
    root.mkdir()
    (root / "copier.yml").write_text(
        "_jinja_extensions:\n  - evil.Ext\nname:\n  type: str\n  default: world\n", encoding="utf-8"
    )
    (root / "evil.py").write_text(EVIL, encoding="utf-8")
    (root / "hello.md.jinja").write_text("hello {{ name }}\n", encoding="utf-8")
    return root


def _install(template: Path, tmp_path: Path, *flags: str) -> tuple[int, str, Path]:
    settings = tmp_path / "copier-settings.yml"
    settings.write_text("defaults: {}\n", encoding="utf-8")  # the user's copier settings stay out
    marker = tmp_path / "imported.txt"
    env = {"EVIL_MARKER": str(marker), "COPIER_SETTINGS_PATH": str(settings)}
    proc = run_shardpy("install", ".", tmp_path / "dest", "--json", *flags, cwd=template, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc.returncode, proc.stdout, marker


@pytest.mark.parametrize("flags", [("--defaults",), ()], ids=["defaults", "wizard-without-a-terminal"])
def test_extensions_are_not_imported_without_trust(
    template: Path, tmp_path: Path, flags: tuple[str, ...]
) -> None:
    code, out, marker = _install(template, tmp_path, *flags)
    assert code == 1
    error = json.loads(out)["error"]
    assert error["code"] == "COPIER_UNTRUSTED" and error["details"]["features"] == ["jinja_extensions"]
    assert not marker.exists()
    assert not (tmp_path / "dest").exists()


def test_with_trust_copier_loads_them(template: Path, tmp_path: Path) -> None:
    # What `copier copy --trust` does: the extension is imported and the template renders.
    code, out, marker = _install(template, tmp_path, "--defaults", "--trust")
    assert code == 0, out
    assert marker.read_text() == "imported"
    assert (tmp_path / "dest/hello.md").read_text() == "hello world\n"
