"""The graph as the reference memory server's JSONL, and one entity with its history (pure)."""

from __future__ import annotations

import json
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.graph.facts import iso, visible_facts
from shardpy.graph.store import Snapshot


def jsonl(snap: Snapshot, as_of: int | None) -> str:
    """``memory.jsonl`` as ``@modelcontextprotocol/server-memory`` writes it: entity lines, then
    relation lines, joined by newlines (no final one), each facts valid ``as_of`` (default: live)."""
    lines = [
        json.dumps(
            {
                "type": "entity",
                "name": e.name,
                "entityType": e.entity_type,
                "observations": e.observations(as_of),
            },
            ensure_ascii=False,
        )
        for e in snap.entities.values()
        if e.is_entity
    ]
    lines += [
        json.dumps({"type": "relation", "from": e.name, "to": to, "relationType": t}, ensure_ascii=False)
        for e in snap.entities.values()
        for t, to in e.relations
    ]
    return "\n".join(lines)


def entity_json(snap: Snapshot, name: str, as_of: int | None) -> dict[str, Any]:
    """One entity: its facts valid ``as_of`` (default: live), its superseded facts, relations both ways."""
    e = snap.entities.get(name)
    if e is None or not e.is_entity:
        shown = name if len(name) <= 200 else name[:200] + "…"
        raise ShardpyError(
            "GRAPH_ENTITY_NOT_FOUND",
            f"Entity with name {shown} not found",
            "`shardpy memory export` lists every entity.",
        )
    valid = visible_facts(e.facts, as_of)
    incoming = [
        {"from": h, "relationType": t}
        for h in snap.incoming.get(name, [])
        for t, to in snap.entities[h].relations
        if to == name
    ]
    return {
        "name": e.name,
        "entityType": e.entity_type,
        "path": e.path,
        "scope": e.scope,
        "projects": list(e.projects),
        "as_of": None if as_of is None else iso(as_of),
        "facts": [f.to_json() for f in valid],
        "superseded": [f.to_json() for f in e.facts if not f.live and f not in valid],
        "relations": [{"to": to, "relationType": t} for t, to in e.relations],
        "incoming": incoming,
    }


def entity_text(data: dict[str, Any]) -> str:
    """``memory show``'s plain text."""
    out = [f"{data['name']}  ({data['entityType'] or 'no type'}; {data['scope']}) — {data['path']}", ""]
    out.append("Facts:" if data["facts"] else "Facts: none")
    out += [f"  - {_fact(f)}" for f in data["facts"]]
    if data["superseded"]:
        out.append("Superseded:")
        out += [f"  - {_fact(f)}" for f in data["superseded"]]
    out.append("Relations:" if data["relations"] or data["incoming"] else "Relations: none")
    out += [f"  - {r['relationType']} → {r['to']}" for r in data["relations"]]
    out += [f"  - {r['from']} {r['relationType']} → (this)" for r in data["incoming"]]
    return "\n".join(out)


def _fact(f: dict[str, Any]) -> str:
    key = f"[{f['key']}] " if f["key"] else ""
    since = (f["valid_from"] or "?")[:10]
    until = f" → {f['valid_to'][:10]}" if f["valid_to"] else ""
    return f"{key}{f['text']}  (since {since}{until})" if f["valid_from"] or until else f"{key}{f['text']}"
