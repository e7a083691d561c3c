"""Issue 26, item 19: ``health`` counted the flagship's own ``![[X.base]]`` embeds as broken
links. A link to a file that is not a note (a ``.base``, an image, a PDF) is not broken when the
file exists; one naming a missing file still is, and so is one to a file in a folder the index
never enters (its existence is not disclosed). Driven through the MCP SDK client on a flagship
install whose owner serves ``Home.md`` too."""

from __future__ import annotations

import json
from pathlib import Path

import anyio

from tests.serve.kit import World, connect
from tests.shardkit import run_shardpy


def test_embeds_of_existing_files_are_not_broken(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    done = run_shardpy("install", "--defaults", vault, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    home = (vault / "Home.md").read_text(encoding="utf-8")
    assert "![[Work Dashboard.base]]" in home and (vault / "bases/Work Dashboard.base").is_file()
    manifest_path = vault / "vault-manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["mcp_exposed_roots"] = [*manifest["user_content_roots"], "Home.md"]
    manifest_path.write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    (vault / "brain/attachments").mkdir()
    (vault / "brain/attachments/diagram.png").write_bytes(b"\x89PNG\r\n")
    (vault / ".hidden").mkdir()
    (vault / ".hidden/secret.pdf").write_bytes(b"%PDF-1.4\n")
    (vault / "brain/Pictures.md").write_text(
        "# Pictures\n\n![[diagram.png|300]] ![[brain/attachments/diagram.png]]\n"
        "![[missing.png]] [[secret.pdf]]\n",
        encoding="utf-8",
    )
    repo = tmp_path / "atlas"
    repo.mkdir()
    world = World(tmp_path, vault, tmp_path)

    async def scenario() -> dict[str, object]:
        async with connect(world, cwd=repo) as s:
            return await s.call("health")

    broken = anyio.run(scenario)["broken_links"]
    assert isinstance(broken, dict)
    links = {(b["note"], b["link"]) for b in broken["sample"]}
    assert not {link for _note, link in links if link.endswith(".base")}, links
    assert ("brain/Pictures.md", "missing.png") in links and ("brain/Pictures.md", "secret.pdf") in links
    assert not {link for _note, link in links if "diagram.png" in link}, links
