"""The MCP reference memory server's knowledge graph: one note per entity, in the memory
graph's own format (``shardpy.graph.note``), so an imported graph is the graph the tools serve.

Reads ``memory.jsonl`` (or the legacy ``memory.json``, which holds JSON
Lines too), the ``mcp-knowledge-graph`` fork's files (with their ``_aim``
marker line), and a whole-graph ``{"entities": [...], "relations": [...]}``
export. Entity identity is the exact name string.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_bytes as sha256
from shardpy.graph.facts import KEY, Fact, now_ms, parse_instant
from shardpy.graph.note import Entity as GraphEntity
from shardpy.graph.note import link_target, parse_note, render_note, shown_type
from shardpy.importers.links import LinkUse, Resolution, Resolver
from shardpy.importers.models import Built, Provenance, Record
from shardpy.importers.names import stem_for
from shardpy.importers.provenance import link_signature, provenance_items
from shardpy.notes.note import stem as note_stem
from shardpy.plan.importplan import Notice, Skipped

FORMAT = "mcp-memory"
PREFERRED = ("memory.jsonl", "memory.json")
_LINK_UNSAFE = ("[", "]", "|", "#", "^")


@dataclass(slots=True)
class Entity:
    name: str
    entity_type: str
    observations: list[str]
    extra: dict[str, Any]
    line: int
    relations: list[tuple[str, str]] = field(default_factory=list)  # (type, target)
    placeholder: bool = False  # a name relations start at, with no entity line (not an entity)


def find_graph_file(source: Path) -> Path:
    """The graph file SOURCE names, or the one its folder holds."""
    if source.is_file():
        return source
    candidates = [source / n for n in PREFERRED if (source / n).is_file()]
    if not candidates:
        candidates = sorted(
            p for p in source.iterdir() if p.is_file() and p.suffix.lower() in (".jsonl", ".json")
        )
        if len(candidates) > 1:
            raise ShardpyError(
                "IMPORT_SOURCE_AMBIGUOUS",
                f"{source} holds several graph files: " + ", ".join(p.name for p in candidates),
                "Pass the file to import as SOURCE.",
                path=str(source),
            )
    if not candidates:
        raise ShardpyError(
            "IMPORT_SOURCE_LAYOUT",
            f"No memory.jsonl, memory.json or other .jsonl/.json file in {source}",
            "Pass the MCP memory server's graph file (MEMORY_FILE_PATH) as SOURCE.",
            path=str(source),
        )
    return candidates[0]


def _str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float):
        return json.dumps(value)
    return None


def _classify(obj: dict[str, Any]) -> str:
    kind = obj.get("type")
    if kind in ("entity", "relation"):
        return str(kind)
    if kind == "_aim":
        return "_aim"
    if any(k in obj for k in ("from", "from_id")) and any(k in obj for k in ("to", "to_id")):
        return "relation"
    if any(k in obj for k in ("name", "entityName", "id")):
        return "entity"
    return "unknown"


ENTITY_KEYS = {"type", "name", "entityName", "id", "entityType", "observations"}


class McpMemoryAdapter:
    format = FORMAT

    def __init__(self, source: Path, *, strict: bool = False) -> None:
        self.file = find_graph_file(source)
        self.label = self.file.name
        self.entities: list[Entity] = []

    def _items(self, text: str) -> Iterator[tuple[int, Any, str]]:
        """(line, decoded object or None, error) for every record of the file."""
        stripped = text.strip()
        if stripped.startswith(("{", "[")):
            try:
                whole = json.loads(stripped)
            except (ValueError, RecursionError):  # deeply nested: read line by line below
                whole = None
            if isinstance(whole, dict) and ("entities" in whole or "relations" in whole):
                yield from _graph_items(whole)
                return
            if isinstance(whole, list):
                for obj in whole:
                    yield 0, obj, ""
                return
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                yield n, json.loads(line), ""
            except ValueError as exc:
                yield n, None, f"invalid JSON: {exc}"
            except RecursionError:  # 200k nested "[": a bad line like any other, not a crash
                yield n, None, "invalid JSON: nested too deeply"

    def scan(self) -> Iterator[Record | Skipped | Notice]:
        text = self._read_text()
        label = self.label
        by_name: dict[str, Entity] = {}
        relations: list[tuple[int, str, str, str]] = []
        if not text.strip():
            yield Notice(label, "the graph is empty")
        for line, obj, error in self._items(text):
            where = f"{label}#line={line}" if line else label
            if error:
                yield Skipped(where, error)
                continue
            if not isinstance(obj, dict):
                yield Skipped(where, "not a JSON object")
                continue
            try:
                obj, halves = _whole_characters(obj)
            except RecursionError:  # nested past the walk's depth: taken as it is, as before the walk
                halves = 0
            if halves:
                # Node writes half an emoji as "\ud83d" when it cuts a string inside one; such a
                # text cannot be written as UTF-8 (a traceback before: tests/importers/test_mcp_shapes.py).
                yield Notice(where, f"{halves} half character(s) (lone surrogates) replaced by U+FFFD")
            yield from _gather(obj, line, where, by_name, relations)
        yield from _attach_relations(label, by_name, relations)
        self.entities = list(by_name.values())
        self.entities.sort(key=lambda e: e.line)
        yield from self._records(label)

    def _read_text(self) -> str:
        """The graph file as text (UTF-8, a BOM dropped); typed errors when it cannot be."""
        try:
            raw = self.file.read_bytes()
        except OSError as exc:
            raise ShardpyError(
                "IMPORT_SOURCE_UNREADABLE",
                f"Cannot read {self.file}: {exc.strerror or exc}",
                "Check the file's permissions.",
                path=str(self.file),
            ) from exc
        try:
            return raw.decode("utf-8").lstrip("\ufeff")
        except UnicodeDecodeError as exc:
            raise ShardpyError(
                "IMPORT_SOURCE_ENCODING",
                f"{self.file} is not UTF-8 (byte {exc.start})",
                "The memory server writes UTF-8; convert the file or pass the right one.",
                path=str(self.file),
            ) from None

    def _records(self, label: str) -> Iterator[Record | Notice]:
        groups: dict[str, list[Entity]] = {}
        for e in self.entities:
            groups.setdefault(e.name.strip().casefold(), []).append(e)
        taken: dict[str, str] = {}  # casefolded folder/stem → entity name
        # A name that is its own file name keeps it, whatever line comes first: "A: B?" (sanitised
        # to "A- B") took A- B.md from the entity named "A- B", so [[A- B]] opened the wrong one
        # (a helper's probe; tests/importers/test_mcp_shapes.py).
        claimed: dict[str, str] = {}
        for e in self.entities:
            own, renamed = stem_for(e.name)
            if not renamed:
                claimed.setdefault(f"/{own}".casefold(), e.name)
        for index, e in enumerate(self.entities):
            sp = f"{label}#entity={e.name}"
            variants = [o.name for o in groups[e.name.strip().casefold()] if o.name != e.name]
            if variants:
                yield Notice(
                    sp,
                    "name differs only by case or surrounding spaces from "
                    + ", ".join(repr(v) for v in variants)
                    + "; imported as a separate note",
                )
            folder = ""  # every entity in the one graph folder (--into, by default <memory_root>/graph)
            stem, renamed = stem_for(e.name)
            if renamed:
                yield Notice(
                    sp, f"name is not a valid file name; the note is {stem}.md (the name is kept in aliases)"
                )
            base_stem = stem
            n = 2
            while (
                f"{folder}/{stem}".casefold() in taken
                or claimed.get(f"{folder}/{stem}".casefold(), e.name) != e.name
            ):
                stem = f"{base_stem} ({n})"
                n += 1
            if stem != base_stem:
                key = f"{folder}/{base_stem}".casefold()
                other = taken[key] if key in taken else claimed[key]  # "" is a name too
                yield Notice(sp, f"file name {base_stem}.md is taken by {other!r}; the note is {stem}.md")
                renamed = True
            taken[f"{folder}/{stem}".casefold()] = e.name
            payload = {
                "name": e.name,
                "entityType": e.entity_type,
                "observations": e.observations,
                "extra": e.extra,
                "relations": sorted(e.relations),
            }
            digest = sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str).encode())
            yield Record(
                sp,
                "note",
                e.entity_type,
                e.name,
                stem,
                folder,
                digest,
                index,
                names=(e.name,),
                keys=(stem,),
                renamed=renamed,
            )

    def build(self, record: Record, resolver: Resolver, prov: Provenance) -> Built:
        """The entity note of the memory graph (docs/MEMORY.md): observations as live facts from
        the import's instant, relations under ``## Related`` linking the target entity's note."""
        e = self.entities[record.locator]
        at = parse_instant(prov.imported_at) or now_ms()
        direct: list[LinkUse] = []
        stems: dict[str, str] = {}
        for _rtype, to in e.relations:
            _link, use = _relation_link(to, record, resolver)
            if use is None:  # a name the graph does not define: resolved against the vault's notes
                res = resolver.resolve(to) if to.strip() else Resolution("unresolved", reason="blank name")
                use = LinkUse(f"[[{to}]]", to, res.status, res.target, res.reason, None)
            direct.append(use)
            stems[to] = note_stem(use.target) if use.status == "resolved" and use.target else link_target(to)
        entity = GraphEntity(
            name=e.name,
            entity_type=e.entity_type,
            status="placeholder" if e.placeholder else "active",
            scope="general",  # the graph is the user's, shared by every session (docs/SERVE.md "Import")
            facts=[_fact(o, at) for o in e.observations],
            relations=list(dict.fromkeys(e.relations)),
        )
        extra: list[tuple[str, str | list[str]]] = []
        if note_stem(record.target) != e.name and e.name.strip():
            extra.append(("aliases", [e.name]))  # Obsidian finds the renamed note by its exact name
        for key, value in e.extra.items():
            extra.append(
                (f"mcp_{key}", value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
            )
        extra.extend(provenance_items(prov, record.source_path, record.source_hash))
        data = render_note(entity, lambda name: stems.get(name, link_target(name)), extra)
        return Built(data.encode("utf-8"), list(e.observations), direct, link_signature(direct))

    def observations_of(self, data: bytes) -> list[str]:
        e = parse_note("x.md", data.decode("utf-8", "replace"))
        return e.observations() if isinstance(e, GraphEntity) else []

    def supersede(self, old: bytes, new: bytes, day: str) -> bytes:
        """A re-import keeps the note's history (seed 003, "Facts change"): a fact still in the
        source keeps the instant it began; a keyed fact (``[key] text``) whose key now holds another
        text is closed and kept under ``## Superseded``; an unkeyed one the source dropped is gone."""
        before = parse_note("x.md", old.decode("utf-8", "replace"))
        after = parse_note("x.md", new.decode("utf-8", "replace"))
        if not isinstance(before, GraphEntity) or not isinstance(after, GraphEntity):
            return new
        now = next((f.valid_from for f in after.facts if f.valid_from is not None), None) or now_ms()
        began: dict[tuple[str | None, str], list[Fact]] = {}
        for f in before.facts:
            if f.live:
                began.setdefault((f.key, f.text), []).append(f)
        facts = [began[(f.key, f.text)].pop(0) if began.get((f.key, f.text)) else f for f in after.facts]
        keys = {f.key for f in after.facts if f.key is not None}
        closed = [f.closed(now) for fs in began.values() for f in fs if f.key in keys]
        history = [f for f in before.facts if not f.live]
        if facts == after.facts and not closed and not history:
            return new
        after.facts = facts + history + closed
        links = after.links
        return render_note(after, lambda name: links.get(name, link_target(name))).encode("utf-8")


