"""The graph operations, with the reference memory server's semantics (pure: a snapshot in,
the entities to write and delete out).

Semantics (``@modelcontextprotocol/server-memory`` 2026.8.31, ``dist/index.js``; replayed
against it by tests/graph/test_oracle_replay.py):

- ``create_entities``: a name that exists is ignored (not in the answer);
- ``create_relations``: an existing (from, to, type) is ignored; neither end need exist
  (a relation starting at a name with no entity is kept on a placeholder note);
- ``add_observations``: an unknown entity fails the whole call ("Entity with name X not
  found", nothing written); contents already on the entity are not added again;
- ``delete_entities``: the entities and every relation from or to them; unknown names ignored;
- ``delete_observations`` / ``delete_relations``: what matches is removed, the rest ignored.

Where shardpy differs, on purpose (docs/MEMORY.md): duplicates inside one call are kept once
(the reference stores two entities named alike); names are bounded and checked; a relation
to itself is refused. Visibility arrives as a predicate: what a caller cannot see does not
exist for it, and is never changed by it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.graph.facts import DAY_MS, Fact, check_key
from shardpy.graph.note import Entity, Relation, link_target
from shardpy.graph.search import matches
from shardpy.graph.store import GraphStore, Snapshot

NAME_MAX = 200
TYPE_MAX = 200
OBSERVATION_MAX = 20_000
ITEMS_MAX = 1_000  # entities, relations or observation groups in one call
CONTENTS_MAX = 1_000  # observations in one group

Visible = Callable[[Entity], bool]


@dataclass(frozen=True, slots=True)
class Reach:
    scope: str
    projects: tuple[str, ...] = ()


# -- checks ----------------------------------------------------------------------------


def _controls(text: str, allowed: str = "") -> list[str]:
    return sorted({repr(c) for c in text if unicodedata.category(c) == "Cc" and c not in allowed})


def check_name(field_name: str, name: str) -> str:
    if not name.strip():
        raise ShardpyError("GRAPH_BAD_NAME", f"{field_name} is empty", "Give the entity a name.")
    if len(name) > NAME_MAX:
        raise ShardpyError(
            "GRAPH_BAD_NAME",
            f"{field_name} is {len(name):,} characters; a name holds at most {NAME_MAX}",
            "Use a shorter name; put the detail in an observation.",
        )
    bad = _controls(name)
    if bad:
        raise ShardpyError(
            "GRAPH_BAD_NAME",
            f"{field_name} holds control characters ({', '.join(bad[:5])})",
            "A name is one line of printable text.",
        )
    return name


def check_label(field_name: str, text: str, *, empty_ok: bool) -> str:
    if not empty_ok and not text.strip():
        raise ShardpyError("GRAPH_BAD_NAME", f"{field_name} is empty", f"Give a {field_name}.")
    if len(text) > TYPE_MAX or _controls(text):
        raise ShardpyError(
            "GRAPH_BAD_NAME",
            f"{field_name} is over {TYPE_MAX} characters or holds control characters",
            "A type is a short word or two (person, works_at).",
        )
    return text


def check_observation(text: str) -> str:
    if len(text) > OBSERVATION_MAX:
        raise ShardpyError(
            "GRAPH_TOO_LARGE",
            f"an observation is {len(text):,} characters; one holds at most {OBSERVATION_MAX:,}",
            "An observation is one fact: split it, or keep the document as a note.",
        )
    bad = _controls(text, "\n\t")
    if bad:
        raise ShardpyError(
            "GRAPH_BAD_TEXT",
            f"an observation holds control characters ({', '.join(bad[:5])})",
            "Send plain text (newlines and tabs are fine).",
        )
    return text


def check_count(field_name: str, n: int, limit: int = ITEMS_MAX) -> None:
    if n > limit:
        raise ShardpyError(
            "GRAPH_TOO_MANY",
            f"{field_name} holds {n:,} items; one call takes at most {limit:,}",
            "Split the call; each call is one transaction.",
        )


def not_found(name: str) -> ShardpyError:
    shown = name if len(name) <= 200 else name[:200] + "…"
    return ShardpyError(
        "GRAPH_ENTITY_NOT_FOUND",
        f"Entity with name {shown} not found",  # the reference server's words, exactly
        "Create the entity first (create_entities), or check the name with search_nodes.",
    )


# -- the change one call makes ------------------------------------------------------------


@dataclass
class Work:
    """The snapshot plus this call's writes and deletions (names → entities)."""

    snap: Snapshot
    store: GraphStore
    visible: Visible
    changed: dict[str, Entity] = field(default_factory=dict)
    deleted: dict[str, str] = field(default_factory=dict)  # name → path
    _stems: dict[str, str] = field(default_factory=dict)

    def get(self, name: str) -> Entity | None:
        if name in self.deleted:
            return None
        return self.changed.get(name) or self.snap.entities.get(name)

    def seen(self, name: str) -> Entity | None:
        """The entity (or placeholder) ``name`` as this caller may see it."""
        e = self.get(name)
        return e if e is not None and self.visible(e) else None

    def edit(self, name: str) -> Entity:
        e = self.changed.get(name)
        if e is None:
            base = self.snap.entities[name]
            _writable(base)
            e = self.changed[name] = base.copy()
        return e

    def add(self, e: Entity) -> None:
        snap = Snapshot(self.snap.entities, [], {**self.snap.stems, **self._stems}, {})
        e.path = self.deleted.pop(e.name, "") or self.store.path_for(e.name, snap)
        self._stems[e.path.rsplit("/", 1)[-1].removesuffix(".md").casefold()] = e.name
        self.changed[e.name] = e

    def drop(self, name: str) -> None:
        e = self.get(name)
        if e is None:
            return
        _writable(e)
        self.changed.pop(name, None)
        if e.path and name in self.snap.entities:
            self.deleted[name] = e.path

    def link(self, name: str) -> str:
        """The stem of the note holding ``name`` (what a wikilink to it must say)."""
        e = self.get(name)
        if e is None or not e.path:
            return link_target(name)
        return e.path.rsplit("/", 1)[-1].removesuffix(".md")

    def holders(self, target: str) -> list[str]:
        """Names of the notes holding a relation to ``target`` (this call's changes included)."""
        names = list(self.snap.incoming.get(target, []))
        names += [
            n for n, e in self.changed.items() if n not in names and any(t == target for _, t in e.relations)
        ]
        return names


