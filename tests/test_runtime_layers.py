"""The runtime readers import nothing from ``shard/`` (issue 25, docs/ARCHITECTURE.md "Arrows that
must never exist"): the search index and the MCP server read a vault, not a shard, so the vault
manifest's reader lives in ``vault/manifest.py``.

The check reads the syntax trees of every module under ``index/`` and ``serve/``: an import inside
a function counts as much as one at the top."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "shardpy"
RUNTIME = ("index", "serve")
FORBIDDEN = "shardpy.shard"


def _imported(tree: ast.AST, module: str) -> list[tuple[int, str]]:
    """(line, module) of every import in ``tree``; relative imports resolved against ``module``."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = module.rsplit(".", node.level)[0]
                base = f"{parent}.{base}" if base else parent
            out += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
    return out


def _offending(source: str, module: str) -> list[str]:
    return [
        f"{module}:{line} imports {name}"
        for line, name in _imported(ast.parse(source), module)
        if name == FORBIDDEN or name.startswith(FORBIDDEN + ".")
    ]


def test_index_and_serve_import_nothing_from_shard() -> None:
    found: list[str] = []
    checked = 0
    for folder in RUNTIME:
        for path in sorted((PACKAGE / folder).rglob("*.py")):
            module = "shardpy." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
            found += _offending(path.read_text(encoding="utf-8"), module)
            checked += 1
    assert checked > 10  # the folders are where this test looks for them
    assert not found, found


def test_the_check_sees_every_spelling_of_an_import() -> None:
    """The check itself can fail: each way of importing from shard/ is caught."""
    spellings = [
        "from shardpy.shard.content import ContentRules",
        "import shardpy.shard.loader",
        "from shardpy import shard",
        "def f():\n    from shardpy.shard import rules\n",
        "from ..shard import render",
    ]
    for source in spellings:
        assert _offending(source, "shardpy.serve.tools"), source
    assert not _offending("from shardpy.vault.manifest import ContentRules", "shardpy.serve.tools")
    assert not _offending("from shardpy.shardkit import x", "shardpy.serve.tools")