def _fact(observation: str, at: int) -> Fact:
    """An observation string as a fact: ``[key] text`` (the key's pattern) is keyed, as a
    basic-memory category is (seed 003); anything else is kept as it is."""
    if observation.startswith("["):
        close = observation.find("] ")
        if close > 1 and KEY.fullmatch(observation[1:close]):
            return Fact(observation[close + 2 :], observation[1:close], at, None)
    return Fact(observation, None, at, None)


def _relation_link(to: str, record: Record, resolver: Resolver) -> tuple[str, LinkUse | None]:
    """The link of a relation to the entity named exactly ``to``.

    The entity of this graph with that exact name wins (found by identity, not by a name
    lookup that folds case and blanks: ``' Alice'`` and ``Alice.md`` are other entities than
    ``Alice``); a name the graph does not define links as written, resolved against the
    vault by the body's rewrite (None: no use of its own)."""
    res = _by_identity(resolver, record, to)
    unsafe = any(c in to for c in _LINK_UNSAFE) or "\n" in to or not to.strip()
    if res.status != "resolved" or res.target is None:
        if not unsafe:
            return f"[[{to}]]", None
        if to.strip():
            res = resolver.resolve(to)
        if res.status != "resolved" or res.target is None:
            return f"[[{to}]]", LinkUse(f"[[{to}]]", to, res.status, None, res.reason, None)
    name = resolver.link_name(res.target)
    if name == to:
        link = f"[[{to}]]"
    elif unsafe or to != to.strip():
        link = f"[[{name}]]"  # no display text: the note's title and aliases carry the exact name
    else:
        link = f"[[{name}|{to}]]"
    return link, LinkUse(f"[[{to}]]", to, "resolved", res.target, "", link)


