"""One atomic writer and one content hash (issue 27): both live in ``shardpy/fsutil.py``.

A file written "temporary file, then rename" anywhere else is a second
atomic writer (a second set of temporary names recovery does not know, a
second answer to "is it durable, is a link refused"); a sha256 taken
anywhere else is a second definition of a file's identity. The check reads
the package's syntax trees:

- a rename (``os.replace``, ``os.rename``, ``Path.replace(target)``,
  ``Path.rename(target)``) outside fsutil is allowed only in the modules of
  RENAMES, each for a move that is not a write of new bytes;
- ``hashlib.sha256(data)``, ``hashlib.new("sha256", ...)`` and
  ``hashlib.file_digest(..., "sha256")`` are called only in fsutil
  (``sha256_bytes``, ``sha256_stream``, ``sha256_file``). An argument-less
  ``hashlib.sha256()`` fed block by block (a download being received, a tree
  walked) is allowed: there is no whole content to hand to a helper.

PENDING lists the sites that still do either, in modules other engineers own
this round, with the change each needs; an entry leaves the list when its
module is fixed (a pending entry that no longer matches is not an error, so
the fix can land in any order, but a module not listed fails).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "shardpy"

# Module → (how many renames, why: a move of something finished, never a write of new bytes).
# The count is exact, so a hand-made writer added beside an allowed move fails too (sources/cache.py
# wrote its index and tree records "temporary file, then os.replace" beside its two moves).
RENAMES: dict[str, tuple[int, str]] = {
    "fsutil.py": (2, "the one atomic writer: a file, a link (an exclusive create renames by renameat2)"),
    "sources/cache.py": (2, "a verified download and an extracted tree moved into the cache"),
    "apply/rundir.py": (1, "an unreadable run journal set aside for inspection (import --abandon)"),
    "serve/audit.py": (1, "the audit log rotated to its .1 file"),
    "gitsync/driver.py": (1, "the merged ledger (a SQLite file) moved onto git's %A"),
}

# Module → the change it still needs (issue 27), named by its owner this round.
PENDING: dict[str, str] = {}


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith("_bundled/"):  # the flagship shard's own scripts: shard content
            out.append((rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)))
    return out


def _owner(func: ast.Attribute) -> str | None:
    return func.value.id if isinstance(func.value, ast.Name) else None


def _rename(call: ast.Call) -> str | None:
    func = call.func
    if not isinstance(func, ast.Attribute) or func.attr not in ("replace", "rename", "renames"):
        return None
    if _owner(func) == "os":
        return f"os.{func.attr}"
    # Path.replace(target) / Path.rename(target) take one argument; str.replace and bytes.replace
    # take two, dataclasses.replace and datetime.replace keywords.
    if len(call.args) == 1 and not call.keywords and _owner(func) != "dataclasses":
        return f".{func.attr}(target)"
    return None


def _says_sha256(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == "sha256"


def _sha256(call: ast.Call) -> str | None:
    func = call.func
    if not isinstance(func, ast.Attribute) or _owner(func) != "hashlib":
        return None
    if func.attr == "sha256" and (call.args or call.keywords):
        return "hashlib.sha256(data)"
    if func.attr == "new" and call.args and _says_sha256(call.args[0]):
        return "hashlib.new('sha256', ...)"
    if func.attr == "file_digest" and len(call.args) > 1 and _says_sha256(call.args[1]):
        return "hashlib.file_digest(fh, 'sha256')"
    return None


def _found() -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(module → its renames, module → its sha256 calls), as "line: what"."""
    renames: dict[str, list[str]] = {}
    hashes: dict[str, list[str]] = {}
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            if (what := _rename(node)) is not None:
                renames.setdefault(rel, []).append(f"{node.lineno}: {what}")
            if (what := _sha256(node)) is not None:
                hashes.setdefault(rel, []).append(f"{node.lineno}: {what}")
    return renames, hashes


def test_files_are_written_atomically_only_by_fsutil() -> None:
    renames, _ = _found()
    stray = {rel: hits for rel, hits in renames.items() if rel not in RENAMES and rel not in PENDING}
    assert stray == {}, "write through fsutil.atomic_write, or name the move in RENAMES with its reason"
    counts = {rel: len(renames.get(rel, [])) for rel in RENAMES}
    assert counts == {rel: n for rel, (n, _) in RENAMES.items()}, {rel: renames.get(rel) for rel in RENAMES}


def test_the_sha256_of_content_is_taken_only_by_fsutil() -> None:
    _, hashes = _found()
    stray = {rel: hits for rel, hits in hashes.items() if rel != "fsutil.py" and rel not in PENDING}
    assert stray == {}, "hash with fsutil.sha256_bytes / sha256_stream / sha256_file"
    assert "fsutil.py" in hashes  # the scan sees the owner's own calls: the check above can fail


def test_the_scan_sees_a_hand_made_writer_and_hash(tmp_path: Path) -> None:
    # The shapes this test exists to catch (the cache writer and file_sha256 before issue 27).
    tree = ast.parse(
        "import hashlib, os\n"
        "def record(tmp, path, payload):\n"
        "    tmp.write_bytes(payload)\n"
        "    os.replace(tmp, path)\n"
        "    tmp.replace(path)\n"
        "def file_sha256(fh):\n"
        "    return hashlib.file_digest(fh, 'sha256').hexdigest(), hashlib.sha256(b'x')\n"
        "text = 'a'.replace('a', 'b')\n"
    )
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert sorted(w for c in calls if (w := _rename(c))) == [".replace(target)", "os.replace"]
    assert sorted(w for c in calls if (w := _sha256(c))) == [
        "hashlib.file_digest(fh, 'sha256')",
        "hashlib.sha256(data)",
    ]
