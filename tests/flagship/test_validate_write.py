"""validate_write.py: frontmatter by note type, links that resolve, and the
private-memory refusal — with each agent's own tool payloads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.flagship import payloads
from tests.flagship.conftest import run_script
from tests.flagship.shardtools import Layout

SCRIPT = "validate_write.py"

GOOD_WORK_NOTE = """---
date: 2026-11-29
description: Moving payments to the new ledger.
tags: [work]
status: active
quarter: 2026-Q4
---
# Payments Migration

Serves the [[North Star]]; decisions in [[Key Decisions]].
"""

MISSING_QUARTER = GOOD_WORK_NOTE.replace("quarter: 2026-Q4\n", "")
DANGLING = GOOD_WORK_NOTE.replace("[[Key Decisions]]", "[[Ledger Design Doc]]")


def _write(vault: Path, rel: str, text: str) -> None:
    path = vault / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _lines(context: str) -> list[str]:
    return [ln[2:] for ln in context.splitlines() if ln.startswith("- ")]


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_clean_note_passes_silently(agent: str, make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    rel = "work/active/Payments Migration.md"
    _write(v.root, rel, GOOD_WORK_NOTE)
    payload = {
        "claude": lambda: payloads.claude_write(v.root, rel, GOOD_WORK_NOTE),
        "codex": lambda: payloads.codex_patch(
            v.root, f"*** Begin Patch\n*** Add File: {rel}\n+x\n*** End Patch\n"
        ),
        "gemini": lambda: payloads.gemini_write(v.root, rel, GOOD_WORK_NOTE),
    }[agent]()
    r = run_script(v.root, SCRIPT, payload)
    assert r.returncode == 0, r.stderr
    assert r.json() == {}


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_missing_required_key_is_reported(agent: str, make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    rel = "work/active/Payments Migration.md"
    _write(v.root, rel, MISSING_QUARTER)
    payload = {
        "claude": lambda: payloads.claude_write(v.root, rel, MISSING_QUARTER),
        "codex": lambda: payloads.codex_patch(
            v.root, f"*** Begin Patch\n*** Update File: {rel}\n@@\n-q\n*** End Patch"
        ),
        "gemini": lambda: payloads.gemini_write(v.root, rel, MISSING_QUARTER),
    }[agent]()
    out = run_script(v.root, SCRIPT, payload).json()
    expected_event = "AfterTool" if agent == "gemini" else "PostToolUse"
    assert out["hookSpecificOutput"]["hookEventName"] == expected_event
    lines = _lines(out["hookSpecificOutput"]["additionalContext"])
    assert lines == [f"{rel}: frontmatter is missing quarter (required for work-note)"]


def test_dangling_link_is_reported(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    rel = "work/active/Payments Migration.md"
    _write(v.root, rel, DANGLING)
    lines = _lines(run_script(v.root, SCRIPT, payloads.claude_write(v.root, rel, DANGLING)).context())
    assert lines == [
        f"{rel}: links that resolve to no file: [[Ledger Design Doc]] — fix the name or create the note"
    ]


def test_link_forms_that_resolve(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    rel = "reference/Ledger.md"
    text = (
        "---\ndate: 2026-11-29\ndescription: d\ntags: [reference]\n---\n"
        "[[North Star|goals]] [[Key Decisions#Decisions]] [[brain/Patterns]] [[#Local heading]] "
        "[[gotchas]] ![[Work Dashboard.base]] [[Memories.md]] [[Ledger^block-1]]\n"
        "```\n[[Inside A Code Block]]\n```\nand `[[Inline Code]]`\n"
    )
    _write(v.root, rel, text)
    assert run_script(v.root, SCRIPT, payloads.claude_write(v.root, rel, text)).json() == {}


def test_note_type_rules_apply_by_path(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    incident = "work/incidents/2026-11-28 Checkout Outage.md"
    text = (
        "---\ndate: 2026-11-28\ndescription: d\ntags: [incident]\nstatus: resolved\n"
        "quarter: 2026-Q4\n---\n[[Index]]\n"
    )
    _write(v.root, incident, text)
    lines = _lines(run_script(v.root, SCRIPT, payloads.claude_write(v.root, incident, text)).context())
    assert lines == [f"{incident}: frontmatter is missing ticket, severity, role (required for incident)"]
    person = "org/people/Priya Raman.md"
    text = (
        "---\ndate: 2026-11-28\ndescription: d\ntags: [person]\ntitle: Staff Engineer\n"
        "team:\n---\n[[People & Context]]\n"
    )
    _write(v.root, person, text)
    lines = _lines(run_script(v.root, SCRIPT, payloads.claude_write(v.root, person, text)).context())
    assert lines == [f"{person}: frontmatter has empty team; give each a value"]


def test_no_frontmatter_and_no_links(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    rel = "brain/Loose Thought.md"
    _write(v.root, rel, "# Loose thought\nJust text.\n")
    lines = _lines(run_script(v.root, SCRIPT, payloads.claude_edit(v.root, rel, "a", "b")).context())
    assert lines == [
        f"{rel}: no frontmatter; brain-note needs: date, description, tags",
        f"{rel}: links to no other note; every note links to at least one existing note",
    ]


def test_unclosed_frontmatter(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    rel = "reference/Broken.md"
    _write(v.root, rel, "---\ndate: 2026-11-29\n# never closed\n[[Home]]\n")
    lines = _lines(run_script(v.root, SCRIPT, payloads.gemini_write(v.root, rel, "")).context())
    assert lines == [f"{rel}: frontmatter opens with --- but never closes; add the closing --- line"]


def test_infrastructure_and_non_notes_are_not_checked(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    for rel in (
        "CLAUDE.md",
        "templates/Work Note.md",
        ".claude/commands/dump.md",
        "bases/Incidents.base",
        "reference/diagram.png",
    ):
        _write(v.root, rel, "no frontmatter [[Nowhere]]")
        assert run_script(v.root, SCRIPT, payloads.claude_write(v.root, rel, "")).json() == {}, rel


def test_files_outside_the_vault_are_ignored(make_vault: Callable[..., Layout], tmp_path: Path) -> None:
    v = make_vault()
    outside = tmp_path / "elsewhere" / "notes.md"
    _write(outside.parent, outside.name, "no frontmatter")
    assert run_script(v.root, SCRIPT, payloads.claude_write(v.root, str(outside), "")).json() == {}


def test_codex_patch_with_several_files_and_a_move(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    _write(v.root, "work/active/A.md", GOOD_WORK_NOTE)
    _write(v.root, "work/active/B.md", MISSING_QUARTER)
    patch = (
        "*** Begin Patch\n*** Add File: work/active/A.md\n+x\n"
        "*** Update File: work/active/Old.md\n*** Move to: work/active/B.md\n@@\n-a\n+b\n"
        "*** Delete File: work/active/Gone.md\n*** End Patch"
    )
    lines = _lines(run_script(v.root, SCRIPT, payloads.codex_patch(v.root, patch)).context())
    assert lines == ["work/active/B.md: frontmatter is missing quarter (required for work-note)"]


# --- private memory -----------------------------------------------------------------


def _claude_memory(home: Path, name: str) -> str:
    return str(home / ".claude" / "projects" / "-work-vault" / "memory" / name)


def test_claude_memory_file_is_refused_before_the_write(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    home = Path(isolated_env["HOME"])
    target = _claude_memory(home, "payments_gotchas.md")
    r = run_script(v.root, SCRIPT, payloads.claude_write(v.root, target, "the ledger rounds", pre=True))
    assert r.returncode == 2
    assert "private memory store" in r.stderr and "brain/" in r.stderr


def test_memory_pointer_index_is_allowed(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    target = _claude_memory(Path(isolated_env["HOME"]), "MEMORY.md")
    r = run_script(
        v.root, SCRIPT, payloads.claude_write(v.root, target, "- goals → brain/North Star.md", pre=True)
    )
    assert r.returncode == 0 and r.json() == {}


def test_codex_memories_patch_is_refused(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    target = Path(isolated_env["HOME"]) / ".codex" / "memories" / "ledger.md"
    patch = f"*** Begin Patch\n*** Add File: {target}\n+rounding bug\n*** End Patch"
    r = run_script(v.root, SCRIPT, payloads.codex_patch(v.root, patch, pre=True))
    assert r.returncode == 2 and "private memory store" in r.stderr


def test_gemini_save_memory_and_global_gemini_md_are_refused(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    r = run_script(v.root, SCRIPT, payloads.gemini_save_memory(v.root, "the ledger rounds half-even"))
    assert r.returncode == 2 and "save_memory" in r.stderr
    target = Path(isolated_env["HOME"]) / ".gemini" / "GEMINI.md"
    r = run_script(v.root, SCRIPT, payloads.gemini_write(v.root, str(target), "fact", pre=True))
    assert r.returncode == 2


def test_vault_writes_pass_the_pre_check(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    # The vault's own GEMINI.md and a folder named memory inside the vault are fine.
    for rel in ("GEMINI.md", "brain/Gotchas.md", "reference/.claude/projects/x/memory/y.md"):
        r = run_script(v.root, SCRIPT, payloads.claude_write(v.root, rel, "x", pre=True))
        assert r.returncode == 0 and r.json() == {}, rel


def test_memory_write_that_already_happened_is_reported(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    target = _claude_memory(Path(isolated_env["HOME"]), "notes.md")
    context = run_script(v.root, SCRIPT, payloads.claude_write(v.root, target, "x")).context()
    assert "private memory store" in context and "Move what you wrote there into the vault" in context


@pytest.mark.parametrize(
    "raw",
    [
        b"",
        b"{",
        b"[]",
        b'{"hook_event_name": "PostToolUse", "tool_input": "x"}',
        b'{"hook_event_name": "PostToolUse", "tool_input": {"file_path": 5}}',
    ],
)
def test_odd_input_never_fails_the_turn(raw: bytes, make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    r = run_script(v.root, SCRIPT, raw=raw)
    assert r.returncode == 0
    assert json.loads(r.stdout) == {}


def test_missing_manifest_still_checks_links(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    (v.root / "vault-manifest.json").unlink()
    rel = "work/active/X.md"
    _write(v.root, rel, "no frontmatter, see [[Nowhere]]")
    r = run_script(v.root, SCRIPT, payloads.claude_write(v.root, rel, ""))
    assert _lines(r.context()) == [
        f"{rel}: links that resolve to no file: [[Nowhere]] — fix the name or create the note"
    ]
    assert "vault-manifest.json not found" in r.stderr