def _by_identity(resolver: Resolver, record: Record, name: str) -> Resolution:
    """The note of the entity named exactly ``name`` in this graph."""
    label = record.source_path.rsplit("#entity=", 1)[0]
    target = resolver.target_of_source(f"{label}#entity={name}")
    if target is None:
        return Resolution("unresolved", reason="no entity with this (blank) name in the graph")
    return Resolution("resolved", target)


def _gather(
    obj: dict[str, Any],
    line: int,
    where: str,
    by_name: dict[str, Entity],
    relations: list[tuple[int, str, str, str]],
) -> Iterator[Skipped | Notice]:
    """File one decoded record: an entity into ``by_name`` (duplicates merged), a relation into
    ``relations``; yields what is skipped or noticed on the way."""
    kind = _classify(obj)
    if kind == "_aim":
        yield Notice(where, "mcp-knowledge-graph marker line (ignored)")
        return
    if kind == "unknown":
        yield Skipped(where, f"unknown record type {obj.get('type')!r}")
        return
    if kind == "relation":
        frm = _str(obj.get("from", obj.get("from_id")))
        to = _str(obj.get("to", obj.get("to_id")))
        rtype = _str(obj.get("relationType", obj.get("relation_type"))) or ""
        if frm is None or to is None:
            yield Skipped(where, "relation without from/to")
            return
        relations.append((line, frm, to, rtype))
        return
    name = _str(obj.get("name", obj.get("entityName", obj.get("id"))))
    if name is None:
        yield Skipped(where, "entity without a name")
        return
    # An empty (or blank) name is a name the memory server accepts: the entity is
    # imported under the placeholder file name sanitising gives it (`untitled`).
    # An empty entityType is the server's to keep (create_entities accepts ""): only a missing one defaults.
    etype = _str(obj.get("entityType"))
    if etype is None:
        etype = _str(obj.get("_t")) or "entity"
    obj.pop("_t", None)
    raw = obj.get("observations") or []
    if not isinstance(raw, list):
        # A string was split into one observation per character; a number or a boolean was a
        # traceback (tests/importers/test_mcp_shapes.py): either is one observation.
        yield Notice(where, f"observations is a {type(raw).__name__}, not a list: taken as one observation")
        raw = [raw]
    observations = [o if isinstance(o, str) else json.dumps(o, ensure_ascii=False) for o in raw]
    first = by_name.get(name)
    if first is None:
        extra = {k: v for k, v in obj.items() if k not in ENTITY_KEYS}
        by_name[name] = Entity(name, etype, observations, extra, line)
        return
    note = f"duplicate entity line for {name!r}; merged into line {first.line}"
    if etype != first.entity_type:
        note += f" (its type {etype!r} differs; keeping {first.entity_type!r})"
    yield Notice(where, note)
    for o in observations:
        if o not in first.observations:
            first.observations.append(o)


