"""Issue 16's scenarios: a bare repository, two clones, real `git pull` with shardpy's driver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardpy.notes.frontmatter import split_frontmatter
from tests.gitsync.kit import NOTE_V1, Mesh, comparable, git, git_env
from tests.shardkit import Cli

GUIDE_V1 = "# Guide\n\nRead this first.\n\nStep one.\nStep two.\n"
TASK = """---
title: Task
status: draft
priority: low
tags: [work]
---
# Task

Body line one.
Body line two.
"""


def files(version: int) -> dict[str, str | bytes]:
    note = NOTE_V1 if version == 1 else NOTE_V1.replace("zeta", "zeta (v2 ending)")
    guide = GUIDE_V1 if version == 1 else GUIDE_V1.replace("Step two.", "Step two.\nStep three (v2).")
    out: dict[str, str | bytes] = {"brain/Note.md": note, "brain/Guide.md": guide, "extra/x.md": "x\n"}
    if version == 2:
        out["brain/New in v2.md"] = "# New\n"
    return out


@pytest.fixture
def mesh(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Mesh:
    git_env(monkeypatch, tmp_path / "home")
    m = Mesh(tmp_path, cli)
    m.release("1.0.0", files(1))
    m.start()
    return m


def test_update_on_a_while_b_edits(mesh: Mesh) -> None:
    """(1) A updates and pushes; B edits three notes and adds one.

    One of B's notes is a managed file the update also changed, elsewhere.
    """
    a, b = mesh.a, mesh.b
    mesh.write(b, "mine.md", "my note\n")
    mesh.write(b, "other.md", "another note\n")
    mesh.commit(b, "B's own notes")
    mesh.push(b)
    assert mesh.pull(a).returncode == 0

    mesh.release("2.0.0", files(2))
    mesh.shardpy(a, "update", "--yes")
    mesh.commit(a, "update to 2.0.0")
    mesh.push(a)

    mesh.write(b, "brain/Note.md", NOTE_V1.replace("alpha", "alpha (B's edit)"))
    mesh.write(b, "mine.md", "my note, edited on B\n")
    mesh.write(b, "other.md", "another note, edited on B\n")
    mesh.write(b, "added on B.md", "# Added\n")
    mesh.commit(b, "B edits")
    pulled = mesh.pull(b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert mesh.unmerged(b) == []

    note = mesh.read(b, "brain/Note.md")
    assert "alpha (B's edit)" in note and "zeta (v2 ending)" in note
    assert "Step three (v2)." in mesh.read(b, "brain/Guide.md")
    assert mesh.read(b, "brain/New in v2.md") == "# New\n"
    assert mesh.read(b, "mine.md") == "my note, edited on B\n"
    assert mesh.read(b, "other.md") == "another note, edited on B\n"
    assert mesh.read(b, "added on B.md") == "# Added\n"

    mesh.push(b)
    assert mesh.pull(a).returncode == 0
    sa, sb = mesh.status(a), mesh.status(b)
    assert comparable(sa) == comparable(sb)
    assert sa["version"] == "2.0.0"
    assert [m["path"] for m in sa["modified"]] == ["brain/Note.md"]
    assert sa["git"]["driver_installed"] and not sa["git"]["unmerged"] and not sa["git"]["conflict_markers"]
    assert (a / ".shardmind/state.json").read_bytes() == (b / ".shardmind/state.json").read_bytes()


def test_different_updates_merge_state_entry_by_entry(mesh: Mesh) -> None:
    """A deselects a module, B changes a value: both updates' records survive in state.json."""
    a, b = mesh.a, mesh.b
    mesh.shardpy(a, "update", "--yes", "--remove-module", "extra")
    mesh.commit(a, "A: no extra")
    mesh.push(a)
    values = mesh.read(b, "shard-values.yaml")
    assert "user_name: ''" in values
    mesh.write(b, "shard-values.yaml", values.replace("user_name: ''", "user_name: Bea"))
    mesh.shardpy(b, "update", "--yes")
    mesh.commit(b, "B: my name")
    pulled = mesh.pull(b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    state = json.loads(mesh.read(b, ".shardmind/state.json"))
    assert state["modules"]["extra"] == "excluded" and "extra/x.md" not in state["files"]
    assert state["values"]["user_name"] == "Bea"
    assert "user_name: Bea" in mesh.read(b, "shard-values.yaml")
    mesh.push(b)
    assert mesh.pull(a).returncode == 0
    sa, sb = mesh.status(a), mesh.status(b)
    assert "error" not in sb and sb["values_valid"] and not sb["missing"]
    assert comparable(sa) == comparable(sb)


def _task(status: str = "draft", priority: str = "low", tags: str = "[work]") -> str:
    return (
        TASK.replace("status: draft", f"status: {status}")
        .replace("priority: low", f"priority: {priority}")
        .replace("tags: [work]", f"tags: {tags}")
    )


def _share_task(mesh: Mesh) -> None:
    mesh.write(mesh.a, "Task.md", TASK)
    mesh.commit(mesh.a, "task")
    mesh.push(mesh.a)
    assert mesh.pull(mesh.b).returncode == 0


def test_different_keys_and_tags_merge_cleanly(mesh: Mesh) -> None:
    """(2) Different frontmatter keys of one note, and a different tag each: all kept, no conflict."""
    _share_task(mesh)
    mesh.write(mesh.a, "Task.md", _task(status="done", tags="[work, from-a]"))
    mesh.commit(mesh.a, "A: status, tag")
    mesh.push(mesh.a)
    mesh.write(mesh.b, "Task.md", _task(priority="high", tags="[work, from-b]"))
    mesh.commit(mesh.b, "B: priority, tag")
    pulled = mesh.pull(mesh.b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    data = split_frontmatter(mesh.read(mesh.b, "Task.md")).data
    assert data["status"] == "done" and data["priority"] == "high"
    assert sorted(data["tags"]) == ["from-a", "from-b", "work"]
    assert "<<<<<<<" not in mesh.read(mesh.b, "Task.md")


def test_same_key_changed_differently_is_a_conflict_with_valid_yaml(mesh: Mesh) -> None:
    """(3) The same key changed differently: git reports a conflict, the YAML parses, status lists it."""
    _share_task(mesh)
    mesh.write(mesh.a, "Task.md", _task(status="done"))
    mesh.commit(mesh.a, "A: done")
    mesh.push(mesh.a)
    mesh.write(mesh.b, "Task.md", _task(status="blocked"))
    mesh.commit(mesh.b, "B: blocked")
    pulled = mesh.pull(mesh.b)
    assert pulled.returncode != 0
    assert "CONFLICT" in pulled.stdout and "Task.md" in pulled.stdout
    assert mesh.unmerged(mesh.b) == ["Task.md"]
    text = mesh.read(mesh.b, "Task.md")
    split = split_frontmatter(text)
    assert split.state == "present" and split.data["status"] == "blocked"  # ours stays in the YAML
    assert '<<<<<<< ours frontmatter\nstatus: "blocked"\n=======\nstatus: "done"\n' in split.body
    st = mesh.status(mesh.b)
    assert st["git"]["unmerged"] == ["Task.md"] and st["git"]["conflict_markers"] == ["Task.md"]
    plain = mesh.cli.run("status", cwd=mesh.b)
    assert "unmerged Task.md" in plain.stdout


def test_same_update_on_both_machines_gives_identical_records(mesh: Mesh) -> None:
    """(4) Both run the same update independently: identical state.json bytes, no conflict at all."""
    mesh.release("2.0.0", files(2))
    mesh.shardpy(mesh.a, "update", "--yes")
    mesh.shardpy(mesh.b, "update", "--yes")
    state = ".shardmind/state.json"
    assert (mesh.a / state).read_bytes() == (mesh.b / state).read_bytes()
    for machine in (mesh.a, mesh.b):
        assert (machine / ".shardmind/update-check.json").is_file()
        assert git(
            machine, "status", "--porcelain", "--ignored", ".shardmind/update-check.json"
        ).stdout.startswith("!!")
    mesh.commit(mesh.a, "A: update")
    mesh.push(mesh.a)
    mesh.commit(mesh.b, "B: update")
    pulled = mesh.pull(mesh.b)
    assert pulled.returncode == 0 and "CONFLICT" not in pulled.stdout
    assert git(mesh.b, "diff", "HEAD~1", "--stat", "--", ".shardmind").stdout == ""  # nothing to merge there
    mesh.push(mesh.b)
    assert mesh.pull(mesh.a).returncode == 0
    assert comparable(mesh.status(mesh.a)) == comparable(mesh.status(mesh.b))


def _source(root: Path, names: list[str]) -> Path:
    for name in names:
        (root / "notes").mkdir(parents=True, exist_ok=True)
        (root / "notes" / f"{name.lower()}.md").write_text(
            f"---\ntitle: {name}\ntype: note\npermalink: notes/{name.lower()}\n---\n\n"
            f"# {name}\n\n- [fact] {name} #imported\n",
            encoding="utf-8",
        )
    return root


def _notes(machine: Path) -> list[str]:
    return sorted(
        p.relative_to(machine).as_posix()
        for p in machine.rglob("*.md")
        if not {".shardmind", ".git", "brain", "extra"} & set(p.parts)
    )


def test_imports_on_both_machines_merge_without_duplicates(mesh: Mesh, tmp_path: Path) -> None:
    """(5) Different sources imported on each machine, then synced.

    No duplicates, and both machines' import records are intact.
    """
    one = _source(tmp_path / "one", ["Alpha", "Beta"])
    two = _source(tmp_path / "two", ["Gamma", "Delta", "Epsilon"])
    mesh.shardpy(mesh.a, "import", "--from", "basic-memory", str(one), ".", "--apply")
    mesh.commit(mesh.a, "A: import one")
    mesh.push(mesh.a)
    mesh.shardpy(mesh.b, "import", "--from", "basic-memory", str(two), ".", "--apply")
    mesh.commit(mesh.b, "B: import two")
    pulled = mesh.pull(mesh.b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    mesh.push(mesh.b)
    assert mesh.pull(mesh.a).returncode == 0
    notes = _notes(mesh.b)
    assert len(notes) == 5 and notes == _notes(mesh.a)
    ledger = ".shardmind/imports/ledger.sqlite3"
    assert (mesh.a / ledger).read_bytes() == (mesh.b / ledger).read_bytes()
    # Each machine now knows the other's import: re-running either writes nothing, on either machine.
    for machine in (mesh.a, mesh.b):
        for source in (one, two):
            plan = mesh.cli.run(
                "import", "--from", "basic-memory", str(source), ".", "--json", cwd=machine
            ).json()
            actions = {row["action"] for row in plan["notes"]}
            assert actions == {"unchanged"}, plan["notes"]
    assert _notes(mesh.a) == notes
    assert git(mesh.a, "status", "--porcelain").stdout == ""
