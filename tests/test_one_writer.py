"""The one writer stays the one writer (docs/ARCHITECTURE.md, "Arrows that
must never exist"): outside ``shardpy/apply/`` no module creates, replaces or
deletes a file, except the modules named in ALLOWED, each for a file that is
not vault content. And planning and merging touch no file system at all.

The check reads the package's syntax trees, so a new write primitive in a
new place fails here until it moves into apply/ or is allowed below, with
its reason.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "shardpy"

# Module (or folder, ending in "/") → why it may write. Every entry must
# still write something (a stale entry fails too).
ALLOWED: dict[str, str] = {
    "apply/": "the one writer: journal, backups, atomic writes, rollback, recovery",
    "fsutil.py": "the atomic primitives apply/ is built on",
    "sources/cache.py": "the download cache (user cache folder)",
    "sources/http.py": "downloads into the download cache",
    "sources/fetch.py": "fetched archives in the download cache",
    "sources/prefetch.py": "the early-fetch child points its stdin/stdout/stderr at /dev/null",
    "sources/archive.py": "extraction into a scratch folder outside the vault",
    "sources/model.py": "removing a fetched scratch tree",
    "sources/git.py": "the scratch clone of a git source",
    "sources/copier/__init__.py": "copier renders into a scratch tree outside the vault",
    "flows/copierprep.py": "the scratch shard tree made from a copier template",
    "flows/updatecheck.py": "what a dry run saw, kept in the user cache folder, never the vault",
    "hooks/runner.py": "a hook's temporary context files",
    "cli/prompts.py": "the temporary file $EDITOR edits",
    "index/store.py": "the search index's database in the user cache folder",
    "index/vectors.py": "the section vectors file (<index db>.vectors) beside the index, user cache folder",
    "index/bpe.py": "the tokenizer's compiled tables (marshal), user cache folder",
    "index/qmd_refresh.py": "the QMD refresh child's lock file, user cache folder",
    "graph/cache.py": "the graph's derived SQLite index of entity notes, user cache folder",
    "serve/audit.py": "the MCP server's append-only audit log",
    "gitsync/driver.py": "the merge driver writes git's own %A temporary file",
    "gitsync/ledger.py": "the merge driver's scratch copy of the import ledger, beside git's %A",
    "sources/copier/internals.py": "copier's compiled-template cache in the user cache folder",
    "serve/qmd.py": "os.devnull for the QMD child's stderr; --trust-qmd's consent (user config folder)",
    "notes/keycache.py": "status --verbose's kept frontmatter keys, in the user cache folder",
    "vault/ledger.py": "the import ledger (SQLite in .shardmind/), committed in apply/batch.py's run",
}

# The fsutil functions that write: calling them is writing.
FSUTIL_WRITERS = frozenset(
    {"atomic_write", "replace_with", "remove_file", "prune_empty_dirs", "make_parents"}
)
PATH_WRITERS = frozenset(
    {"write_text", "write_bytes", "unlink", "rmdir", "mkdir", "touch", "rename", "symlink_to", "hardlink_to"}
)
MODULE_WRITERS = {
    "os": frozenset(
        {"replace", "rename", "renames", "remove", "unlink", "rmdir", "removedirs", "mkdir", "makedirs"}
        | {"symlink", "link", "truncate", "mkfifo"}
    ),
    "shutil": frozenset({"rmtree", "move", "copy", "copy2", "copyfile", "copytree"}),
    "tempfile": frozenset({"mkstemp", "mkdtemp", "NamedTemporaryFile", "TemporaryFile"}),
    "sqlite3": frozenset({"connect"}),
}
WRITE_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_APPEND", "O_TRUNC"})
# No file-system module at all in planning and merging: they see the vault through DiskView.
PURE = ("plan/", "merge/")
FS_MODULES = frozenset({"os", "pathlib", "shutil", "tempfile", "sqlite3", "glob", "fcntl"})


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("_bundled/"):
            continue  # the flagship shard's own scripts: shard content, not the engine
        out.append((rel, ast.parse(path.read_text(encoding="utf-8"), filename=rel)))
    return out


def _mode_writes(call: ast.Call) -> bool:
    mode: ast.expr | None = call.args[1] if len(call.args) > 1 else None
    for kw in call.keywords:
        if kw.arg == "mode":
            mode = kw.value
    return (
        isinstance(mode, ast.Constant) and isinstance(mode.value, str) and bool(set(mode.value) & set("wax+"))
    )


def _flags_write(call: ast.Call) -> bool:
    names = {n.attr for n in ast.walk(call) if isinstance(n, ast.Attribute)}
    names |= {n.id for n in ast.walk(call) if isinstance(n, ast.Name)}
    return bool(names & WRITE_FLAGS)


def _primitive(call: ast.Call) -> str | None:
    """The write primitive ``call`` is, or None."""
    func = call.func
    if isinstance(func, ast.Name):
        if func.id == "open" and _mode_writes(call):
            return "open(..., 'w')"
        return func.id if func.id in FSUTIL_WRITERS else None
    if not isinstance(func, ast.Attribute):
        return None
    owner = func.value.id if isinstance(func.value, ast.Name) else None
    if owner == "os" and func.attr == "open":
        return "os.open(write flags)" if _flags_write(call) else None
    if owner in MODULE_WRITERS:
        return f"{owner}.{func.attr}" if func.attr in MODULE_WRITERS[owner] else None
    if func.attr in FSUTIL_WRITERS:
        return func.attr
    if func.attr in PATH_WRITERS:
        return f".{func.attr}()"
    # Path.replace(target) takes one argument; str.replace and bytes.replace take two,
    # dataclasses.replace keywords.
    if func.attr == "replace" and len(call.args) == 1 and not call.keywords and owner != "dataclasses":
        return ".replace(target)"
    return None


def _allowed(rel: str) -> str | None:
    for key in ALLOWED:
        if rel == key or (key.endswith("/") and rel.startswith(key)):
            return key
    return None


def _writes() -> dict[str, list[str]]:
    """Module → its write primitives, as "line: primitive"."""
    found: dict[str, list[str]] = {}
    for rel, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and (what := _primitive(node)) is not None:
                found.setdefault(rel, []).append(f"{node.lineno}: {what}")
    return found


def test_only_the_allowed_modules_create_replace_or_delete_files() -> None:
    stray = {rel: hits for rel, hits in _writes().items() if _allowed(rel) is None}
    assert stray == {}, (
        "these modules write files outside shardpy/apply/; route the write through "
        "apply.transaction.Transaction (or apply/followup.py), or allow it in ALLOWED with its reason"
    )


def test_every_allowed_module_still_writes() -> None:
    writing = {_allowed(rel) for rel in _writes()}
    stale = sorted(key for key in ALLOWED if key not in writing)
    assert stale == [], "these ALLOWED entries no longer write anything: remove them"


def test_the_checker_sees_each_kind_of_write() -> None:
    """The checker itself: each primitive is caught, reads and string replaces are not."""
    calls = {
        "p.write_text('x')": ".write_text()",
        "p.unlink(missing_ok=True)": ".unlink()",
        "p.replace(q)": ".replace(target)",
        "os.replace(a, b)": "os.replace",
        "shutil.rmtree(p)": "shutil.rmtree",
        "open(p, 'wb')": "open(..., 'w')",
        "open(p, mode='a')": "open(..., 'w')",
        "os.open(p, os.O_WRONLY | os.O_CREAT)": "os.open(write flags)",
        "atomic_write(root, rel, b'')": "atomic_write",
        "fsutil.remove_file(root, rel)": "remove_file",
        "p.mkdir(parents=True)": ".mkdir()",
    }
    for source, expected in calls.items():
        call = ast.parse(source, mode="eval").body
        assert isinstance(call, ast.Call)
        assert _primitive(call) == expected, source
    for source in (
        "open(p)",
        "open(p, 'rb')",
        "s.replace('a', 'b')",
        "os.open(p, os.O_RDONLY)",
        "dataclasses.replace(x, a=1)",
        "p.read_bytes()",
    ):
        call = ast.parse(source, mode="eval").body
        assert isinstance(call, ast.Call)
        assert _primitive(call) is None, source


def test_planning_and_merging_import_no_file_system_module() -> None:
    found: list[str] = []
    for rel, tree in _modules():
        if not rel.startswith(PURE):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module.split(".")[0]]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "open":
                names = ["open()"]
            found.extend(f"{rel}:{node.lineno}: {n}" for n in names if n in FS_MODULES or n == "open()")
    assert found == [], "plan/ and merge/ read the vault only through DiskView and write nothing"
