"""A shard file refused for nesting says to flatten it, not to stop using
aliases (the alias hint was the only one, issue 24 item 15's follow-up)."""

from __future__ import annotations

from pathlib import Path

from tests.shardkit import Cli, make_shard


def test_a_too_deep_schema_hint_is_about_nesting(tmp_path: Path, cli: Cli) -> None:
    deep = "values:\n  x:\n    type: string\n    default: " + "[" * 100 + "]" * 100 + "\n"
    shard = make_shard(tmp_path / "src", files={"a.md": "a\n"}, schema=deep)
    res = cli.run("install", shard, tmp_path / "v", "--defaults", "--json")
    error = res.json()["error"]
    assert "deep" in error["message"] and "nesting" in error["hint"] and "alias" not in error["hint"], error