def _writable(e: Entity) -> None:
    if e.foreign:
        raise ShardpyError(
            "GRAPH_READ_ONLY",
            f"{e.name[:200]!r} is read from {e.path}, a note imported from basic-memory: the graph tools "
            "do not rewrite it",
            "Edit that note (or its source, then import again); new facts can go on an entity of the graph.",
        )


def create_entities(w: Work, items: list[dict[str, Any]], reach: Reach, now: int) -> list[dict[str, Any]]:
    check_count("entities", len(items))
    for item in items:
        check_name("name", item["name"])
        check_label("entityType", item["entityType"], empty_ok=True)
        check_count("observations", len(item["observations"]), CONTENTS_MAX)
        for o in item["observations"]:
            check_observation(o)
    created: list[dict[str, Any]] = []
    for item in items:
        name = item["name"]
        old = w.get(name)
        if old is not None and (old.is_entity or not w.visible(old)):
            continue  # exists (seen or not): ignored, as the reference ignores a duplicate
        facts = [Fact(o, None, now, None) for o in dict.fromkeys(item["observations"])]
        if old is not None:
            e = w.edit(name)
            e.entity_type, e.status, e.facts = item["entityType"], "active", facts
        else:
            w.add(Entity(name, item["entityType"], "active", reach.scope, reach.projects, (), facts))
        created.append(
            {"name": name, "entityType": item["entityType"], "observations": list(item["observations"])}
        )
    return created


def _check_relation(r: dict[str, Any]) -> None:
    check_name("from", r["from"])
    check_name("to", r["to"])
    check_label("relationType", r["relationType"], empty_ok=False)
    if r["from"] == r["to"]:
        raise ShardpyError(
            "GRAPH_SELF_RELATION",
            f"a relation from {r['from'][:200]!r} to itself",
            "A relation links two different entities; say it as an observation instead.",
        )


def create_relations(w: Work, items: list[dict[str, Any]], reach: Reach) -> list[dict[str, Any]]:
    check_count("relations", len(items))
    for r in items:
        _check_relation(r)
    created: list[dict[str, Any]] = []
    for r in items:
        src = w.get(r["from"])
        if src is not None and not w.visible(src):
            continue  # the start is someone else's entity: not this caller's to change
        if src is None:
            w.add(Entity(r["from"], "", "placeholder", reach.scope, reach.projects))
        e = w.edit(r["from"])
        pair = (r["relationType"], r["to"])
        if pair in e.relations:
            continue
        e.relations.append(pair)
        created.append({"from": r["from"], "to": r["to"], "relationType": r["relationType"]})
    return created


