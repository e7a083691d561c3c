"""The driver's rules per kind of file, and the merge-file command."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from shardpy.gitsync.driver import merge_files
from shardpy.gitsync.merge import kind_of, merge_bytes
from shardpy.gitsync.result import FileKind
from shardpy.vault.ledger import SCHEMA
from shardpy.vault.state import parse_state
from tests.shardkit import run_shardpy


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        ("notes/a.md", FileKind.NOTE),
        (".shardmind/state.json", FileKind.STATE),
        ("vaults/work/.shardmind/state.json", FileKind.STATE),
        (".shardmind/imports/ledger.sqlite3", FileKind.LEDGER),
        (".shardmind/shard.yaml", FileKind.RECORD),
        (".shardmind/templates/brain/Note.md", FileKind.RECORD),
        ("shard-values.yaml", FileKind.VALUES),
    ],
)
def test_kind_follows_the_path(path: str, kind: FileKind) -> None:
    assert kind_of(path) is kind


def _state(**over: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "schema_version": 1,
        "engine": "shardpy 0.1.0",
        "shard": "acme/demo",
        "version": "1.0.0",
        "source": "/src",
        "source_kind": "local",
        "install_date": "2026-01-01T00:00:00Z",
        "installed_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:00:00Z",
        "values_hash": "h",
        "values": {"user_name": "me"},
        "modules": {"brain": "included"},
        "files": {"brain/Note.md": {"template": "brain/Note.md", "rendered_hash": "1"}},
    }
    data.update(over)
    return data


def _b(data: dict[str, Any]) -> bytes:
    return parse_state(json.dumps(data)).to_json().encode()


def test_state_entries_from_both_machines_are_kept() -> None:
    base = _state()
    a = _state(files={**base["files"], "a.md": {"template": "a.md", "rendered_hash": "2"}})
    b = _state(
        files={**base["files"], "b.md": {"template": "b.md", "rendered_hash": "3"}},
        modules={"brain": "included", "extra": "included"},
        updated_at="2026-02-02T00:00:00Z",
    )
    ab = merge_bytes(_b(base), _b(a), _b(b), ".shardmind/state.json")
    ba = merge_bytes(_b(base), _b(b), _b(a), ".shardmind/state.json")
    assert ab.clean and ab.data == ba.data
    merged = json.loads(ab.data)
    assert set(merged["files"]) == {"brain/Note.md", "a.md", "b.md"}
    assert merged["modules"] == {"brain": "included", "extra": "included"}
    assert merged["updated_at"] == "2026-02-02T00:00:00Z"


def test_state_disagreement_keeps_ours_as_valid_json_and_is_a_conflict() -> None:
    base = _state()
    a = _state(version="1.1.0", files={"brain/Note.md": {"template": "brain/Note.md", "rendered_hash": "A"}})
    b = _state(version="1.2.0", files={"brain/Note.md": {"template": "brain/Note.md", "rendered_hash": "B"}})
    got = merge_bytes(_b(base), _b(a), _b(b), ".shardmind/state.json")
    assert not got.clean
    merged = parse_state(got.data.decode())
    assert merged.version == "1.1.0" and merged.files["brain/Note.md"].rendered_hash == "A"
    assert any("version" in m for m in got.messages)
    assert any("brain/Note.md" in m for m in got.messages)


def test_timestamps_and_engine_are_not_disagreements() -> None:
    base = _state()
    a = _state(engine="shardpy 0.2.0", updated_at="2026-03-01T00:00:00Z")
    b = _state(engine="shardpy 0.3.0", updated_at="2026-02-01T00:00:00Z")
    got = merge_bytes(_b(base), _b(a), _b(b), ".shardmind/state.json")
    assert got.clean
    merged = json.loads(got.data)
    assert merged["engine"] == "shardpy 0.3.0" and merged["updated_at"] == "2026-03-01T00:00:00Z"


def test_state_json_is_written_deterministically() -> None:
    text = _b(_state(values={"z": 1, "a": {"y": 2, "b": 3}})).decode()
    assert text == json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def test_values_file_conflict_keeps_ours_without_markers() -> None:
    base = b"# my values\nuser_name: me\npurpose: eng\n"
    ours = b"# my values\nuser_name: ours\npurpose: eng\n"
    theirs = b"# my values\nuser_name: theirs\npurpose: res\n"
    got = merge_bytes(base, ours, theirs, "shard-values.yaml")
    assert not got.clean
    assert got.data == b"# my values\nuser_name: ours\npurpose: res\n"
    clean = merge_bytes(base, ours, b"# my values\nuser_name: me\npurpose: res\n", "shard-values.yaml")
    assert clean.clean and clean.data == b"# my values\nuser_name: ours\npurpose: res\n"


def test_release_copies_are_never_blended() -> None:
    got = merge_bytes(b"v: 1\n", b"v: 2\n", b"v: 3\n", ".shardmind/shard.yaml")
    assert not got.clean and got.data == b"v: 2\n"


def _ledger(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA)
    for source, sha, when in rows:
        conn.execute(
            "INSERT INTO records VALUES"
            " ('basic-memory', 'in', ?, 'note', ?, ?, ?, 'k', ?, x'00', ?, NULL, ?, ?)",
            (source, f"{source}.md", f"{source}.md", sha, sha, sha, f"run-{when}", when),
        )
    conn.commit()
    conn.close()
    return path


def _records(path: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT source_path, source_hash FROM records ORDER BY source_path").fetchall()


def test_ledgers_merge_record_by_record(tmp_path: Path) -> None:
    base = _ledger(tmp_path / "base", [("a", "1", "t1"), ("gone", "1", "t1"), ("both", "1", "t1")])
    ours = _ledger(
        tmp_path / "ours", [("a", "1", "t1"), ("gone", "1", "t1"), ("both", "2", "t3"), ("o", "1", "t2")]
    )
    theirs = _ledger(tmp_path / "theirs", [("a", "1", "t1"), ("both", "3", "t2"), ("t", "1", "t2")])
    result = merge_files(base, ours, theirs, ".shardmind/imports/ledger.sqlite3")
    assert result.merge.clean
    assert any("imported on both machines" in m for m in result.merge.messages)
    result.install(ours)
    assert _records(ours) == [("a", "1"), ("both", "2"), ("o", "1"), ("t", "1")]


def test_merge_file_by_hand_and_as_driver(tmp_path: Path) -> None:
    (tmp_path / "base.md").write_text("a\nb\nc\n")
    (tmp_path / "ours.md").write_text("A\nb\nc\n")
    (tmp_path / "theirs.md").write_text("a\nb\nC\n")
    by_hand = run_shardpy("merge-file", "base.md", "ours.md", "theirs.md", cwd=tmp_path)
    assert by_hand.returncode == 0 and by_hand.stdout == "A\nb\nC\n"
    assert (tmp_path / "ours.md").read_text() == "A\nb\nc\n"
    driver = run_shardpy("merge-file", "--driver", "base.md", "ours.md", "theirs.md", "n.md", cwd=tmp_path)
    assert driver.returncode == 0 and driver.stdout == ""
    assert (tmp_path / "ours.md").read_text() == "A\nb\nC\n"
    (tmp_path / "theirs.md").write_text("a\nb\nX\n")
    conflict = run_shardpy("merge-file", "--driver", "base.md", "ours.md", "theirs.md", "n.md", cwd=tmp_path)
    assert conflict.returncode == 1 and "conflicting region" in conflict.stderr
    assert "<<<<<<< ours\nC\n=======\nX\n>>>>>>> theirs\n" in (tmp_path / "ours.md").read_text()


def test_merge_file_usage_and_missing_input(tmp_path: Path) -> None:
    usage = run_shardpy("merge-file", "only-one", cwd=tmp_path)
    assert usage.returncode == 2 and "usage: shardpy merge-file" in usage.stderr
    missing = run_shardpy("merge-file", "a", "b", "c", cwd=tmp_path)
    assert missing.returncode == 1 and "GIT_MERGE_INPUT" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_unparseable_frontmatter_keeps_ours_and_shows_both_blocks() -> None:
    base = b"---\ntitle: a\n---\nbody\n"
    ours = b"---\ntitle: [unclosed\n---\nbody\n"
    theirs = b"---\ntitle: b\n---\nbody\n"
    got = merge_bytes(base, ours, theirs, "n.md")
    assert not got.clean
    assert got.data.startswith(
        b"---\ntitle: [unclosed\n---\n<<<<<<< ours frontmatter\n---\ntitle: [unclosed\n"
    )
    assert b"=======\n---\ntitle: b\n---\n>>>>>>> theirs frontmatter\nbody\n" in got.data
    assert any("not merged key by key" in m for m in got.messages)


def test_tags_added_on_both_sides_merge_as_a_set() -> None:
    base = b"---\ntags: [a, b]\n---\nx\n"
    ours = b"---\ntags: [a, b, mine]\n---\nx\n"
    theirs = b"---\ntags: [b, theirs]\n---\nx\n"
    got = merge_bytes(base, ours, theirs, "n.md")
    assert got.clean and b"<<<<<<<" not in got.data
    assert got.data.startswith(b"---\ntags: [b, ") and b"mine" in got.data and b"theirs" in got.data
    assert b" a," not in got.data  # removed by theirs, untouched by ours: stays removed


def test_a_json_file_is_merged_by_lines_only_into_valid_json() -> None:
    """A JSON file (Obsidian's settings, a plugin's data.json, a canvas) never gets conflict
    markers: the line merge when it parses, else ours whole and a conflict."""
    from shardpy.gitsync.merge import kind_of, merge_bytes
    from shardpy.gitsync.result import FileKind

    assert kind_of(".obsidian/app.json") is FileKind.DATA and kind_of("b/x.canvas") is FileKind.DATA
    assert kind_of(".shardmind/state.json") is FileKind.STATE
    base = b'{\n "a": 1,\n "b": 2,\n "c": 3\n}\n'
    clean = merge_bytes(base, base.replace(b"1", b"10"), base.replace(b"3", b"30"), "x.json")
    assert clean.clean and clean.data == b'{\n "a": 10,\n "b": 2,\n "c": 30\n}\n'
    same_line = merge_bytes(base, base.replace(b"1", b"10"), base.replace(b"1", b"11"), "x.json")
    assert not same_line.clean and same_line.data == base.replace(b"1", b"10")
    # Both add an item after the last: a clean line merge, but not JSON (a comma missing).
    arr = b"[\n 1\n]\n"
    both = merge_bytes(arr, b"[\n 1,\n 2\n]\n", b"[\n 1,\n 3\n]\n", "x.json")
    assert not both.clean and both.data == b"[\n 1,\n 2\n]\n"


def test_a_yaml_file_such_as_a_base_is_never_given_markers() -> None:
    from shardpy.gitsync.merge import merge_bytes

    base = b"views:\n  - type: table\n    name: A\nlimit: 1\norder: x\nsort: y\n"
    clean = merge_bytes(
        base, base.replace(b"name: A", b"name: B"), base.replace(b"sort: y", b"sort: z"), "b.base"
    )
    assert clean.clean and b"name: B" in clean.data and b"sort: z" in clean.data
    both = merge_bytes(
        base, base.replace(b"name: A", b"name: B"), base.replace(b"name: A", b"name: C"), "b.base"
    )
    assert not both.clean and both.data == base.replace(b"name: A", b"name: B")
