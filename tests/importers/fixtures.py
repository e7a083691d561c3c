# ruff: noqa: E501
"""Source fixtures built in temp dirs: a basic-memory project, Claude Code memory, MCP graphs."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

COFFEE = """---
title: Coffee Brewing Methods
type: note
permalink: main/notes/coffee-brewing-methods
tags:
- coffee
- brewing
---

# Coffee Brewing Methods

We should revisit #performance later.

## Observations
- [method] Pour over provides more flavor clarity than French press
- [technique] Water temperature at 205F extracts optimal compounds #brewing (tested twice)
- [X] done task is not an observation
- [00:01:12] timestamp is not a category

## Relations
- relates_to [[Tea Brewing Methods]]
- requires [[Proper Grinding Technique]]
- "inspired by" [[Q3 Planning: Goals/Risks]]
- see [[Architecture Overview]] and `[[Not A Link]]`

```python
- [fake] bullet inside code #nope
- relates_to [[Inside Code]]
```

    - [indented] code block line [[Indented Link]]

> [!note] callout is not an observation [[Quoted Link]]

Read [the tea note](tea-brewing.md) too.
"""

TEA = """---
title: Tea Brewing Methods
type: note
permalink: main/notes/tea-brewing-methods
---

- [method] Steep green tea at 80C #tea
- contrasts_with [[Coffee Brewing Methods]]
- see [[coffee-brewing-methods]] by permalink
- heading link [[Coffee Brewing Methods#Observations]] and alias [[Coffee Brewing Methods|coffee]]
"""

PLANNING = """---
title: 'Q3 Planning: Goals/Risks'
type: decision
status: accepted
---

- [goal] Ship the importer #q3
- [risk] Scope creep (likely)
"""

MALFORMED = """---
title: [unclosed
tags: : :
---

- [idea] Malformed frontmatter does not lose the note #keep
"""

UNCLOSED = """---
title: Never closed

- [idea] The whole file is body #unclosed
"""


def write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        path.write_text(data, encoding="utf-8", newline="")
    else:
        path.write_bytes(data)


def basic_memory_project(root: Path, *, extras: bool = True) -> Path:
    """A project exercising the edge cases of IMPORT-FORMATS.md §1.8."""
    write(root / "notes/coffee-brewing.md", COFFEE)
    write(root / "notes/tea-brewing.md", TEA)
    write(root / "planning/Q3 Planning- Goals-Risks.md", PLANNING)
    write(root / "notes/plain-no-frontmatter.md", "- [idea] Plain notes have no frontmatter #plain\n")
    write(root / "notes/malformed.md", MALFORMED)
    write(root / "notes/unclosed.md", UNCLOSED)
    write(
        root / "a/Architecture Overview.md",
        "---\ntitle: Architecture Overview\n---\n\n- [part] Service A #arch\n",
    )
    write(
        root / "b/Architecture Overview.md",
        "---\ntitle: Architecture Overview\n---\n\n- [part] Service B #arch\n- previous [[Retrospective]]\n",
    )
    write(
        root / "国际化/Überblick Architektur.md",
        "---\ntitle: Überblick Architektur\n---\n\n- [de] Grüße 🌍 #i18n\n",
    )
    write(
        root / "🚀 Launch Checklist.md",
        "---\ntitle: 🚀 Launch Checklist\ntype: checklist\n---\n\n- [step] Announce 🎉 #launch\n- links_to [[Überblick Architektur]]\n",
    )
    write(root / "What's next.md", "---\ntitle: What's next?\n---\n\n- [q] Ask #next\n")
    write(
        root / "notes/bom-crlf.md",
        b"\xef\xbb\xbf---\r\ntitle: Windows Note\r\n---\r\n\r\n- [os] CRLF and BOM survive #win\r\n- uses [[Tea Brewing Methods]]\r\n",
    )
    if extras:
        write(root / "notes/empty.md", "")
        write(root / "notes/blank.md", "  \n\n")
        write(root / ".hidden.md", "- [secret] hidden #x\n")
        write(root / ".obsidian/app.json", "{}")
        write(root / "notes/latin1.md", "caf\xe9 #x\n".encode("latin-1"))
        write(root / "images/diagram.png", b"\x89PNG\r\n\x1a\nfake-png-bytes")
        write(root / "dup/one.md", "---\ntitle: Same Title\n---\n\n- [n] one #dup\n")
        write(root / "dup/two.md", "---\ntitle: Same Title\n---\n\n- [n] two #dup\n")
        write(root / "memory.db", b"sqlite")
        os.symlink(root / "notes/tea-brewing.md", root / "notes/link-to-tea.md")
        write(root / "hard/original.md", "- [h] hard linked #h\n")
        os.link(root / "hard/original.md", root / "hard/second.md")
    return root


def claude_projects(root: Path) -> Path:
    """~/.claude/projects with two projects mixing both frontmatter generations."""
    mem = root / "-home-dana-src-route-planner" / "memory"
    write(
        root / "-home-dana-src-route-planner" / "0b1c-session.jsonl",
        '{"cwd": "/home/dana/src/route-planner"}\n',
    )
    write(
        mem / "MEMORY.md",
        "# Memory Index\n\n- [Testing](feedback_testing.md) — run the suite\n"
        "- [Role](user_role.md) - who I am\n- [Gone](deleted-note.md) — pointer to a deleted file\n"
        "- 2026-09-26 W7: free text line\n",
    )
    write(
        mem / "feedback_testing.md",
        "---\nname: feedback-testing\ndescription: Always run the full suite\ntype: feedback\n---\n"
        "Run `pytest -q` before committing.\n\n**Why:** CI is slow.\n\n**How to apply:** see [[user-role]].\n",
    )
    write(
        mem / "user_role.md",
        "---\nname: user-role\ndescription: Dana is a backend engineer\nmetadata: \n  node_type: memory\n"
        "  type: user\n  originSessionId: 885ee114-3071-4b9e-9b32-e55329684a43\n  modified: 2026-09-08T19:29:56.864Z\n"
        "---\nDana prefers Go. Links to [[feedback-testing]] and [[missing-memory]].\n\n```\n---\nnot frontmatter\n```\n",
    )
    write(
        mem / "project_deadline.md",
        "---\nname: project-deadline\ndescription: Launch: end of Q3\ntype: project\n---\nShip by Sept 30.\n",
    )
    write(mem / "odd_type.md", "---\nname: odd-type\ntype: gossip\n---\nUnknown type kept.\n")
    write(
        mem / "both_types.md", "---\nname: both-types\ntype: user\nmetadata:\n  type: reference\n---\nBoth.\n"
    )
    write(mem / "debugging.md", "# Debugging\n\nLegacy topic file without frontmatter.\n")
    write(mem / "no_name.md", "---\ndescription: no name here\ntype: reference\n---\nNameless.\n")
    write(mem / "empty.md", "")
    write(
        mem / "crlf_bom.md", b"\xef\xbb\xbf---\r\nname: windows-fact\r\ntype: user\r\n---\r\nCRLF body.\r\n"
    )
    write(mem / "team" / "MEMORY.md", "- [Team](team_rule.md) — shared\n")
    write(mem / "team" / "team_rule.md", "---\nname: team-rule\ntype: feedback\n---\nShared rule.\n")
    other = root / "C--Users-dana-source-repos-Inventory-Service" / "memory"
    write(other / "MEMORY.md", "- [Role](user_role.md) — Windows project\n")
    write(other / "user_role.md", "---\nname: user-role\ntype: user\n---\nSame name, other project.\n")
    return root


def mcp_lines(records: list[dict[str, object]], *, newline: str = "\n", bom: bool = False) -> bytes:
    text = newline.join(json.dumps(r, ensure_ascii=False) for r in records)
    data = text.encode("utf-8")
    return (b"\xef\xbb\xbf" + data) if bom else data


MCP_RECORDS: list[dict[str, object]] = [
    {
        "type": "entity",
        "name": "Dana",
        "entityType": "person",
        "observations": ["Works on routing", "Line one\nLine two"],
    },
    {"type": "entity", "name": "Acme Corp", "entityType": "organization", "observations": ["Makes anvils"]},
    {"type": "entity", "name": "Berlin", "entityType": "city", "observations": ["Capital"]},
    {"type": "entity", "name": "Berlin ", "entityType": "city", "observations": ["Trailing space twin"]},
    {"type": "entity", "name": "PostgreSQL", "entityType": "tech", "observations": []},
    {"type": "entity", "name": "postgresql", "entityType": "tech", "observations": ["lowercase twin"]},
    {
        "type": "entity",
        "name": "Project: Apollo/v2",
        "entityType": "project",
        "observations": ["Unsafe name"],
    },
    {"type": "entity", "name": "", "entityType": "ghost", "observations": ["empty name"]},
    {"type": "entity", "name": "🚀 Rocket", "entityType": "Thing", "observations": ["emoji [[Dana]] link"]},
    {"type": "relation", "from": "Dana", "to": "Acme Corp", "relationType": "works_at"},
    {"type": "relation", "from": "Dana", "to": "Berlin", "relationType": "is a fan of"},
    {"type": "relation", "from": "Dana", "to": "Project: Apollo/v2", "relationType": "leads"},
    {"type": "relation", "from": "Dana", "to": "Nobody", "relationType": "knows"},
    {"type": "relation", "from": "Ghost", "to": "Dana", "relationType": "haunts"},
]


def tree_hash(root: Path, *, exclude: tuple[str, ...] = ()) -> dict[str, str]:
    """Path → sha256 of every file (and '<dir>' for folders) under ``root``."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        for d in dirnames:
            rel = os.path.normpath(os.path.join(rel_dir, d))
            if not rel.startswith(exclude):
                out[rel + "/"] = "<dir>"
        for f in filenames:
            rel = os.path.normpath(os.path.join(rel_dir, f))
            if rel.startswith(exclude):
                continue
            p = Path(dirpath) / f
            out[rel] = "<link>" if p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


CATEGORIES = ("fact", "decision", "idea", "risk", "method", "note", "question")


def generated_note(i: int, total: int) -> tuple[str, str]:
    """(relative path, text) of the i-th generated basic-memory note (deterministic)."""
    folder = f"area-{i % 37}/topic-{i % 11}"
    title = f"Generated Note {i}" if i % 13 else f"Generated: Note {i}?"
    stem = title.replace(":", "-").replace("?", "")
    obs = "\n".join(
        f"- [{CATEGORIES[(i + k) % len(CATEGORIES)]}] Observation {k} of note {i} #tag{k % 5}"
        + (f" (context {k})" if k % 2 else "")
        for k in range(3 + i % 4)
    )
    rels = "\n".join(f"- relates_to [[Generated Note {(i * 7 + k) % total or 1}]]" for k in range(2)) + (
        f"\n- requires [[Missing Note {i}]]" if i % 5 == 0 else ""
    )
    text = (
        f"---\ntitle: '{title}'\ntype: note\npermalink: main/{folder}/generated-note-{i}\ntags:\n- gen\n- n{i % 9}\n---\n\n"
        f"# {title}\n\nSome prose for note {i} mentioning [[Generated Note {(i + 1) % total or 1}]] inline.\n\n"
        f"## Observations\n{obs}\n\n## Relations\n{rels}\n\n"
        "```python\n- [fake] not an observation #nope\n```\n"
    )
    return f"{folder}/{stem}.md", text


def generated_project(root: Path, count: int) -> Path:
    for i in range(count):
        rel, text = generated_note(i, count)
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root