def add_observations(w: Work, items: list[dict[str, Any]], now: int) -> list[dict[str, Any]]:
    """Each group's contents onto its entity; ``key`` supersedes the live fact with that key,
    ``key`` + ``valid_to`` without contents retires it (seed 003, "Facts change")."""
    check_count("observations", len(items))
    for item in items:
        check_name("entityName", item["entityName"])
        check_count("contents", len(item["contents"]), CONTENTS_MAX)
        for o in item["contents"]:
            check_observation(o)
        if item.get("key") is not None:
            check_key(item["key"])
            if len(item["contents"]) > 1:
                raise ShardpyError(
                    "GRAPH_BAD_KEY",
                    "a keyed observation is one fact: contents holds several",
                    "Send one content per key (one group per key).",
                )
        if item.get("valid_to") is not None and (item.get("key") is None or item["contents"]):
            raise ShardpyError(
                "GRAPH_BAD_KEY",
                "valid_to retires a keyed fact: it takes a key and no contents",
                "Pass key and valid_to, with contents: [].",
            )
    results: list[dict[str, Any]] = []
    for item in items:
        e = w.seen(item["entityName"])
        if e is None or not e.is_entity:
            raise not_found(item["entityName"])
        e = w.edit(item["entityName"])
        if item.get("key") is not None:
            added = _keyed(e, item["key"], item["contents"], item.get("valid_to"), now)
        else:
            live = {f.shown for f in e.facts if f.live}
            added = [o for o in dict.fromkeys(item["contents"]) if o not in live]
            e.facts += [Fact(o, None, now, None) for o in added]
        results.append({"entityName": item["entityName"], "addedObservations": added})
    return results


def _keyed(e: Entity, key: str, contents: list[str], valid_to: int | None, now: int) -> list[str]:
    """Close every live fact with ``key`` (two machines may each have opened one before a merge:
    tests/graph/test_two_machines.py), then open the new text; retire closes them at ``valid_to``."""
    current = [i for i, f in enumerate(e.facts) if f.live and f.key == key]
    if valid_to is not None:
        if not current:
            raise ShardpyError(
                "GRAPH_NO_LIVE_KEY",
                f"{e.name[:200]!r} has no live fact with key {key!r} to retire",
                "open_nodes shows the entity's live facts; retire one of their keys.",
            )
        starts = [e.facts[i].valid_from for i in current]
        if now < valid_to < now + DAY_MS:
            # Today given as a day means the end of today, still to come: retired as of now, as
            # the hint below says to do (it was always refused: tests/graph/test_note.py).
            valid_to = now
        if valid_to > now or any(s is not None and valid_to < s for s in starts):
            raise ShardpyError(
                "GRAPH_BAD_AS_OF",
                "valid_to must lie between the fact's start and now",
                "Retire a fact as of today, or a past day after it began.",
            )
        for i in current:
            e.facts[i] = e.facts[i].closed(valid_to)
        return []
    if not contents:
        return []
    text = contents[0]
    if len(current) == 1 and e.facts[current[0]].text == text:
        return []
    for i in current:
        e.facts[i] = e.facts[i].closed(now)
    e.facts.append(Fact(text, key, now, None))
    return [e.facts[-1].shown]


def delete_entities(w: Work, names: list[str]) -> None:
    check_count("entityNames", len(names))
    gone = set()
    for name in names:
        e = w.seen(name)
        if e is not None:
            w.drop(name)
        gone.add(name)
    for name in gone:
        for holder in w.holders(name):
            h = w.seen(holder)
            if h is None or h.foreign:
                continue  # another caller's note, or basic-memory's: not this call's to rewrite
            e = w.edit(holder)
            e.relations = [(t, to) for t, to in e.relations if to != name]
            _drop_if_empty_placeholder(w, e)


def _drop_if_empty_placeholder(w: Work, e: Entity) -> None:
    if not e.is_entity and not e.relations:
        w.drop(e.name)


