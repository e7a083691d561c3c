"""Issue 13: the import plans in importers/ and writes only through shardpy/apply/."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "shardpy"
# Calls that create, replace or delete a file or folder.
WRITERS = {
    "atomic_write",
    "replace_with",
    "remove_file",
    "prune_empty_dirs",
    "make_parents",
    "unlink",
    "rmtree",
    "replace",
    "rename",
    "write_bytes",
    "write_text",
    "mkdir",
    "makedirs",
    "remove",
    "rmdir",
}


def _writes(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"))
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        # str.replace on text is no file operation: only os.replace / Path.replace-style calls count.
        if name == "replace" and not (isinstance(func, ast.Attribute) and _is_os(func.value)):
            continue
        if name in WRITERS:
            found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} {name}")
        if name == "open" and any(
            isinstance(a, ast.Constant) and isinstance(a.value, str) and set(a.value) & set("wax+")
            for a in node.args[1:2]
        ):
            found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno} open for writing")
    return found


def _is_os(value: ast.expr) -> bool:
    return isinstance(value, ast.Name) and value.id == "os"


def test_importers_and_their_flow_never_write_a_file() -> None:
    files = [*sorted((ROOT / "importers").glob("*.py")), ROOT / "flows" / "importflow.py"]
    assert len(files) > 10
    found = [w for f in files for w in _writes(f)]
    assert found == []


def test_the_scan_sees_the_batched_writer_it_replaced() -> None:
    # The same scan over the batched writer (apply/executor.py, apply/finish.py) finds its writes:
    # the test above can fail.
    found = [w for name in ("executor.py", "finish.py") for w in _writes(ROOT / "apply" / name)]
    assert any("atomic_write" in w for w in found)
    assert any("unlink" in w for w in found)
