"""Every error code shardpy raises is documented in docs/ERRORS.md."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CODE_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$|^USAGE$")
ERROR_CLASSES = {"ShardpyError", "UsageError"}
CODE_KEYWORDS = {"code", "missing_code"}


def _strings(node: ast.AST) -> list[str]:
    """String constants a code argument can evaluate to (`"A" if x else "B"` too)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        return _strings(node.body) + _strings(node.orelse)
    return []


def _name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def raised_codes() -> dict[str, list[str]]:
    """code → files, for every code literal passed to ShardpyError/UsageError
    (first argument or ``code=``) or to a helper's ``code=``/``missing_code=``."""
    found: dict[str, list[str]] = {}
    for path in sorted((ROOT / "shardpy").rglob("*.py")):
        if "_bundled" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            candidates: list[str] = []
            if _name(node.func) in ERROR_CLASSES and node.args:
                candidates += _strings(node.args[0])
            for kw in node.keywords:
                if kw.arg in CODE_KEYWORDS:
                    candidates += _strings(kw.value)
            for code in candidates:
                if CODE_RE.match(code):
                    found.setdefault(code, []).append(str(path.relative_to(ROOT)))
    return found


def documented_codes() -> set[str]:
    text = (ROOT / "docs" / "ERRORS.md").read_text(encoding="utf-8")
    return set(re.findall(r"^\|\s*`([A-Z0-9_]+)`\s*\|", text, re.M))


def test_the_scan_finds_codes() -> None:
    codes = raised_codes()
    # guards the scanner itself: direct, keyword and conditional forms
    assert {"SHARD_SYMLINK", "SHARD_MANIFEST_MISSING", "DISK_FULL", "IO_ERROR", "PATH_UNSAFE"} <= set(codes)


def test_every_raised_code_is_documented() -> None:
    missing = {c: f for c, f in raised_codes().items() if c not in documented_codes()}
    assert not missing, f"add these codes to docs/ERRORS.md: {missing}"


def test_documented_codes_have_cause_and_remedy() -> None:
    text = (ROOT / "docs" / "ERRORS.md").read_text(encoding="utf-8")
    for line in text.splitlines():
        if re.match(r"^\|\s*`[A-Z0-9_]+`", line):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
            assert len(cells) == 3 and all(cells), f"row needs code | cause | remedy: {line}"
