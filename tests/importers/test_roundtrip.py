"""A basic-memory project imported, then read back, has the same observations and relations per note."""

from __future__ import annotations

from pathlib import Path

from shardpy.importers.bm_grammar import Observation, Relation, parse_body
from shardpy.importers.walk import read_text
from shardpy.notes.frontmatter import split_frontmatter
from tests.importers.fixtures import generated_project
from tests.importers.helpers import do_import


def _semantics(text: str) -> tuple[list[Observation], list[Relation]]:
    split = split_frontmatter(text)
    return parse_body(split.body if split.state == "present" else text)


def _check_round_trip(source: Path, vault: Path) -> int:
    out = do_import("basic-memory", source, vault, apply=True)
    rewrites: dict[str, list[tuple[str, str]]] = {}
    for lr in out.plan.links:
        if lr.rewritten is not None:
            rewrites.setdefault(lr.source_path, []).append((lr.rewritten, lr.text))
    checked = 0
    for row in out.plan.notes:
        if row.action != "create" or row.kind != "note":
            continue
        _, src_text, _ = read_text(source / row.source_path)
        assert src_text is not None
        imported = (vault / row.vault_path).read_bytes().decode("utf-8")
        # Undo the link rewrites the plan reports, then compare what basic-memory would read.
        for new, old in rewrites.get(row.source_path, []):
            imported = imported.replace(new, old)
        src_obs, src_rels = _semantics(src_text)
        new_obs, new_rels = _semantics(imported)
        assert new_obs == src_obs, row.source_path
        assert new_rels == src_rels, row.source_path
        assert len(new_obs) == row.observations
        checked += 1
    return checked


def test_round_trip_fixture_project(bm_project: Path, vault: Path) -> None:
    assert _check_round_trip(bm_project, vault) == 13


def test_round_trip_generated_project(tmp_path: Path, vault: Path) -> None:
    src = generated_project(tmp_path / "gen", 120)
    assert _check_round_trip(src, vault) == 120


def test_mcp_relations_read_back_by_basic_memory_rules(tmp_path: Path, vault: Path) -> None:
    from tests.importers.fixtures import MCP_RECORDS, mcp_lines

    src = tmp_path / "memory.jsonl"
    src.write_bytes(mcp_lines(MCP_RECORDS))
    out = do_import("mcp-memory", src, vault, apply=True)
    dana = next(r for r in out.plan.notes if r.name == "Dana")
    _, rels = _semantics((vault / dana.vault_path).read_text("utf-8"))
    assert [(r.type, r.target.split("|")[-1]) for r in rels] == [
        ("works_at", "Acme Corp"),
        ("is a fan of", "Berlin"),
        ("leads", "Project: Apollo/v2"),
        ("knows", "Nobody"),
    ]
