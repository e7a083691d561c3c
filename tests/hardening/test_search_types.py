"""Issue 26, item 17 (last part): an unknown `--type` says so and lists the
types the vault has, instead of a bare "No notes match"."""

from __future__ import annotations

import json
from pathlib import Path

from tests.shardkit import run_shardpy


def test_an_unknown_type_lists_the_known_ones(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    (vault / "notes" / "a.md").write_text("---\ntype: decision\n---\n# A\n\nzephyr\n")
    (vault / "notes" / "b.md").write_text("---\ntype: person\n---\n# B\n\nzephyr\n")
    proc = run_shardpy("search", "zephyr", "--vault", vault, "--type", "decisoin", "--json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["hits"] == []
    assert any("'decisoin'" in n and "decision, person" in n for n in result["notices"]), result["notices"]
    plain = run_shardpy("search", "zephyr", "--vault", vault, "--type", "decisoin", cwd=tmp_path)
    assert "decision, person" in plain.stdout
    known = run_shardpy("search", "zephyr", "--vault", vault, "--type", "decision", "--json", cwd=tmp_path)
    assert [h["path"] for h in json.loads(known.stdout)["hits"]] == ["notes/a.md"]
    assert not any("no note has the type" in n for n in json.loads(known.stdout)["notices"])