def _attach_relations(
    label: str, by_name: dict[str, Entity], relations: list[tuple[int, str, str, str]]
) -> Iterator[Notice]:
    """Each relation onto the entity it starts at (duplicates and dangling starts noticed)."""
    seen: set[tuple[str, str, str]] = set()
    for line, frm, to, rtype in relations:
        where = f"{label}#line={line}" if line else label
        triple = (frm, to, rtype)
        if triple in seen:
            yield Notice(where, f"duplicate relation {frm!r} -{rtype}-> {to!r} ignored")
            continue
        seen.add(triple)
        if shown_type(rtype) != rtype:
            yield Notice(where, f"relation type {rtype!r} is shown as {shown_type(rtype)!r} (kept exactly)")
        owner = by_name.get(frm)
        if owner is None:
            # The memory server keeps a relation whose start it never defined (create_relations
            # checks nothing), and read_graph returns it: the relation is imported on a note
            # made for that name, never dropped (tests/hardening/test_mcp_relations.py).
            yield Notice(
                where,
                f"relation {frm!r} -{rtype}-> {to!r} starts at a name with no entity line; "
                "a note is made for it",
            )
            owner = by_name[frm] = Entity(frm, "", [], {}, line, placeholder=True)
        owner.relations.append((rtype, to))


