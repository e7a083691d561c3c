"""Issue 26, item 16: every relation of a graph the MCP memory server wrote
appears in the imported notes, with its type as basic-memory's grammar reads it
back and a link to the note of exactly the entity it names; and (issue 28) the
memory graph reads each back with its exact type and target.

Found on a graph written by the real server: a type that starts and ends with a
quote (`"q"`) came back without its quotes; a type holding `[[` was no relation
at all; a relation to ``' Alice'`` or ``Alice.md`` linked to ``Alice``; a
relation starting at a name with no entity line was dropped.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from shardpy.graph.note import Entity, parse_note, relation_label, shown_type
from shardpy.importers.bm_grammar import parse_explicit_relation
from shardpy.yamlsafe import load as yaml_load
from tests.oracle import memory_server_session
from tests.shardkit import run_shardpy

NAMES = [
    "Alice",
    " Alice",
    "Alice.md",
    "C++",
    "a/b",
    "a-b",
    "Ünïcode Straße",
    "name [[brackets]]",
    "x|y",
    "#tag",
    ".hidden",
    "CON",
    "trailing ",
    "dup",
    "Dup",
    "emoji 🙂",
    "colon: yes",
    'quote "q"',
    "../up",
]
TYPES = [
    "works at",
    "is-a",
    '"q"',
    "'single'",
    "pipe | type",
    "emoji 🙂",
    "Works At",
    "]]",
    "[[x]]",
    "#t",
    "",
    "a  b",
    "(paren)",
]


@given(st.text(max_size=40))
def test_every_type_reads_back_as_written(rtype: str) -> None:
    parsed = parse_explicit_relation(f"{relation_label(rtype)} [[Target]]")
    assert parsed is not None and parsed.type == shown_type(rtype) and parsed.target == "Target"
    if rtype and rtype == " ".join(rtype.split()) and not set('[]"') & set(rtype):
        assert shown_type(rtype) == rtype  # only what a bullet cannot hold is changed (the block keeps it)


def _relations() -> list[dict[str, str]]:
    rels = [
        {"from": n, "to": NAMES[(i + 1) % len(NAMES)], "relationType": TYPES[i % len(TYPES)]}
        for i, n in enumerate(NAMES)
    ]
    rels += [
        {"from": "Alice", "to": "Alice", "relationType": "self"},
        {"from": "Alice", "to": " Alice", "relationType": "knows"},
        {"from": "Alice", "to": "Alice.md", "relationType": "uses"},
    ]
    return rels


async def _write_graph(graph: Path) -> None:
    async with memory_server_session(graph) as session:
        entities = [{"name": n, "entityType": "thing", "observations": [f"about {n}"]} for n in NAMES]
        await session.call_tool("create_entities", {"entities": entities})
        # The server checks no relation's ends: one starting at a name it never defined is kept.
        await session.call_tool(
            "create_relations",
            {"relations": [*_relations(), {"from": "Ghost", "to": "Alice", "relationType": "haunts"}]},
        )


def _notes(vault: Path) -> dict[str, tuple[str, str]]:
    """entity name (title) → (note path without .md, text) of every imported note."""
    out = {}
    for path in sorted((vault / "memories").rglob("*.md")):
        text = path.read_text(encoding="utf-8")
        front = yaml_load(text.split("---\n")[1])
        out[str(front["entity"])] = (path.relative_to(vault).as_posix()[:-3], text)
    return out


def _relations_of(text: str) -> list[tuple[str, str]]:
    section = text.split("## Related\n", 1)[1].split("<!--", 1)[0]
    out = []
    for line in section.splitlines():
        if line.startswith("- "):
            rel = parse_explicit_relation(line[2:])
            assert rel is not None, line
            out.append((rel.type, rel.target.split("|")[0]))
    return out


def test_a_real_servers_graph_keeps_every_relation(tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    asyncio.run(_write_graph(graph))
    source = [json.loads(line) for line in graph.read_text().splitlines()]
    relations = [r for r in source if r["type"] == "relation"]
    assert len(relations) == len(_relations()) + 1  # the server kept every one, the dangling start too
    vault = tmp_path / "vault"
    vault.mkdir()
    proc = run_shardpy("import", "--from", "mcp-memory", graph, vault, "--apply", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    notes = _notes(vault)
    stems = {path.rsplit("/", 1)[-1]: name for name, (path, _text) in notes.items()}
    for rel in relations:
        assert rel["from"] in notes, rel
        written = _relations_of(notes[rel["from"]][1])
        # The link names the note of exactly the target entity (by its file name).
        assert (shown_type(rel["relationType"]), rel["to"]) in [
            (rtype, stems.get(target)) for rtype, target in written
        ], (rel, written)
        # The graph reads the relation back exactly: its type and its target, as the server wrote them.
        entity = parse_note(notes[rel["from"]][0] + ".md", notes[rel["from"]][1])
        assert isinstance(entity, Entity) and (rel["relationType"], rel["to"]) in entity.relations, rel
