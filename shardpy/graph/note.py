"""One entity, one note: parse and render ``<memory_root>/graph/<Entity Name>.md``.

The shape (seed 003; docs/MEMORY.md)::

    ---
    entity: Priya            # the exact name (the file stem may be a safe spelling of it)
    entity_type: person
    status: active
    scope: project           # the memory model's reach keys (docs/SERVE.md)
    projects:
    - atlas
    ---
    # Priya

    ## Observations

    - [team] on the memory team

    ## Superseded

    - [team] on the platform team (valid 2025-09-13 → 2025-09-25)

    ## Related

    - works_with [[Bob]]

    <!-- shardpy:graph ... -->

The page has day granularity; the closing HTML comment (the machine block, owned
by this module) carries each fact's exact instants, one line per fact, matched to
its bullet by key and a hash of its text, so a hand-edited bullet simply loses its
instants. Everything the parser does not own (other frontmatter keys, prose,
other sections) is kept through every later write. The note is the truth; a
note whose frontmatter no longer parses is reported, never rewritten.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from shardpy.fsutil import sha256_bytes
from shardpy.graph.facts import KEY, Fact, day, iso, parse_day, parse_instant
from shardpy.notes.frontmatter import (
    Split,
    as_list,
    as_text,
    read_keys,
    render_block,
    split_frontmatter,
)
from shardpy.notes.written import Written

OBSERVATIONS = "## Observations"
SUPERSEDED = "## Superseded"
RELATED = "## Related"
OWNED = (OBSERVATIONS, SUPERSEDED, RELATED)
BLOCK_OPEN = "<!-- shardpy:graph (exact instants of the facts above; kept by shardpy) -->"
_BLOCK_START = "<!-- shardpy:graph"
_BLOCK_END = "-->"
NO_OBSERVATIONS = "_No observations._"
NO_RELATIONS = "_No relations._"
STATUSES = ("active", "placeholder")  # placeholder: a name relations start at, with no entity yet
_UNSAFE_STEM = set('/\\:*?"<>|#^[]')
_LINK_UNSAFE = set("[]|#^")
_SUPERSEDED = re.compile(r"(.*) \(valid (\d{4}-\d{2}-\d{2}|\?) → (\d{4}-\d{2}-\d{2}|\?)\)\s*", re.S)
_RELATION = re.compile(r'(?:"([^"]+)"|(\S+)) \[\[([^\]]*)\]\]\s*')
STEM_BYTES = 180


@dataclass(frozen=True, slots=True)
class Relation:
    source: str
    relation_type: str
    target: str

    def to_json(self) -> dict[str, str]:
        return {"from": self.source, "to": self.target, "relationType": self.relation_type}


@dataclass(slots=True)
class Entity:
    name: str
    entity_type: str
    status: str = "active"
    scope: str = "general"
    projects: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    facts: list[Fact] = field(default_factory=list)
    relations: list[tuple[str, str]] = field(default_factory=list)  # (type, target)
    path: str = ""  # vault-relative
    fm_text: str = ""  # the frontmatter as found, so keys we do not own survive
    fm_data: dict[str, Any] | None = field(default_factory=dict)  # None: read from fm_text when needed
    fm_whole: bool = True  # fm_data is the whole mapping (False: only OWNED_KEYS', the fast read)
    preamble: str = ""  # prose between the title and the first ## heading
    others: str = ""  # sections the graph does not own, verbatim
    loose: dict[str, str] = field(default_factory=dict)  # prose inside an owned section, kept after its list
    links: dict[str, str] = field(default_factory=dict)  # relation target → the link stem the note wrote
    foreign: bool = False  # a note another tool owns (basic-memory's import): read, never rewritten
    # The note's BOM and CRLF line ends, put back when it is rewritten (notes/written.py): a hand
    # re-saved note came back LF in every line, its BOM dropped (tests/graph/test_note.py).
    crlf: bool = field(default=False, compare=False)
    bom: bool = field(default=False, compare=False)
    # search_nodes' lowercased text (graph.search.text_of), never copied: copy() makes a fresh one
    search_text: str | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def is_entity(self) -> bool:
        return self.status != "placeholder"

    def observations(self, as_of: int | None = None) -> list[str]:
        from shardpy.graph.facts import visible_facts

        return [f.shown for f in visible_facts(self.facts, as_of)]

    def relation_list(self) -> list[Relation]:
        return [Relation(self.name, t, to) for t, to in self.relations]

    def to_json(self, as_of: int | None = None) -> dict[str, Any]:
        return {"name": self.name, "entityType": self.entity_type, "observations": self.observations(as_of)}

    def copy(self) -> Entity:
        return replace(self, facts=list(self.facts), relations=list(self.relations))


@dataclass(frozen=True, slots=True)
class Invalid:
    path: str
    problem: str


def text_hash(text: str) -> str:
    return sha256_bytes(text.encode("utf-8"))[:10]


# -- file names ----------------------------------------------------------------------


def safe_stem(name: str) -> str:
    """The file stem of entity ``name``: the name itself when it is a plain file name, else a
    readable spelling plus a hash of the exact name (the name stays exact in ``entity:``)."""
    plain = (
        name == name.strip()
        and name
        and not name.startswith(".")
        and not (_UNSAFE_STEM & set(name))
        and all(unicodedata.category(c)[0] != "C" for c in name)
        and len(name.encode("utf-8")) <= STEM_BYTES
    )
    if plain:
        return name
    cleaned = "".join(" " if c in _UNSAFE_STEM or unicodedata.category(c)[0] == "C" else c for c in name)
    cleaned = " ".join(cleaned.split()).strip(". ")
    while len(cleaned.encode("utf-8")) > STEM_BYTES - 12:
        cleaned = cleaned[:-1]
    return f"{cleaned or 'entity'} {text_hash(name)[:8]}".strip()


def link_safe(name: str) -> bool:
    """Whether a wikilink (or its display text) can hold ``name`` exactly."""
    return bool(name) and name == name.strip() and not (_LINK_UNSAFE & set(name)) and "\n" not in name


def link_target(name: str) -> str:
    """How a relation bullet links to ``name`` when no note says better: the name when a wikilink
    can hold it exactly, else the stem a note of that name would get."""
    return name if link_safe(name) else safe_stem(name)


# -- parse ---------------------------------------------------------------------------


def parse_note(rel: str, text: str) -> Entity | Invalid:
    """The entity a note holds, taking the note as it is (a hand-added bullet is an observation)."""
    written = Written.read(text)
    bom, crlf = (written[1].bom, written[1].crlf) if written is not None else (False, False)
    lf = written[0] if written is not None else text.removeprefix("\ufeff").replace("\r\n", "\n")
    split, whole = _split(lf)
    if split.state == "malformed":
        return Invalid(rel, f"frontmatter does not parse: {split.error}")
    data = split.data if split.state == "present" else {}
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    name = data.get("entity", stem)
    if not isinstance(name, str):  # "" is a name: the reference server accepts it, and so does import
        return Invalid(rel, "frontmatter 'entity' is not a name")
    status = (as_text(data.get("status")) or "active").strip()
    body = split.body
    sections, preamble, others, block = _sections(body)
    machine = _machine(block)
    facts = _facts(sections.get(OBSERVATIONS, []), sections.get(SUPERSEDED, []), machine)
    links: dict[str, str] = {}
    relations = _relations(sections.get(RELATED, []), machine, links)
    return Entity(
        name=name,
        entity_type=as_text(data.get("entity_type")) or "",
        status=status if status in STATUSES else "active",
        scope=(as_text(data.get("scope")) or "general").strip().lower(),
        projects=tuple(p.strip().lower() for p in as_list(data.get("projects")) if p.strip()),
        platforms=tuple(p.strip().lower() for p in as_list(data.get("platforms")) if p.strip()),
        facts=facts,
        relations=relations,
        path=rel,
        fm_text=split.fm_text if split.state == "present" else "",
        fm_data=data,
        fm_whole=whole,  # only the graph's keys were read: the rest if a render asks (frontmatter_data)
        preamble=preamble,
        others=others,
        loose={h: t for h in OWNED if (t := _loose(sections.get(h, [])))},
        links=links,
        crlf=crlf,
        bom=bom,
    )


OWNED_KEYS = frozenset({"entity", "entity_type", "status", "scope", "projects", "platforms"})


def _split(text: str) -> tuple[Split, bool]:
    """The note split, and whether ``data`` is the whole mapping: an importer's block holds values
    the simple reader does not take (``imported_at`` is a YAML timestamp), which sent every
    imported entity note through ruamel (85% of a note's parse, issue 28, a server's first call);
    the graph reads only its own keys fast (``notes.frontmatter.read_keys``) and a render that
    needs another key reads the whole mapping then (``frontmatter_data``; tests/graph/test_note.py)."""
    return read_keys(text, OWNED_KEYS)


def _sections(body: str) -> tuple[dict[str, list[str]], str, str, str]:
    """(owned section → its lines, preamble, other sections verbatim, machine block text)."""
    block = ""
    at = body.rfind(_BLOCK_START)
    if at >= 0:
        end = body.find(_BLOCK_END, at + len(_BLOCK_START))
        if end >= 0:
            block = body[at : end + len(_BLOCK_END)]
            body = body[:at] + body[end + len(_BLOCK_END) :]
    owned: dict[str, list[str]] = {}
    pre: list[str] = []
    other: list[str] = []
    current: list[str] | None = None
    titled = False
    for line in body.split("\n"):
        if line.startswith("## "):
            head = line.rstrip()
            current = owned.setdefault(head, []) if head in OWNED else other
            if current is other:
                other.append(line)
            continue
        if current is None:
            if not titled and line.startswith("# "):
                titled = True
                continue
            pre.append(line)
        else:
            current.append(line)
    return owned, "\n".join(pre).strip("\n"), "\n".join(other).strip("\n"), block


def _bullets(lines: list[str]) -> list[str]:
    """List items, continuation lines (two spaces in) joined with a newline."""
    out: list[str] = []
    for line in lines:
        if line.startswith(("- ", "* ")) or line in ("-", "*"):
            out.append(line[2:])
        elif line.startswith("  ") and out:
            out[-1] += "\n" + line[2:]
    return out


def _loose(lines: list[str]) -> str:
    """The lines of a section that are not list items, their continuations or our placeholders."""
    out: list[str] = []
    in_item = False
    for line in lines:
        if line.startswith(("- ", "* ")) or line in ("-", "*"):
            in_item = True
        elif line.startswith("  ") and in_item:
            continue
        elif line.strip() in ("", NO_OBSERVATIONS, NO_RELATIONS):
            in_item = in_item and not line.strip()
            if out and out[-1] and not line.strip():
                out.append("")
        else:
            in_item = False
            out.append(line)
    return "\n".join(out).strip("\n")


def _keyed(item: str) -> tuple[str | None, str]:
    if item.startswith("\\"):
        return None, item[1:]  # an escaped text that begins with "[" or "\"
    if item.startswith("["):
        close = item.find("] ")
        if close > 1 and KEY.fullmatch(item[1:close]):
            return item[1:close], item[close + 2 :]
        if item.endswith("]") and KEY.fullmatch(item[1:-1]):
            return item[1:-1], ""
    return None, item


def _machine(block: str) -> dict[str, Any]:
    """The machine block's lines: facts as (from, to, key, hash), relations' exact targets."""
    facts: list[tuple[int | None, int | None, str | None, str]] = []
    targets: list[tuple[str, str, str]] = []
    for line in block.split("\n")[1:]:
        parts = line.strip().split(" ")
        if parts[0] == "fact" and len(parts) == 5:
            start, end = parse_instant(parts[1]), parse_instant(parts[2])
            facts.append((start, end, None if parts[3] == "-" else parts[3], parts[4]))
        elif parts[0] == "rel" and len(parts) >= 2:
            try:
                pair = json.loads(line.strip()[4:])
            except ValueError:
                continue
            if isinstance(pair, list) and len(pair) == 3 and all(isinstance(x, str) for x in pair):
                targets.append((pair[0], pair[1], pair[2]))
    return {"facts": facts, "targets": targets}


def _instants(
    machine: dict[str, Any], key: str | None, text: str, live: bool
) -> tuple[int | None, int | None] | None:
    h = text_hash(text)
    for i, (start, end, k, hh) in enumerate(machine["facts"]):
        if k == key and hh == h and (end is None) == live:
            del machine["facts"][i]
            return start, end
    return None


def _facts(live: list[str], closed: list[str], machine: dict[str, Any]) -> list[Fact]:
    out: list[Fact] = []
    for item in _bullets(live):
        if item.strip() == NO_OBSERVATIONS:
            continue
        key, text = _keyed(item)
        found = _instants(machine, key, text, True)
        out.append(Fact(text, key, found[0] if found else None, None))
    for item in _bullets(closed):
        m = _SUPERSEDED.fullmatch(item)
        key, text = _keyed(m.group(1) if m else item)
        found = _instants(machine, key, text, False)
        if found is not None and found[1] is not None:
            out.append(Fact(text, key, found[0], found[1]))
            continue
        start = parse_day(m.group(2)) if m else None
        end = parse_day(m.group(3)) if m else None
        out.append(Fact(text, key, start, end if end is not None else 0))
    return out


def _relations(lines: list[str], machine: dict[str, Any], links: dict[str, str]) -> list[tuple[str, str]]:
    exact: dict[tuple[str, str], tuple[str, str]] = {}
    for rtype, target, link in machine["targets"]:
        exact.setdefault((shown_type(rtype), link), (rtype, target))
    out: list[tuple[str, str]] = []
    for item in _bullets(lines):
        m = _RELATION.fullmatch(item)
        if m is None:
            continue
        rtype = m.group(1) or m.group(2)
        target = m.group(3).split("|", 1)[0]
        pair = exact.get((rtype, target), (rtype, target))
        links.setdefault(pair[1], target)
        if pair not in out:
            out.append(pair)
    return out


# -- render --------------------------------------------------------------------------


def _bullet(prefix: str, text: str) -> str:
    parts = text.split("\n")
    first = "- " + prefix + parts[0] if prefix + parts[0] else "-"
    return "\n".join([first] + ["  " + p for p in parts[1:]])


def _fact_line(f: Fact) -> str:
    if f.key is not None:
        prefix = f"[{f.key}] "
    elif f.text.startswith(("[", "\\")) or f.text.strip() == NO_OBSERVATIONS:
        # A text that begins like a key stays unkeyed; one that reads like the empty section's
        # placeholder stays a fact (it was skipped when read back: tests/graph/test_note.py).
        prefix = "\\"
    else:
        prefix = ""
    if f.live:
        return _bullet(prefix, f.text)
    start = day(f.valid_from) if f.valid_from is not None else "?"
    end = day(f.valid_to) if f.valid_to else "?"
    return _bullet(prefix, f"{f.text} (valid {start} → {end})")


def shown_type(rtype: str) -> str:
    """The relation type as a bullet can carry it (one line, no quote, no brackets)."""
    shown = " ".join(rtype.replace('"', "'").replace("[", "(").replace("]", ")").split())
    return shown or "links_to"


def relation_label(rtype: str) -> str:
    """The type before the link, quoted when it holds a space or starts or ends with a quote, so
    basic-memory's grammar reads back exactly ``shown_type`` (tests/hardening/test_mcp_relations.py)."""
    shown = shown_type(rtype)
    return f'"{shown}"' if " " in shown or shown[0] == "'" or shown[-1] == "'" else shown