_SURROGATE = re.compile("[\ud800-\udfff]")


def _whole_characters(value: Any) -> tuple[Any, int]:
    """``value`` with every lone surrogate in its texts (keys too) replaced by U+FFFD, and how many."""
    if isinstance(value, str):
        fixed, n = _SURROGATE.subn("\ufffd", value)
        return fixed, n
    if isinstance(value, list):
        parts = [_whole_characters(v) for v in value]
        return [v for v, _ in parts], sum(n for _, n in parts)
    if isinstance(value, dict):
        out, total = {}, 0
        for k, v in value.items():
            key, a = _whole_characters(k)
            val, b = _whole_characters(v)
            out[key] = val
            total += a + b
        return out, total
    return value, 0


def _graph_items(whole: dict[str, Any]) -> Iterator[tuple[int, Any, str]]:
    """The records of one ``{"entities": [...], "relations": [...]}`` document, typed as lines are
    (a part that is not a list is one bad record: skipped with its reason, never a traceback)."""
    for part in ("entities", "relations"):
        if not isinstance(whole.get(part) or [], list):
            yield 0, None, f"{part!r} is not a list"
    for e in _listed(whole, "entities"):
        if isinstance(e, dict):
            e = {"type": "entity", **{k: v for k, v in e.items() if k != "type"}, "_t": e.get("type")}
        yield 0, e, ""
    for r in _listed(whole, "relations"):
        if isinstance(r, dict):
            r = {**r, "type": "relation"}
        yield 0, r, ""


def _listed(whole: dict[str, Any], part: str) -> list[Any]:
    items = whole.get(part) or []
    return items if isinstance(items, list) else []
