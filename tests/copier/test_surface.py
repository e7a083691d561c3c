"""Issue 27: copier's private surface is touched in one module, ``sources/copier/internals.py``,
and this test pins every private name and member that module relies on against the installed
copier: an upgrade that moves one fails here, before a user's render does."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from shardpy.sources.copier import internals

PACKAGE = Path(__file__).resolve().parents[2] / "shardpy"
ONE_MODULE = "sources/copier/internals.py"


def test_every_private_name_relied_on_is_in_the_installed_copier() -> None:
    internals.import_copier()
    missing = [f"{m}.{n}" for m, n in internals.SURFACE if not hasattr(importlib.import_module(m), n)]
    assert missing == []


def test_every_private_member_relied_on_is_in_the_installed_copier() -> None:
    internals.import_copier()
    missing: list[str] = []
    for owner, member in internals.MEMBERS:
        module, name = owner.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        fields = {**getattr(cls, "__dataclass_fields__", {}), **getattr(cls, "model_fields", {})}
        if not hasattr(cls, member) and member not in fields:
            missing.append(f"{owner}.{member}")
    assert missing == []


def _private_imports(tree: ast.Module) -> list[str]:
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names, line = [node.module], node.lineno
        elif isinstance(node, ast.Import):
            names, line = [a.name for a in node.names], node.lineno
        else:
            continue
        found.extend(f"{n}@{line}" for n in names if n.startswith("copier._"))
    return found


def test_only_one_module_imports_copiers_private_modules() -> None:
    hits: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if found := _private_imports(ast.parse(path.read_text(encoding="utf-8"))):
            hits[rel] = found
    assert list(hits) == [ONE_MODULE], "reach copier's private modules through sources/copier/internals.py"
    imported = {h.split("@")[0] for h in hits[ONE_MODULE]}
    assert imported <= {m for m, _ in internals.SURFACE}, "a private module used but not pinned in SURFACE"


def test_the_checker_sees_private_imports() -> None:
    tree = ast.parse("from copier._main import Worker\nimport copier._types\nfrom copier import errors\n")
    assert _private_imports(tree) == ["copier._main@1", "copier._types@2"]
