"""basic-memory import: mapping, edge cases of IMPORT-FORMATS.md §1.8, links."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from shardpy.notes.frontmatter import split_frontmatter
from tests.importers.helpers import do_import, read, rows

INTO = "memories/basic-memory"


def test_plan_rows_and_skips(bm_project: Path, vault: Path) -> None:
    plan = do_import("basic-memory", bm_project, vault).plan
    r = rows(plan)
    assert plan.dry_run
    assert r["notes/coffee-brewing.md"].action == "create"
    assert r["notes/coffee-brewing.md"].vault_path == f"{INTO}/notes/Coffee Brewing Methods.md"
    assert r["notes/coffee-brewing.md"].observations == 3
    # Duplicate title in one folder: the first by source path wins, the other is a collision.
    assert r["dup/one.md"].action == "create"
    assert r["dup/two.md"].action == "collision"
    assert "dup/one.md" in r["dup/two.md"].detail
    # Duplicate titles in different folders are both imported.
    assert r["a/Architecture Overview.md"].action == r["b/Architecture Overview.md"].action == "create"
    # Titles with : / ? get a safe file name.
    assert (
        r["planning/Q3 Planning- Goals-Risks.md"].vault_path == f"{INTO}/planning/Q3 Planning- Goals-Risks.md"
    )
    assert r["What's next.md"].vault_path == f"{INTO}/What's next.md"
    # Unicode and emoji are kept.
    assert r["国际化/Überblick Architektur.md"].vault_path == f"{INTO}/国际化/Überblick Architektur.md"
    assert r["🚀 Launch Checklist.md"].vault_path == f"{INTO}/🚀 Launch Checklist.md"
    assert r["🚀 Launch Checklist.md"].type == "checklist"
    # Malformed frontmatter: imported, with a warning; unclosed fence: no frontmatter at all.
    assert r["notes/malformed.md"].action == "create"
    assert any("malformed frontmatter" in w for w in r["notes/malformed.md"].warnings)
    assert r["notes/unclosed.md"].name == "unclosed" and not r["notes/unclosed.md"].warnings
    # Attachments are copied beside their notes.
    assert r["images/diagram.png"].kind == "attachment"
    skipped = {s.source_path: s.reason for s in plan.skipped}
    assert skipped == {
        ".hidden.md": "dot file",
        ".obsidian/": "dot folder",
        "memory.db": "ignored (basic-memory ignore rules)",
        "hard/original.md": "refused: hard link",
        "hard/second.md": "refused: hard link",
        "notes/blank.md": "empty file",
        "notes/empty.md": "empty file",
        "notes/latin1.md": "not UTF-8 (byte 3)",
        "notes/link-to-tea.md": "refused: symbolic link",
    }
    assert plan.failed  # the collision makes the command exit 1


def test_links_resolved_ambiguous_missing(bm_project: Path, vault: Path) -> None:
    plan = do_import("basic-memory", bm_project, vault).plan
    by_text = {(lr.source_path, lr.text): lr for lr in plan.links}
    coffee = "notes/coffee-brewing.md"
    assert by_text[(coffee, "[[Tea Brewing Methods]]")].status == "resolved"
    assert by_text[(coffee, "[[Tea Brewing Methods]]")].rewritten is None
    missing = by_text[(coffee, "[[Proper Grinding Technique]]")]
    assert missing.status == "unresolved" and "no note" in missing.reason
    amb = by_text[(coffee, "[[Architecture Overview]]")]
    assert amb.status == "ambiguous" and "2 imported notes" in amb.reason
    q3 = by_text[(coffee, "[[Q3 Planning: Goals/Risks]]")]
    assert q3.status == "resolved" and q3.rewritten == "[[Q3 Planning- Goals-Risks|Q3 Planning: Goals/Risks]]"
    # Links in code never count; the callout link is a real Obsidian link.
    texts = {lr.text for lr in plan.links}
    assert not {"[[Inside Code]]", "[[Indented Link]]", "[[Not A Link]]"} & texts
    tea = "notes/tea-brewing.md"
    assert by_text[(tea, "[[coffee-brewing-methods]]")].status == "resolved"  # legacy bare permalink
    assert by_text[(tea, "[[Coffee Brewing Methods#Observations]]")].status == "resolved"
    # Markdown links to notes are rewritten to the new file name.
    md = by_text[(coffee, "tea-brewing.md")]
    assert md.status == "resolved" and md.rewritten == "Tea%20Brewing%20Methods.md"


def test_link_to_existing_vault_note(tmp_path: Path, vault: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.md").write_text("- [x] see [[Home]] and [[My Alias]] #t\n", encoding="utf-8")
    (vault / "Other.md").write_text("---\naliases: [My Alias]\n---\nx\n", encoding="utf-8")
    plan = do_import("basic-memory", src, vault).plan
    status = {lr.text: (lr.status, lr.target, lr.rewritten) for lr in plan.links}
    assert status["[[Home]]"] == ("resolved", "Home.md", None)
    assert status["[[My Alias]]"] == ("resolved", "Other.md", "[[Other|My Alias]]")


def test_written_notes(bm_project: Path, vault: Path) -> None:
    out = do_import("basic-memory", bm_project, vault, apply=True)
    assert out.applied is not None and out.applied.written == 14
    coffee = read(vault, f"{INTO}/notes/Coffee Brewing Methods.md")
    source = (bm_project / "notes/coffee-brewing.md").read_text("utf-8")
    # Source frontmatter bytes first, provenance appended, body verbatim except rewritten links.
    src_fm, src_body = source.split("---\n", 2)[1:]
    assert coffee.startswith(
        "---\n" + src_fm + "imported_from: basic-memory\nsource_path: notes/coffee-brewing.md\n"
    )
    assert coffee.endswith(
        src_body.replace(
            "[[Q3 Planning: Goals/Risks]]", "[[Q3 Planning- Goals-Risks|Q3 Planning: Goals/Risks]]"
        ).replace("(tea-brewing.md)", "(Tea%20Brewing%20Methods.md)")
    )
    data = split_frontmatter(coffee).data
    # Compared as written: YAML reads it back as a datetime, whose text drops a ".000" fraction.
    assert f"\nimported_at: {out.plan.imported_at}\n" in coffee
    assert data["source_hash"].startswith("sha256:")
    # A renamed note keeps its title in aliases.
    q3 = split_frontmatter(read(vault, f"{INTO}/planning/Q3 Planning- Goals-Risks.md")).data
    assert q3["aliases"] == ["Q3 Planning: Goals/Risks"] and q3["status"] == "accepted"
    # BOM dropped, CRLF kept for the whole note.
    win = (vault / f"{INTO}/notes/Windows Note.md").read_bytes()
    assert not win.startswith(b"\xef\xbb\xbf") and b"\r\n" in win and b"\n" not in win.replace(b"\r\n", b"")
    # Malformed: the whole source text is the body.
    malformed = read(vault, f"{INTO}/notes/malformed.md")
    assert malformed.endswith((bm_project / "notes/malformed.md").read_text("utf-8"))
    assert split_frontmatter(malformed).state == "present"
    assert (vault / f"{INTO}/images/diagram.png").read_bytes() == (
        bm_project / "images/diagram.png"
    ).read_bytes()
    # The source is never modified.
    assert (bm_project / "notes/coffee-brewing.md").read_text("utf-8") == source


def test_strict_skips_malformed(bm_project: Path, vault: Path) -> None:
    plan = do_import("basic-memory", bm_project, vault, strict=True).plan
    assert "notes/malformed.md" not in rows(plan)
    assert any(s.source_path == "notes/malformed.md" and "--strict" in s.reason for s in plan.skipped)


def test_existing_note_at_target_is_a_collision(bm_project: Path, vault: Path) -> None:
    target = vault / INTO / "notes" / "Tea Brewing Methods.md"
    target.parent.mkdir(parents=True)
    target.write_text("mine\n", encoding="utf-8")
    out = do_import("basic-memory", bm_project, vault, apply=True)
    row = rows(out.plan)["notes/tea-brewing.md"]
    assert row.action == "collision" and "did not write" in row.detail
    assert target.read_text("utf-8") == "mine\n"


def test_into_and_memory_root(bm_project: Path, vault: Path) -> None:
    (vault / "vault-manifest.json").write_text('{"memory_root": "brain/memory"}', encoding="utf-8")
    plan = do_import("basic-memory", bm_project, vault).plan
    assert plan.into == "brain/memory/basic-memory"
    plan = do_import("basic-memory", bm_project, vault, into="elsewhere/bm").plan
    assert rows(plan)["notes/tea-brewing.md"].vault_path == "elsewhere/bm/notes/Tea Brewing Methods.md"


def test_a_whole_second_instant_is_written_with_its_milliseconds(bm_project: Path, vault: Path) -> None:
    whole = dt.datetime(2026, 11, 30, 4, 13, 29, tzinfo=dt.UTC)
    out = do_import("basic-memory", bm_project, vault, apply=True, now=whole)
    assert out.plan.imported_at == "2026-11-30T04:13:29.000Z"
    coffee = read(vault, f"{INTO}/notes/Coffee Brewing Methods.md")
    assert "\nimported_at: 2026-11-30T04:13:29.000Z\n" in coffee
