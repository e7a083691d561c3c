"""Item 9: adopting a clone of a shard, the clone's raw templates (`.mcp.json.njk`)
are its form of the rendered files: not "deleted by the user", rendered and
written, and the raw template does not stay behind as a user file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.shardkit import Cli, make_shard

TEMPLATE = '{"name": "{{ user_name }}"}\n'
SCHEMA = {"values": {"user_name": {"type": "string", "default": "Ada", "message": "Name"}}}


@pytest.mark.parametrize("mode", ["merge", "keep-mine"])
def test_a_clones_template_maps_to_its_rendered_file(tmp_path: Path, cli: Cli, mode: str) -> None:
    shard = make_shard(
        tmp_path / "shard", schema=SCHEMA, files={".mcp.json.njk": TEMPLATE, "Home.md": "# Home\n"}
    )
    clone = tmp_path / "clone"
    shutil.copytree(shard, clone, ignore=shutil.ignore_patterns(".shardmind"))
    (clone / "mine.md").write_text("my note\n")
    res = cli.run("adopt", shard, "--mode", mode, "--yes", "--defaults", "--json", cwd=clone)
    assert res.exit_code == 0, res.output
    out = res.json()
    assert out["templates_rendered"] == {".mcp.json.njk": ".mcp.json"}
    files = {f["path"]: f for f in out["files"]}
    assert files.get(".mcp.json", {}).get("action") not in ("missing", "gone")
    assert "deleted by the user" not in res.stdout
    assert (clone / ".mcp.json").read_text() == '{"name": "Ada"}\n'
    assert not (clone / ".mcp.json.njk").exists()
    assert (clone / "mine.md").read_text() == "my note\n"
    status = cli.run("status", "--json", cwd=clone).json()
    assert status["counts"]["missing"] == 0 and status["counts"]["modified"] == 0
