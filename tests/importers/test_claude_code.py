# ruff: noqa: E501
"""Claude Code auto-memory: both frontmatter generations, MEMORY.md checks, source layouts."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.errors import ShardpyError
from shardpy.notes.frontmatter import as_text, split_frontmatter
from tests.importers.fixtures import claude_projects, write
from tests.importers.helpers import do_import, rows

P = "-home-dana-src-route-planner"
INTO = f"memories/claude-code-memory/{P}"


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    return claude_projects(tmp_path / "projects")


def test_plan(projects: Path, vault: Path) -> None:
    plan = do_import("claude-code-memory", projects, vault).plan
    r = rows(plan)
    assert r[f"{P}/memory/feedback_testing.md"].type == "feedback"  # generation A: top-level type
    assert r[f"{P}/memory/user_role.md"].type == "user"  # generation B: metadata.type
    assert r[f"{P}/memory/both_types.md"].type == "reference"  # metadata.type wins
    assert r[f"{P}/memory/odd_type.md"].type == "gossip"
    assert any("unknown memory type" in w for w in r[f"{P}/memory/odd_type.md"].warnings)
    assert r[f"{P}/memory/debugging.md"].type is None and r[f"{P}/memory/debugging.md"].name == "debugging"
    assert r[f"{P}/memory/no_name.md"].name == "no_name"
    # Invalid YAML (unquoted ': ') is imported; the name is still read line by line.
    deadline = r[f"{P}/memory/project_deadline.md"]
    assert deadline.action == "create" and deadline.name == "project-deadline" and deadline.warnings
    assert r[f"{P}/memory/crlf_bom.md"].name == "windows-fact"
    assert r[f"{P}/memory/team/team_rule.md"].vault_path == f"{INTO}/team/team-rule.md"
    assert r[f"{P}/memory/user_role.md"].vault_path == f"{INTO}/user-role.md"
    other = "C--Users-dana-source-repos-Inventory-Service"
    assert r[f"{other}/memory/user_role.md"].vault_path == f"memories/claude-code-memory/{other}/user-role.md"
    skipped = {s.source_path: s.reason for s in plan.skipped}
    assert skipped[f"{P}/memory/MEMORY.md"].startswith("index file")
    assert skipped[f"{P}/memory/team/MEMORY.md"].startswith("index file")
    assert skipped[f"{P}/memory/empty.md"] == "empty file"
    assert not any("jsonl" in s for s in skipped)  # transcripts are never even looked at
    notices = {(n.source_path, n.message) for n in plan.notices}
    assert (f"{P}/memory/MEMORY.md", "line 5 points to a missing file: deleted-note.md") in notices
    assert (f"{P}/memory/debugging.md", "not listed in any MEMORY.md") in notices
    assert (f"{P}/memory/team/team_rule.md", "not listed in any MEMORY.md") not in notices
    assert (f"{P}/memory/user_role.md", "not listed in any MEMORY.md") not in notices
    links = {(lr.source_path, lr.text): lr for lr in plan.links}
    # [[user-role]] exists in two projects: the link's own project wins.
    ur = links[(f"{P}/memory/feedback_testing.md", "[[user-role]]")]
    assert ur.status == "resolved" and ur.target == f"{INTO}/user-role.md"
    assert links[(f"{P}/memory/user_role.md", "[[missing-memory]]")].status == "unresolved"


def test_written_facts(projects: Path, vault: Path) -> None:
    do_import("claude-code-memory", projects, vault, apply=True)
    text = (vault / INTO / "user-role.md").read_text("utf-8")
    data = split_frontmatter(text).data
    assert data["name"] == "user-role" and data["description"] == "Dana is a backend engineer"
    assert data["type"] == "user" and data["session_id"] == "885ee114-3071-4b9e-9b32-e55329684a43"
    assert as_text(data["modified"]) == "2026-09-08T19:29:56.864Z"
    assert data["project"] == P and data["imported_from"] == "claude-code-memory"
    assert data["metadata"]["node_type"] == "memory"  # every source key kept
    assert text.endswith(
        "Dana prefers Go. Links to [[feedback-testing]] and [[missing-memory]].\n\n```\n---\nnot frontmatter\n```\n"
    )
    both = split_frontmatter((vault / INTO / "both-types.md").read_text("utf-8")).data
    assert both["type"] == "reference" and both["top_level_type"] == "user"
    deadline = (vault / INTO / "project-deadline.md").read_text("utf-8")
    assert split_frontmatter(deadline).data["description"] == "Launch: end of Q3"
    assert deadline.endswith((projects / P / "memory/project_deadline.md").read_text("utf-8"))
    crlf = (vault / INTO / "windows-fact.md").read_bytes()
    assert crlf.endswith(b"---\r\nCRLF body.\r\n") and not crlf.startswith(b"\xef\xbb\xbf")


@pytest.mark.parametrize("level", ["projects", "project", "memory"])
def test_source_layouts(level: str, projects: Path, vault: Path) -> None:
    source = {"projects": projects, "project": projects / P, "memory": projects / P / "memory"}[level]
    plan = do_import("claude-code-memory", source, vault).plan
    paths = {r.source_path for r in plan.notes}
    assert f"{P}/memory/user_role.md" in paths
    assert len(paths) == (10 if level == "projects" else 9)


def test_layout_errors(tmp_path: Path, vault: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    write(empty / "notes.txt", "x")
    with pytest.raises(ShardpyError) as e:
        do_import("claude-code-memory", empty, vault)
    assert e.value.code == "IMPORT_SOURCE_LAYOUT"
