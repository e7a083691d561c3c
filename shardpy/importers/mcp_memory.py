"""The MCP reference memory server's knowledge graph: one note per entity.

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
from shardpy.frontmatter import as_text, render_block, split_frontmatter
from shardpy.importers.links import LinkUse, Resolution, Resolver, note_stem, rewrite_body
from shardpy.importers.markdown import inline_blocks
from shardpy.importers.models import Built, Notice, Provenance, Record, sha256
from shardpy.importers.names import sanitize_path_part, stem_for
from shardpy.importers.provenance import link_signature, provenance_items
from shardpy.importers.walk import Skipped

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
            folder = sanitize_path_part(e.entity_type.strip() or "entity")
            stem, renamed = stem_for(e.name)
            if renamed:
                yield Notice(
                    sp, f"name is not a valid file name; the note is {stem}.md (the name is kept in aliases)"
                )
            base_stem = stem
            n = 2
            while f"{folder}/{stem}".casefold() in taken:
                stem = f"{base_stem} ({n})"
                n += 1
            if stem != base_stem:
                other = taken[f"{folder}/{base_stem}".casefold()]
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
        e = self.entities[record.locator]
        nl = "\n"
        lines = [f"# {' '.join(e.name.split()) or note_stem(record.target)}", ""]
        if e.observations:
            lines += ["## Observations", ""]
            for o in e.observations:
                parts = o.split("\n") if o else [""]
                lines.append(f"- {parts[0]}" if parts[0] else "-")
                lines.extend(f"  {p}" if p else "" for p in parts[1:])
            lines.append("")
        direct: list[LinkUse] = []
        if e.relations:
            lines += ["## Relations", ""]
            for rtype, to in e.relations:
                link, use = _relation_link(to, record, resolver)
                if use is not None:
                    direct.append(use)
                lines.append(f"- {relation_label(rtype)}{link}")
            lines.append("")
        body = nl + nl.join(lines)
        blocks = [b for b in inline_blocks(body) if not _is_direct(b.content, direct)]
        new_body, uses = rewrite_body(
            body, blocks, resolver, source_dir="", target=record.target, resolve_md_links=False
        )
        uses = direct + uses
        updates: list[tuple[str, str | list[str]]] = [("title", e.name), ("type", e.entity_type)]
        if note_stem(record.target) != e.name and e.name.strip():
            updates.append(("aliases", [e.name]))  # a blank name is no alias; `title` keeps it
        for key, value in e.extra.items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            updates.append((f"mcp_{key}", text))
        # A memory graph is the user's, shared by every session of the client: `shardpy serve`
        # recalls it for every caller (docs/SERVE.md, "Import").
        updates.append(("scope", "general"))
        updates.extend(provenance_items(prov, record.source_path, record.source_hash))
        block = render_block("", {}, updates, nl)
        return Built((block + new_body).encode("utf-8"), list(e.observations), uses, link_signature(uses))

    def observations_of(self, data: bytes) -> list[str]:
        return observations_in_note(data.decode("utf-8", "replace"))

    def supersede(self, old: bytes, new: bytes, day: str) -> bytes:
        """Keep each ``[key] text`` observation the source replaced (same key, new text) under
        ``## Superseded`` with its validity, as the seed's keyed observations do; unkeyed ones never."""
        old_text, new_text = old.decode("utf-8", "replace"), new.decode("utf-8", "replace")
        now = observations_in_note(new_text)
        new_keys = {k for k in (_obs_key(o) for o in now) if k}
        since = _imported_day(old_text)
        lines = _section_lines(old_text, "## Superseded")
        for o in observations_in_note(old_text):
            key = _obs_key(o)
            if key in new_keys and o not in now:
                lines.append(f"- {o.replace(chr(10), ' ')} (valid {since} → {day})")
        if not lines:
            return new
        block = "## Superseded\n\n" + "\n".join(lines) + "\n\n"
        at = new_text.find("\n## Relations\n")
        text = (
            new_text + "\n" + block.rstrip("\n") + "\n"
            if at < 0
            else new_text[: at + 1] + block + new_text[at + 1 :]
        )
        return text.encode("utf-8")


