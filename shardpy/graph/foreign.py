"""Notes imported from basic-memory, read as entities (never rewritten: their source owns them).

basic-memory's own grammar (``importers.bm_grammar``, its one reader) finds the observations
(``- [category] text #tag (context)``) and relations (``- type [[Target]]``, inline links as
``links_to``). A category that is a fact key becomes the fact's key (seed 003); any other is
kept in the text. The entity's name is the note's ``title`` (else its file stem).
"""

from __future__ import annotations

from shardpy.graph.facts import KEY, Fact
from shardpy.graph.note import Entity, Invalid
from shardpy.notes.frontmatter import as_list, as_text, split_frontmatter


def parse_foreign(rel: str, text: str) -> Entity | Invalid:
    from shardpy.importers.bm_grammar import parse_body

    split = split_frontmatter(text.removeprefix("\ufeff").replace("\r\n", "\n"))
    if split.state == "malformed":
        return Invalid(rel, f"frontmatter does not parse: {split.error}")
    data = split.data if split.state == "present" else {}
    stem = rel.rsplit("/", 1)[-1].removesuffix(".md")
    observations, relations = parse_body(split.body)
    facts: list[Fact] = []
    for o in observations:
        content = f"{o.content} ({o.context})" if o.context else o.content
        if o.category is not None and KEY.fullmatch(o.category):
            facts.append(Fact(content, o.category))
        else:
            facts.append(Fact(f"[{o.category}] {content}" if o.category else content))
    pairs = list(dict.fromkeys((r.type, r.target.split("|", 1)[0].split("#", 1)[0]) for r in relations))
    return Entity(
        name=as_text(data.get("title")) or stem,
        entity_type=as_text(data.get("type")) or "note",
        scope=(as_text(data.get("scope")) or "general").strip().lower(),
        projects=tuple(p.strip().lower() for p in as_list(data.get("projects")) if p.strip()),
        platforms=tuple(p.strip().lower() for p in as_list(data.get("platforms")) if p.strip()),
        facts=facts,
        relations=pairs,
        path=rel,
        foreign=True,
    )
