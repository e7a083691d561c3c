"""``query_graph``: walk relations from named entities, both directions, bounded, cycle-safe."""

from __future__ import annotations

from typing import Any

from shardpy.graph.note import Entity, Relation
from shardpy.graph.ops import View

DEPTH_MAX = 5
NODES_MAX = 1_000


def query_graph(
    view: View, names: list[str], depth: int, relation_types: list[str] | None, as_of: int | None
) -> dict[str, Any]:
    """Entities reachable from ``names`` within ``depth`` hops (each visited once: a cycle ends
    where it closes), with their distance, the relations walked, and ``truncated`` when the
    walk stopped at ``NODES_MAX`` entities."""
    types = set(relation_types) if relation_types else None
    distance: dict[str, int] = {}
    for n in names:
        e = view.snap.entities.get(n)
        if e is not None and e.is_entity and view.sees(n):
            distance.setdefault(n, 0)
    frontier = list(distance)
    walked: dict[Relation, None] = {}
    truncated = False
    for hop in range(1, min(depth, DEPTH_MAX) + 1):
        nxt: list[str] = []
        for r in view.touching(set(frontier)):
            if types is not None and r.relation_type not in types:
                continue
            walked[r] = None
            for end in (r.source, r.target):
                if end in distance or not _entity(view, end):
                    continue
                if len(distance) >= NODES_MAX:
                    truncated = True
                    continue
                distance[end] = hop
                nxt.append(end)
        frontier = nxt
        if not frontier:
            break
    found = [view.snap.entities[n] for n in distance]
    return {
        "entities": [_node(e, distance[e.name], as_of) for e in found],
        "relations": [r.to_json() for r in walked if r.source in distance and r.target in distance],
        "truncated": truncated,
    }


def _entity(view: View, name: str) -> bool:
    e = view.snap.entities.get(name)
    return e is not None and e.is_entity and view.sees(name)


def _node(e: Entity, distance: int, as_of: int | None) -> dict[str, Any]:
    from shardpy.graph.facts import visible_facts

    out = e.to_json(as_of)
    out["distance"] = distance
    out["facts"] = [f.to_json() for f in visible_facts(e.facts, as_of)]
    return out
