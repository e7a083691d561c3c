"""The spine's shape, read from the package's syntax trees (issue 27; docs/ARCHITECTURE.md,
"The spine"): every command is resolve → plan → show → apply → release, its plan in
``shardpy/plan/``, its writes through the one session (``shardpy/apply/session.py``).

- One lock/recover call site: only the session takes the vault lock and calls ``recover``;
  only ``apply/`` makes a ``Transaction``.
- No plan type outside ``plan/``: a class named ``*Plan`` (``Plan`` too), or one deriving from
  ``PlannedAction``, is defined in ``shardpy/plan/`` only (``apply/``'s journal rows, which
  carry a planned action into the writer, may derive from it).
- No ``as_copier`` in ``flows/``: the flows call the source protocol, never test for copier.
- No import cycle between the adopt flows.

A new exception must be named below with its reason; a stale entry fails too.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "shardpy"
SESSION = "apply/session.py"

# Module → why it still takes the lock or makes a transaction itself (to be moved into the session).
LOCK_PENDING: dict[str, str] = {}
# Module → why a plan type is still defined there (to be moved into plan/).
PLAN_PENDING: dict[str, str] = {}


def _trees() -> dict[str, ast.Module]:
    out: dict[str, ast.Module] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if not rel.startswith("_bundled/"):
            out[rel] = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
    return out


def _called(tree: ast.Module, names: frozenset[str]) -> list[str]:
    """``name@line`` of each call to a function (or method) named one of ``names``."""
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if name in names:
            found.append(f"{name}@{node.lineno}")
    return found


def _sites(names: frozenset[str]) -> dict[str, list[str]]:
    return {rel: hits for rel, tree in _trees().items() if (hits := _called(tree, names))}


def test_only_the_session_takes_the_lock_and_recovers() -> None:
    sites = _sites(frozenset({"vault_lock", "recover"}))
    session = sorted(h.split("@")[0] for h in sites.pop(SESSION, []))
    assert session == ["recover", "vault_lock"], "the session takes the lock once and recovers once"
    stray = {rel: hits for rel, hits in sites.items() if rel not in LOCK_PENDING}
    assert stray == {}, "take the vault lock and recover through shardpy.apply.session.session"


def test_only_apply_makes_a_transaction() -> None:
    sites = _sites(frozenset({"Transaction"}))
    stray = {rel: hits for rel, hits in sites.items() if not rel.startswith("apply/")}
    stray = {rel: hits for rel, hits in stray.items() if rel not in LOCK_PENDING}
    assert stray == {}, "run a plan's operations with Session.run (apply/session.py)"


def test_pending_lock_entries_are_not_stale() -> None:
    sites = _sites(frozenset({"vault_lock", "recover", "Transaction"}))
    assert sorted(rel for rel in LOCK_PENDING if rel not in sites) == []


def _plan_types(tree: ast.Module, *, apply: bool = False) -> list[str]:
    """Plan types in ``tree``; in ``apply/`` (``apply``) a journal row may carry a planned action."""
    out: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = {
            b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else ""
            for b in node.bases
        }
        if node.name.endswith("Plan") or ("PlannedAction" in bases and not apply):
            out.append(f"{node.name}@{node.lineno}")
    return out


def test_no_plan_type_outside_plan() -> None:
    found = {
        rel: hits
        for rel, tree in _trees().items()
        if (hits := _plan_types(tree, apply=rel.startswith("apply/")))
    }
    stray = {
        rel: hits for rel, hits in found.items() if not rel.startswith("plan/") and rel not in PLAN_PENDING
    }
    assert stray == {}, "define plans in shardpy/plan/ (pure over a disk view; plan/actions.py's words)"
    assert sorted(rel for rel in PLAN_PENDING if rel not in found) == [], "stale PLAN_PENDING entries"


def test_the_checker_sees_plan_types_and_calls() -> None:
    tree = ast.parse(
        "class WritePlan: pass\nclass Row(PlannedAction): pass\nclass Planner: pass\n"
        "with vault_lock(v):\n    recover(v)\nx.recover(v)\n"
    )
    assert _plan_types(tree) == ["WritePlan@1", "Row@2"]
    called = sorted(_called(tree, frozenset({"vault_lock", "recover"})))
    assert called == ["recover@5", "recover@6", "vault_lock@4"]


def _imports(tree: ast.Module) -> set[str]:
    """Modules ``tree`` imports at run time (an ``if TYPE_CHECKING:`` block is not run)."""
    out: set[str] = set()
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_no_as_copier_in_flows() -> None:
    hits = {
        rel: [n.lineno for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == "as_copier"]
        for rel, tree in _trees().items()
        if rel.startswith("flows/")
    }
    assert {rel: lines for rel, lines in hits.items() if lines} == {}, "call the source protocol instead"


def test_the_adopt_flows_do_not_import_each_other() -> None:
    trees = _trees()
    copier = _imports(trees["flows/copieradopt.py"])
    adopt = _imports(trees["flows/adopt.py"])
    assert "shardpy.flows.adopt" not in copier, "copieradopt must not import adopt (flows/adoptapply.py)"
    assert not ("shardpy.flows.copieradopt" in adopt and "shardpy.flows.adopt" in copier)