Links = Callable[[str], str]


def render_note(
    e: Entity, links: Links = link_target, extra: Sequence[tuple[str, str | list[str]]] = ()
) -> str:
    """The note for ``e``: owned frontmatter keys updated, every other key and section kept.

    ``links``: the file stem of the note a relation's target names (a renamed or collided
    stem, so that Obsidian's link resolves); ``extra``: keys an importer adds (provenance)."""
    nl = "\n"
    data = frontmatter_data(e, OWNED_KEYS | {k for k, _ in extra})  # the keys render_block looks at
    updates: list[tuple[str, str | list[str]]] = [
        ("entity", e.name),
        ("entity_type", e.entity_type),
        ("status", e.status),
        ("scope", e.scope),
    ]
    if e.projects or "projects" in data:
        updates.append(("projects", list(e.projects)))
    if e.platforms or "platforms" in data:
        updates.append(("platforms", list(e.platforms)))
    owned = {k for k, _ in updates}
    updates += [(k, v) for k, v in extra if k not in owned]  # an extra key never overrides an owned one
    head = render_block(e.fm_text, data, updates, nl)
    live = [f for f in e.facts if f.live]
    closed = [f for f in e.facts if not f.live]
    out = [f"# {' '.join(e.name.split()) or 'entity'}", ""]
    if e.preamble:
        out += [e.preamble, ""]
    out += [OBSERVATIONS, ""]
    out += [_fact_line(f) for f in live] or [NO_OBSERVATIONS]
    out += _kept(e, OBSERVATIONS)
    if closed or SUPERSEDED in e.loose:
        out += [SUPERSEDED, ""] + [_fact_line(f) for f in closed] + _kept(e, SUPERSEDED)
    out += [RELATED, ""]
    out += [f"- {relation_label(t)} {_link(links(to), to)}" for t, to in e.relations] or [NO_RELATIONS]
    out += _kept(e, RELATED)
    if e.others:
        out += [e.others, ""]
    out += _block(e, links)
    return Written(e.bom, e.crlf).write(head + nl.join(out) + nl)


