"""The one way a graph change reaches the disk: under the vault lock, on a fresh snapshot, as
one :class:`~shardpy.apply.transaction.Transaction` (journal, backups, atomic replace).

The change is computed with the lock held, from notes read after any other writer finished,
so two servers adding to the same entity at once both land (tests/graph/test_concurrency.py);
a failing change raises before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from shardpy.apply.session import session
from shardpy.apply.transaction import Op
from shardpy.errors import ShardpyError
from shardpy.graph.note import render_note
from shardpy.graph.ops import Visible, Work
from shardpy.graph.store import GraphStore

LOCK_WAIT = 10.0  # seconds a write queues behind another before VAULT_LOCKED
T = TypeVar("T")


def change(store: GraphStore, label: str, visible: Visible, fn: Callable[[Work], T]) -> T:
    vault = store.vault
    with session(vault, f"serve {label}", wait=LOCK_WAIT) as writer:  # issue 27: the one write session
        work = Work(store.snapshot(), store, visible)
        result = fn(work)
        touched = _touched(work)
        if not store.unchanged(touched, work.snap):
            # A note this change rewrites was edited in place since it was read (or another
            # writer's rename is not yet seen): those notes are read again and the change
            # recomputed, so no edit is ever written over (tests/graph/test_note.py,
            # test_concurrency.py). Only they: a sweep of every note costs a call's budget many
            # times over at 20,000 entities (issue 28, "Speed").
            work = Work(store.refresh(touched), store, visible)
            result = fn(work)
        ops = plan_ops(store, work)
        if ops:
            writer.run(ops, label=f"serve-{label}")
            store.written([op.path for op in ops])
    return result


def _touched(work: Work) -> list[str]:
    paths = [e.path for e in work.changed.values() if e.path]
    return paths + list(work.deleted.values())


def plan_ops(store: GraphStore, work: Work) -> list[Op]:
    """The writes and deletions of ``work``, each checked to lie in the graph folder."""
    prefix = store.folder_rel + "/"
    ops: list[Op] = []
    for name, e in work.changed.items():
        if work.snap.entities.get(name) == e:
            continue  # nothing changed on this note: it is not rewritten
        _inside(e.path, prefix)
        ops.append(Op.write(e.path, render_note(e, work.link).encode("utf-8")))
    for path in work.deleted.values():
        _inside(path, prefix)
        ops.append(Op.delete(path))
    return ops


def _inside(path: str, prefix: str) -> None:
    rest = path[len(prefix) :] if path.startswith(prefix) else ""
    if not rest or "/" in rest or rest.startswith(".") or not rest.endswith(".md"):
        raise ShardpyError(
            "GRAPH_PATH_REFUSED",
            f"an entity note would be written outside the graph folder ({path[:200]!r})",
            "This is a bug in shardpy; nothing was written.",
        )
