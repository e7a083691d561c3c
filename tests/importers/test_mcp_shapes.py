"""MCP memory graphs with values of the wrong shape (a helper's probe of `shardpy import`).

Node cuts a string inside an emoji as ``"\\ud83d"`` (half a character, a lone surrogate), and
hand-edited or other tools' graphs put a number, a boolean or a string where a list belongs. Each
was a traceback (no JSON even with ``--json``) or, for a string, one observation per character.
Now: half characters become U+FFFD with a notice, a value that is not a list is one observation,
a top-level part that is not a list is a skipped record with its reason.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shardkit import run_shardpy

CASES = {
    "half emoji": '{"type":"entity","name":"Rocket","entityType":"t","observations":["launch \\ud83d"]}',
    "number": '{"type":"entity","name":"A","entityType":"t","observations":5}',
    "boolean": '{"type":"entity","name":"A","entityType":"t","observations":true}',
    "string": '{"type":"entity","name":"S","entityType":"n","observations":"a string"}',
    "entities not a list": '{"entities": 5, "relations": []}',
    "relations not a list": '{"entities":[{"name":"A","entityType":"t","observations":[]}],"relations":7}',
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mcp-shapes")
    done = run_shardpy("install", "--defaults", root / "vault", cwd=root, timeout=300)
    assert done.returncode == 0, done.stderr
    return root / "vault"


@pytest.mark.parametrize("case", CASES)
def test_a_wrong_shape_is_never_a_traceback(vault: Path, tmp_path: Path, case: str) -> None:
    source = tmp_path / "graph"
    source.mkdir()
    (source / "memory.jsonl").write_text(CASES[case] + "\n", encoding="utf-8")
    done = run_shardpy("import", "--from", "mcp-memory", source, vault, "--json", cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    report = json.loads(done.stdout)  # JSON on stdout, whatever happened
    assert "error" not in report, report


def test_a_string_is_one_observation_and_half_a_character_is_replaced(vault: Path, tmp_path: Path) -> None:
    source = tmp_path / "graph"
    source.mkdir()
    lines = [CASES["string"], CASES["half emoji"]]
    (source / "memory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = run_shardpy(
        "import", "--from", "mcp-memory", source, vault, "--into", "g", "--apply", cwd=tmp_path
    )
    assert done.returncode == 0, done.stdout + done.stderr
    notes = {p.stem: p.read_text(encoding="utf-8") for p in (vault / "g").rglob("*.md")}
    assert "- a string\n" in notes["S"] and "- a\n" not in notes["S"]
    assert "launch \ufffd" in notes["Rocket"]


def test_a_name_that_is_its_own_file_name_keeps_it(vault: Path, tmp_path: Path) -> None:
    """ "A: B?" (no file name: sanitised to "A- B") on an earlier line took A- B.md from the entity
    literally named "A- B", so a [[A- B]] typed in Obsidian opened the wrong entity."""
    source = tmp_path / "graph"
    source.mkdir()
    lines = [
        '{"type":"entity","name":"A: B?","entityType":"t","observations":["sanitised"]}',
        '{"type":"entity","name":"A- B","entityType":"t","observations":["exact"]}',
    ]
    (source / "memory.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ("import", "--from", "mcp-memory", source, vault, "--into", "names", "--apply")
    done = run_shardpy(*args, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "- exact\n" in (vault / "names/A- B.md").read_text(encoding="utf-8")
    assert "- sanitised\n" in (vault / "names/A- B (2).md").read_text(encoding="utf-8")


def test_a_record_nested_past_the_walk_is_imported_as_before(tmp_path: Path) -> None:
    """The lone-surrogate walk recursed into every record: one nested 600 deep (json reads it) was a
    RecursionError out of the scan and the whole import failed (helper-found)."""
    from shardpy.importers.mcp_memory import McpMemoryAdapter
    from shardpy.importers.models import Record

    deep: object = "x"
    for _ in range(600):
        deep = [deep]
    lines = [
        {"type": "entity", "name": "Deep", "entityType": "t", "observations": [deep]},
        {"type": "entity", "name": "Flat", "entityType": "t", "observations": ["fine"]},
    ]
    source = tmp_path / "memory.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    names = {r.name for r in McpMemoryAdapter(source).scan() if isinstance(r, Record)}
    assert {"Deep", "Flat"} <= names