_KEYED = re.compile(r"\[([a-z0-9][a-z0-9_.-]*)\] ")


def _obs_key(observation: str) -> str | None:
    m = _KEYED.match(observation)
    return m.group(1) if m else None


def _imported_day(text: str) -> str:
    """The day the earlier import wrote the note (from its provenance), the superseded fact's valid-from."""
    stamp = as_text(split_frontmatter(text).data.get("imported_at")) or ""
    return stamp[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", stamp) else "?"


def _section_lines(text: str, heading: str) -> list[str]:
    """The bullet lines of one ``## `` section (empty when the note has none)."""
    out: list[str] = []
    inside = False
    for line in text.split("\n"):
        if line.startswith("## "):
            inside = line.strip() == heading
            continue
        if inside and line.startswith("- "):
            out.append(line)
    return out


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


def _is_direct(content: str, direct: list[LinkUse]) -> bool:
    return any(u.replacement is not None and u.replacement in content for u in direct) or any(
        u.text in content and u.replacement is None for u in direct
    )


def relation_label(rtype: str) -> str:
    """The relation type as written before its link, so that basic-memory's grammar
    (``bm_grammar.parse_explicit_relation``) reads back exactly ``written_type(rtype)``.

    A type with spaces, or one that starts or ends with a quote (``"q"``), is quoted:
    the reader takes off one pair of the same quote and nothing else. What a list
    item cannot carry is changed visibly (``written_type``) and noticed by the scan.
    Property-tested: tests/hardening/test_mcp_relations.py."""
    written = written_type(rtype)
    if any(c.isspace() for c in written) or written[0] in "'\"" or written[-1] in "'\"":
        return f'"{written}" '
    return f"{written} "


def written_type(rtype: str) -> str:
    """``rtype`` as a relation bullet can hold it: one line, no ``[[`` (it would start the
    link), no surrounding blanks; an empty type is basic-memory's ``links_to``."""
    one_line = " ".join(rtype.splitlines()).replace("[[", "[ [").strip()
    return one_line or "links_to"


def observations_in_note(text: str) -> list[str]:
    """Observation bullets of a note this adapter wrote (continuation lines joined back)."""
    out: list[str] = []
    in_section = False
    for line in text.split("\n"):
        if line.startswith("## "):
            in_section = line.strip() == "## Observations"
            continue
        if not in_section:
            continue
        if line.startswith("- ") or line == "-":
            out.append(line[2:])
        elif line.startswith("  ") and out:
            out[-1] += "\n" + line[2:]
        elif line == "" and out:
            continue
    return out


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
    etype = _str(obj.get("entityType")) or _str(obj.pop("_t", None)) or "entity"
    obj.pop("_t", None)
    observations = [
        o if isinstance(o, str) else json.dumps(o, ensure_ascii=False) for o in obj.get("observations") or []
    ]
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
        if written_type(rtype) != rtype:
            yield Notice(where, f"relation type {rtype!r} is written as {written_type(rtype)!r}")
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
            owner = by_name[frm] = Entity(frm, "entity", [], {}, line)
        owner.relations.append((rtype, to))


def _graph_items(whole: dict[str, Any]) -> Iterator[tuple[int, Any, str]]:
    """The records of one ``{"entities": [...], "relations": [...]}`` document, typed as lines are."""
    for e in whole.get("entities") or []:
        if isinstance(e, dict):
            e = {"type": "entity", **{k: v for k, v in e.items() if k != "type"}, "_t": e.get("type")}
        yield 0, e, ""
    for r in whole.get("relations") or []:
        if isinstance(r, dict):
            r = {**r, "type": "relation"}
        yield 0, r, ""
