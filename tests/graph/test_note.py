"""The entity note: parse and render round trips, and the note taken as the user left it."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.graph import ops
from shardpy.graph.commit import change
from shardpy.graph.facts import Fact
from shardpy.graph.note import Entity, Invalid, parse_note, render_note, safe_stem
from shardpy.graph.store import GraphStore
from tests.graph.kit import graph_manifest

ODD = ["a|b#c", "x]]y", "tab\there", "Slash/Name", " spaced ", "-->", "名前", ".dot", "[[wiki]]"]


def _roundtrip(e: Entity) -> Entity:
    got = parse_note("memories/graph/x.md", render_note(e))
    assert isinstance(got, Entity), got
    return got


def test_render_parse_keeps_every_fact_and_relation() -> None:
    facts = [
        Fact("plain", None, 1000, None),
        Fact("[not a key] text", None, 2000, None),
        Fact("\\starts with a backslash", None, 2000, None),
        Fact("two\nlines\n\nand a blank", None, 3000, None),
        Fact("", None, 3000, None),
        Fact("current", "role.now", 5000, None),
        Fact("older", "role.now", 1000, 5000),
        Fact("ends (valid 2020-01-01 → 2020-01-02)", "k", 1000, 4000),
    ]
    relations = [(t, to) for t in ("works_at", "is part of", '"quoted"', "a]]b") for to in ODD]
    e = Entity("Name | odd", "type with spaces", facts=facts, relations=relations)
    back = _roundtrip(e)
    assert back.name == e.name and back.entity_type == e.entity_type
    assert back.facts == e.facts
    assert back.relations == e.relations
    assert render_note(back) == render_note(e)


def test_a_fact_that_reads_like_the_empty_sections_placeholder_is_kept() -> None:
    """create_entities acknowledged the observation "_No observations._" and open_nodes then lost
    it: read back, it was taken for the placeholder of an empty section."""
    facts = [Fact("_No observations._", None, 1000, None), Fact("real fact", None, 1000, None)]
    back = _roundtrip(Entity("Checklist", "doc", facts=facts))
    assert back.facts == facts


def test_retiring_a_keyed_fact_as_of_today_is_as_of_now() -> None:
    """A day means the end of that day, still to come today: "retire as of today", as the error's
    own hint says to do, was always refused (GRAPH_BAD_AS_OF)."""
    from shardpy.graph.facts import DAY_MS, parse_as_of

    now = parse_as_of("2026-12-04T21:18:12Z")
    e = Entity("Priya", "person", facts=[Fact("on the platform team", "team", now - DAY_MS, None)])
    assert ops._keyed(e, "team", [], parse_as_of("2026-12-04"), now) == []
    assert e.facts[0].valid_to == now
    tomorrow = Entity("Priya", "person", facts=[Fact("on the platform team", "team", now - DAY_MS, None)])
    with pytest.raises(ShardpyError, match="valid_to must lie"):
        ops._keyed(tomorrow, "team", [], parse_as_of("2026-12-05"), now)


def test_a_note_saved_with_a_bom_and_crlf_keeps_them_when_rewritten() -> None:
    """A graph note re-saved by a Windows editor came back LF in every line, its BOM dropped, at
    the next graph write (a helper's probe: add_observations on it)."""
    e = Entity("Priya", "person", facts=[Fact("likes tea", None, 1000, None)])
    saved = "\ufeff" + render_note(e).replace("\n", "\r\n")
    back = parse_note("memories/graph/Priya.md", saved)
    assert isinstance(back, Entity)
    back.facts.append(Fact("drinks coffee", None, 2000, None))
    again = render_note(back)
    assert again.startswith("\ufeff---\r\n") and again.count("\n") == again.count("\r\n")
    assert "- drinks coffee\r\n" in again


def test_safe_stems_stay_in_one_folder() -> None:
    for name in [*ODD, "../../etc/passwd", "a" * 200, "é" * 150, "CON", "\x00"]:
        stem = safe_stem(name)
        assert "/" not in stem and "\\" not in stem and not stem.startswith(".")
        assert len(stem.encode("utf-8")) <= 180


def test_hand_edits_are_read_and_kept(tmp_path: Path) -> None:
    graph_manifest(tmp_path / "vault")
    store = GraphStore((tmp_path / "vault").resolve(), "memories")
    change(store, "t", lambda e: True, lambda w: ops.create_entities(
        w, [{"name": "Ada", "entityType": "person", "observations": ["wrote notes"]}], ops.Reach("general"), 1
    ))  # fmt: skip
    note = store.folder / "Ada.md"
    text = note.read_text(encoding="utf-8")
    text = text.replace(
        "status: active\n", "status: active\nmine: kept verbatim  # a comment\ntags: [x, y]\n"
    )
    text = text.replace("- wrote notes\n", "- wrote notes\n- added by hand in Obsidian\n")
    text = text.replace("## Related\n", "Some prose of mine.\n\n## Related\n")
    text = text.replace("<!--", "## My section\n\nKeep me.\n\n<!--")
    note.write_text(text, encoding="utf-8")
    e = store.snapshot(full=True).entities["Ada"]
    assert e.observations() == ["wrote notes", "added by hand in Obsidian"]
    item = {"entityName": "Ada", "contents": ["a new fact"], "key": None, "valid_to": None}
    change(store, "t", lambda e: True, lambda w: ops.add_observations(w, [item], 2))
    after = note.read_text(encoding="utf-8")
    assert "mine: kept verbatim  # a comment\ntags: [x, y]\n" in after
    assert "- added by hand in Obsidian\n- a new fact\n" in after
    assert "Some prose of mine." in after and "## My section\n\nKeep me.\n" in after


def test_a_note_that_no_longer_parses_is_reported_and_left_alone(tmp_path: Path) -> None:
    graph_manifest(tmp_path / "vault")
    store = GraphStore((tmp_path / "vault").resolve(), "memories")
    store.folder.mkdir(parents=True)
    broken = store.folder / "Broken.md"
    broken.write_text("---\nentity: [unclosed\n---\n# Broken\n", encoding="utf-8")
    snap = store.snapshot(full=True)
    assert [i.path for i in snap.invalid] == ["memories/graph/Broken.md"]
    assert isinstance(parse_note("x.md", broken.read_text()), Invalid)
    made = change(store, "t", lambda e: True, lambda w: ops.create_entities(
        w, [{"name": "Broken", "entityType": "t", "observations": []}], ops.Reach("general"), 1
    ))  # fmt: skip
    assert made == [{"name": "Broken", "entityType": "t", "observations": []}]
    assert broken.read_text(encoding="utf-8") == "---\nentity: [unclosed\n---\n# Broken\n"
    assert len(list(store.folder.glob("Broken*.md"))) == 2  # the new entity got a stem of its own


IMPORTED = (
    "---\nentity: Entity 00042\nentity_type: t9\nstatus: active\nscope: project\nprojects:\n- atlas\n"
    'imported_from: mcp-memory\nsource_path: "memory.jsonl#entity=Entity 00042"\n'
    'imported_at: 2026-12-04T03:34:32.670Z\nsource_hash: "sha256:5a51"\n---\n# Entity 00042\n\n'
    "## Observations\n\n- w0121 w0537\n- [role] role 8\n\n## Related\n\n- works_with [[Entity 02548]]\n"
)


def test_an_imported_entity_note_is_read_without_the_yaml_loader(monkeypatch: pytest.MonkeyPatch) -> None:
    """issue 28, "Speed": the importer's block (imported_at is a YAML timestamp) took ruamel, 85% of
    a note's parse and 50 s of a server's first call at 20,000 entities; the graph's keys are now
    read from their own lines, and a tool's write renders the note from them (it keeps the rest of
    the block as text)."""
    import shardpy.notes.frontmatter as fm

    def refused(text: str) -> object:
        raise AssertionError("the YAML loader was asked")

    monkeypatch.setattr(fm, "load_yaml", refused)
    e = parse_note("memories/graph/Entity 00042.md", IMPORTED)
    assert isinstance(e, Entity), e
    assert (e.name, e.entity_type, e.status, e.scope, e.projects) == (
        "Entity 00042",
        "t9",
        "active",
        "project",
        ("atlas",),
    )
    assert [f.shown for f in e.facts] == ["w0121 w0537", "[role] role 8"]
    assert e.relations == [("works_with", "Entity 02548")]
    # a write keeps every key it does not own, exactly as the importer wrote it
    e.facts.append(Fact("new", None, 1000, None))
    rendered = render_note(e)  # a tool's write: still no YAML loader
    monkeypatch.undo()
    assert rendered.split("---\n")[1] == IMPORTED.split("---\n")[1]
    again = parse_note("memories/graph/Entity 00042.md", rendered)
    assert isinstance(again, Entity) and [f.text for f in again.facts][-1] == "new"


@pytest.mark.parametrize(
    "block",
    [
        "entity: 12\nimported_at: 2026-12-04T03:34:32Z\n",  # a number: YAML decides
        'entity: "Quo\\"ted"\nimported_at: 2026-12-04T03:34:32Z\n',
        "entity: A\nentity_type: person\nprojects: [atlas, beta]\nwhen: 2026-01-02\n",
        "entity: A\nprojects:\n  - atlas\n  - beta\nimported_at: 2026-12-04T03:34:32Z\n",
        "imported_at: 2026-12-04T03:34:32Z\nnote: plain\n",  # no key of the graph's
        "entity: A\nnested:\n  key: value\n",  # not simple: the splitter
        "entity: A # comment\nimported_at: 2026-12-04T03:34:32Z\n",
    ],
)
def test_the_fast_read_agrees_with_the_splitter(block: str) -> None:
    text = f"---\n{block}---\n# A\n\n## Observations\n\n- one\n"
    fast = parse_note("memories/graph/A.md", text)
    whole = _parse_whole(text)
    if isinstance(whole, Invalid):
        assert fast == whole
        return
    assert isinstance(fast, Entity), fast
    assert replace(fast, fm_data=None, fm_whole=True) == replace(whole, fm_data=None)
    assert render_note(fast) == render_note(whole)
    extra = [("imported_at", "2026-12-05T00:00:00Z"), ("note", "other")]  # an importer's keys
    assert render_note(fast, extra=extra) == render_note(whole, extra=extra)


def _parse_whole(text: str) -> Entity | Invalid:
    """The note parsed with the splitter's whole mapping (the fast read switched off)."""
    import shardpy.graph.note as note
    from shardpy.notes.frontmatter import Split, split_frontmatter

    def whole(text: str) -> tuple[Split, bool]:
        return split_frontmatter(text), True

    real = note._split
    note._split = whole
    try:
        return parse_note("memories/graph/A.md", text)
    finally:
        note._split = real