def frontmatter_data(e: Entity, keys: frozenset[str] | set[str] = OWNED_KEYS) -> dict[str, Any]:
    """The mapping of ``e``'s frontmatter, at least its ``keys``: as parsed, or (an entity from the
    on-disk index, which keeps the text only: graph.cache; or one whose parse read only the
    graph's keys) read again from ``fm_text``, by the fast read when ``keys`` are the graph's (a
    tool's write of an imported note: no ruamel, issue 28) or else by the one splitter."""
    if e.fm_data is not None and (e.fm_whole or keys <= OWNED_KEYS):
        return e.fm_data
    text = f"---\n{e.fm_text}---\n"
    split = _split(text)[0] if keys <= OWNED_KEYS else split_frontmatter(text)
    return split.data if split.state == "present" else {}


def _link(stem: str, name: str) -> str:
    if stem == name:
        return f"[[{name}]]"
    return f"[[{stem}|{name}]]" if link_safe(name) else f"[[{stem}]]"  # the exact name is in the block


def _kept(e: Entity, head: str) -> list[str]:
    text = e.loose.get(head)
    return ["", text, ""] if text else [""]


def _block(e: Entity, links: Links) -> list[str]:
    lines: list[str] = []
    for f in [f for f in e.facts if f.live] + [f for f in e.facts if not f.live]:
        if f.valid_from is None and f.valid_to is None:
            continue  # a hand-added fact: no instant to keep
        start = iso(f.valid_from) if f.valid_from is not None else "-"
        end = iso(f.valid_to) if f.valid_to is not None else "-"
        lines.append(f"fact {start} {end} {f.key or '-'} {text_hash(f.text)}")
    for t, to in e.relations:
        link = links(to)
        if link != to or shown_type(t) != t:
            # ">" escaped: a name holding "-->" must not close the comment
            lines.append("rel " + json.dumps([t, to, link], ensure_ascii=False).replace(">", "\\u003e"))
    if not lines:
        return []
    return [BLOCK_OPEN.removesuffix(" -->"), *lines, _BLOCK_END]
