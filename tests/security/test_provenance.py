"""Issue 11, medium: a source note's own `imported_from` / `source_path` are kept byte for byte;
shardpy's provenance goes under its namespace beside them."""

from __future__ import annotations

from pathlib import Path

from shardpy.notes.frontmatter import split_frontmatter
from tests.importers.helpers import do_import

NOTE = (
    "---\ntitle: Trip\ntype: note\nimported_from:   'evernote'   # my own tool\n"
    'source_path: "Notebooks/Trip.enex"\n---\n\n# Trip\n\nbody\n'
)


def test_source_provenance_keys_are_kept_byte_for_byte(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "Trip.md").write_text(NOTE)
    vault = tmp_path / "vault"
    vault.mkdir()
    out = do_import("basic-memory", source, vault, apply=True)
    [row] = out.plan.notes
    text = (vault / row.vault_path).read_text()
    assert "imported_from:   'evernote'   # my own tool\n" in text
    assert 'source_path: "Notebooks/Trip.enex"\n' in text
    data = split_frontmatter(text).data
    assert data["imported_from"] == "evernote" and data["source_path"] == "Notebooks/Trip.enex"
    assert data["shardpy_imported_from"] == "basic-memory"
    assert data["shardpy_source_path"] == "Trip.md"
    assert str(data["shardpy_source_hash"]).startswith("sha256:")
