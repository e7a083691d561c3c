"""A running server and a manifest that changes under it (a helper's probe).

A `git pull` can bring a manifest that withholds a note (`mcp_never_expose`) while a session's
server runs. The server read the manifest once: it went on serving the note's body (expand,
resources) and its search hits until a restart. It now reads the manifest again when the file
changed, before the next call.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.serve.kit import MANIFEST, build_world, shared


def test_a_note_the_new_manifest_withholds_is_no_longer_served(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    with shared(world, cwd=world.repos["atlas"]) as s:
        assert s.call("expand", {"note": "brain/Gotchas.md"})["path"] == "brain/Gotchas.md"
        assert any(h["path"] == "brain/Gotchas.md" for h in s.call("search", {"query": "Caches lie"})["hits"])
        withheld = {**MANIFEST, "mcp_never_expose": [*MANIFEST["mcp_never_expose"], "Gotchas.md"]}
        (world.vault / "vault-manifest.json").write_text(json.dumps(withheld), encoding="utf-8")
        with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
            s.call("expand", {"note": "brain/Gotchas.md"})
        hits = s.call("search", {"query": "Caches lie"})["hits"]
        assert all(h["path"] != "brain/Gotchas.md" for h in hits), hits
