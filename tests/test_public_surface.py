"""Issue 27: a declared public surface (docs/ARCHITECTURE.md, "The public surface").

Public: the modules shardpy.runtime, shardpy.errors and shardpy.index, and in each only
the names of its ``__all__``, pinned here; everything else under shardpy/ is internal.
The Python the project shows users (the ```python blocks of README.md and docs/, the
shard template's scripts and hooks) uses only public names. bench/ and tests/ may reach
internals: they measure and test them.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLIC: dict[str, list[str]] = {
    "shardpy.runtime": [
        "active_signals",
        "find_vault_root",
        "hook_context",
        "included_modules",
        "load_schema",
        "load_state",
        "load_values",
        "validate_frontmatter",
    ],
    "shardpy.errors": ["Cancelled", "ShardpyError", "UsageError"],
    "shardpy.index": ["RefreshReport", "SearchHit", "SearchResult", "index_path", "refresh", "search"],
}
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_a_public_modules_all_is_the_pinned_list(module: str) -> None:
    loaded = importlib.import_module(module)
    assert sorted(getattr(loaded, "__all__", [])) == PUBLIC[module]
    assert all(hasattr(loaded, name) for name in PUBLIC[module])


def _shown_python() -> list[tuple[str, str]]:
    """(where, source) of every piece of Python the project shows its users."""
    shown = [
        (f"{doc.relative_to(ROOT)} block {n}", block)
        for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
        for n, block in enumerate(_BLOCK.findall(doc.read_text(encoding="utf-8")))
    ]
    template = ROOT / "shard-template"
    shown += [
        (str(p.relative_to(ROOT)), p.read_text(encoding="utf-8")) for p in sorted(template.rglob("*.py"))
    ]
    return shown


def _uses(source: str) -> list[str]:
    """Every ``shardpy`` name the code imports or reads off an imported public module."""
    tree = ast.parse(source)
    aliases: dict[str, str] = {}  # local name -> module
    used: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "shardpy":
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                used.append(whole)
                aliases[alias.asname or alias.name] = whole
        elif isinstance(node, ast.Import):
            used += [a.name for a in node.names if a.name.split(".")[0] == "shardpy"]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            used.append(f"{aliases[node.value.id]}.{node.attr}")
    return used


def _public(name: str) -> bool:
    if name in PUBLIC:
        return True
    module, _, attr = name.rpartition(".")
    return module in PUBLIC and attr in PUBLIC[module]


def test_the_python_shown_to_users_uses_only_public_names() -> None:
    shown = _shown_python()
    assert any("from shardpy import runtime" in source for _, source in shown)  # the rule reads something
    internal = [(where, name) for where, source in shown for name in _uses(source) if not _public(name)]
    assert not internal, internal


def test_the_rule_sees_an_internal_name() -> None:
    assert _uses("from shardpy import index\nindex.store.connect(v)\n") == [
        "shardpy.index",
        "shardpy.index.store",
    ]
    assert not _public("shardpy.index.store") and not _public("shardpy.vault.state")
    assert _public("shardpy.runtime.load_values") and _public("shardpy.errors")
