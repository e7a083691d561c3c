"""``search_nodes``' part of the derived index: every entity's searchable text in one string.

The reference server matches a query case-insensitively as a substring of an entity's name, its
type or one of its observations (``dist/index.js``: ``toLowerCase().includes``). Asking each of
20,000 entities in turn cost a Python call per entity per query (issue 28, "Speed"); here the
texts of one snapshot are joined once, lowercased, with NUL between parts and between entities
(a query never holds NUL: ``SERVE_BAD_TEXT``, so a match never spans two parts), and a query is
``str.find`` over that string, jumping to the next entity after each hit.

The string holds every fact, live or closed, so it answers any ``as_of`` with a superset: a
candidate is then checked against the facts valid at that instant (``matches``), as before.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass

from shardpy.graph.facts import visible_facts
from shardpy.graph.note import Entity

SEP = "\x00"


def text_of(e: Entity) -> str:
    """Name, type and every fact of ``e``, lowercased (cached on the entity: a snapshot's entities
    are never changed in place, a write copies the one it edits)."""
    got = e.search_text
    if got is None:
        got = e.search_text = SEP.join([e.name, e.entity_type, *(f.shown for f in e.facts)]).lower()
    return got


def matches(e: Entity, q: str, as_of: int | None) -> bool:
    """Whether lowercased query ``q`` is in the name, type or an observation ``e`` shows at ``as_of``
    (now when None): the reference server's rule, checked on one entity."""
    if as_of is None and all(f.live for f in e.facts):
        return q in text_of(e)  # every fact shown: the cached text is exactly the shown one
    shown = [f.shown for f in visible_facts(e.facts, as_of)]
    return q in SEP.join([e.name, e.entity_type, *shown]).lower()


@dataclass(frozen=True)
class Haystack:
    """The joined text of a snapshot's entities, in its order; ``starts[i]`` is where entity
    ``entities[i]`` begins (one past the end for the last slot)."""

    text: str
    starts: list[int]
    entities: list[Entity]

    @staticmethod
    def of(entities: Iterable[Entity]) -> Haystack:
        order = list(entities)
        texts = [text_of(e) for e in order]
        starts: list[int] = []
        at = 0
        for t in texts:
            starts.append(at)
            at += len(t) + 1
        starts.append(at)
        return Haystack(SEP.join(texts), starts, order)

    def candidates(self, q: str) -> list[Entity]:
        """Entities whose text (all facts) holds ``q``, each once, in snapshot order."""
        out: list[Entity] = []
        if not self.entities:
            return out
        text, starts = self.text, self.starts
        at = text.find(q)
        while at != -1:
            i = bisect_right(starts, at) - 1
            out.append(self.entities[i])
            at = text.find(q, starts[i + 1])  # past the end: -1, even for the empty query
        return out
