"""No import cycle between the modules of ``shardpy/`` (issue 27, "Must show": no module cycle).

The graph is read from the syntax trees: an edge A -> B for every import in
A of a module B of the package (``from shardpy.x import name`` is an edge to
``shardpy.x.name`` when that is a module, else to ``shardpy.x``; relative
imports are resolved the same way). Two kinds of import are told apart:

- Import-time imports: those at module level, including inside a module-level
  ``if``, ``try``, ``with`` or class body, which run when the module is
  loaded. ``if TYPE_CHECKING:`` blocks never run and are left out (they name
  types for mypy only). No cycle at all is allowed among these: a cycle
  there makes the load order decide which module sees the other half-made.
- Function-level ("lazy") imports: the project defers imports into functions
  to keep start-up fast (``bench/startup_probe.py``), not to hide a cycle,
  so they count too: a function-level import is a dependency like any other,
  and a cycle that only closes through one is still two modules that each
  need the other (``if TYPE_CHECKING:`` imports are left out here as well).
  The cycles that exist at the time of writing are listed in KNOWN_LAZY,
  each with the change that breaks it; a cycle found must lie inside a known
  one (one that shrinks or goes is fine, so the fixes land in any order; one
  that grows or is new fails).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "shardpy"

# Cycles that close only through a function-level import, as they stand (issue 27). A key ending in
# ".*" stands for every module of that package. The value says what breaks it.
KNOWN_LAZY: dict[frozenset[str], str] = {}


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        if "_bundled" in parts:
            continue  # the flagship shard's own scripts: shard content, not the engine
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _targets(modules: dict[str, Path], current: str, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            package = current if modules[current].name == "__init__.py" else current.rpartition(".")[0]
            for _ in range(node.level - 1):
                package = package.rpartition(".")[0]
            base = f"{package}.{base}" if base else package
        names = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    for name in names:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        if name and name != current:
            yield name


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_time(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run when the module is loaded (not in a function; not under TYPE_CHECKING)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _type_checking(node.test):
                yield from _import_time(node.body)
            yield from _import_time(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _import_time(block)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _import_time(node.body)


def _all_run(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import that can run, in a function or not (``if TYPE_CHECKING:`` blocks left out)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If) and _type_checking(node.test):
            for child in node.orelse:
                yield from _all_run(ast.Module(body=[child], type_ignores=[]))
        else:
            yield from _all_run(node)


def _graph(*, lazy: bool) -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        nodes = list(_all_run(tree) if lazy else _import_time(tree.body))
        graph[name] = {t for n in nodes for t in _targets(modules, name, n)}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def _known(cycle: frozenset[str], table: dict[frozenset[str], str] | None = None) -> bool:
    for known in KNOWN_LAZY if table is None else table:
        packages = tuple(k[:-1] for k in known if k.endswith(".*"))
        if all(m in known or m.startswith(packages) for m in cycle):
            return True
    return False


def test_no_import_cycle_among_the_imports_that_run_at_load() -> None:
    graph = _graph(lazy=False)
    assert len(graph) > 100  # the scan found the package
    assert [sorted(c) for c in cycles(graph)] == []


def test_no_new_cycle_through_function_level_imports() -> None:
    found = cycles(_graph(lazy=True))
    assert [sorted(c) for c in found if not _known(c)] == [], "a new import cycle: see KNOWN_LAZY's doc"


def test_the_search_finds_a_cycle_and_its_members() -> None:
    # The checks above can fail: a cycle, with a module outside it, is found whole.
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(graph) == [frozenset({"a", "b", "c"})]
    table = {frozenset({"shardpy.flows.*"}): "a whole package", frozenset({"shardpy.a", "shardpy.b"}): "two"}
    assert not _known(frozenset({"shardpy.apply.batch", "shardpy.apply.executor"}), table)
    assert _known(frozenset({"shardpy.flows.adopt", "shardpy.flows.copieradopt"}), table)
    assert _known(frozenset({"shardpy.a", "shardpy.b"}), table)
    assert not _known(frozenset({"shardpy.a", "shardpy.b", "shardpy.c"}), table)  # a known cycle grew