def delete_observations(w: Work, items: list[dict[str, Any]]) -> None:
    check_count("deletions", len(items))
    for item in items:
        e = w.seen(item["entityName"])
        if e is None or not e.is_entity:
            continue
        gone = set(item["observations"])
        if any(f.live and f.shown in gone for f in e.facts):
            e = w.edit(item["entityName"])
            e.facts = [f for f in e.facts if not (f.live and f.shown in gone)]


def delete_relations(w: Work, items: list[dict[str, Any]]) -> None:
    check_count("relations", len(items))
    for r in items:
        e = w.seen(r["from"])
        pair = (r["relationType"], r["to"])
        if e is None or pair not in e.relations:
            continue
        e = w.edit(r["from"])
        e.relations.remove(pair)
        _drop_if_empty_placeholder(w, e)


# -- reads -----------------------------------------------------------------------------------


@dataclass
class View:
    """One caller's view of one snapshot: which notes it sees, which relations it is shown."""

    snap: Snapshot
    visible: Visible
    _seen: dict[str, bool] = field(default_factory=dict)
    _relations: list[Relation] | None = None
    _entities: list[Entity] | None = None
    answers: dict[str, Any] = field(default_factory=dict)  # whole answers kept while the view lives

    def carried(self, before: View | None) -> View:
        """This view with what ``before`` computed for entities that are the same objects here
        (a write replaces a few notes; the other 20,000 are not looked at again)."""
        if before is not None:
            now, then = self.snap.entities, before.snap.entities
            self._seen = {n: v for n, v in before._seen.items() if now.get(n) is then.get(n)}
        return self

    def sees(self, name: str) -> bool:
        got = self._seen.get(name)
        if got is None:
            e = self.snap.entities.get(name)
            got = self._seen[name] = e is not None and self.visible(e)
        return got

    def shown(self, target: str) -> bool:
        """A relation's end is shown when the caller sees it, or when no note holds that name."""
        return target not in self.snap.entities or self.sees(target)

    def entities(self) -> list[Entity]:
        if self._entities is None:
            self._entities = [e for n, e in self.snap.entities.items() if e.is_entity and self.sees(n)]
        return self._entities

    def relations(self) -> list[Relation]:
        if self._relations is None:
            self._relations = [
                Relation(n, t, to)
                for n, e in self.snap.entities.items()
                if self.sees(n)
                for t, to in e.relations
                if self.shown(to)
            ]
        return self._relations

    def touching(self, names: set[str]) -> list[Relation]:
        """Relations from or to any of ``names`` (each once), by the index, never a full scan."""
        out: dict[Relation, None] = {}
        for name in names:
            holders = [name, *self.snap.incoming.get(name, [])]
            for h in holders:
                e = self.snap.entities.get(h)
                if e is None or not self.sees(h):
                    continue
                for t, to in e.relations:
                    if (h == name or to == name) and self.shown(to):
                        out[Relation(h, t, to)] = None
        return list(out)


def graph_json(entities: list[Entity], relations: list[Relation], as_of: int | None) -> dict[str, Any]:
    return {"entities": [e.to_json(as_of) for e in entities], "relations": [r.to_json() for r in relations]}


def read_graph(view: View, as_of: int | None) -> dict[str, Any]:
    return graph_json(view.entities(), view.relations(), as_of)


def search_hits(view: View, query: str, as_of: int | None) -> list[Entity]:
    """The entities the caller sees whose name, type or an observation shown at ``as_of`` holds
    ``query``, case-insensitively (the reference's rule), found through the snapshot's joined text
    (``graph.search``) instead of asking each entity."""
    q = query.lower()
    return [
        e
        for e in view.snap.haystack().candidates(q)
        if e.is_entity and view.sees(e.name) and matches(e, q, as_of)
    ]


def search_nodes(view: View, query: str, as_of: int | None) -> dict[str, Any]:
    found = search_hits(view, query, as_of)
    return graph_json(found, view.touching({e.name for e in found}), as_of)


def open_nodes(view: View, names: list[str], as_of: int | None) -> dict[str, Any]:
    wanted = dict.fromkeys(names)
    found = [
        e for n in wanted if (e := view.snap.entities.get(n)) is not None and e.is_entity and view.sees(n)
    ]
    order = view.snap.order()
    found.sort(key=lambda e: order[e.name])
    return graph_json(found, view.touching({e.name for e in found}), as_of)
