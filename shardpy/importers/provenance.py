"""The provenance frontmatter an imported note carries, and the link signature in its render key."""

from __future__ import annotations

from collections.abc import Iterable

from shardpy.importers.links import LinkUse
from shardpy.importers.models import Provenance

PROVENANCE_KEYS = ("imported_from", "source_path", "imported_at", "source_hash")
PROVENANCE_NAMESPACE = "shardpy_"


def provenance_items(
    prov: Provenance, source_path: str, source_hash: str, *, source_keys: Iterable[str] = ()
) -> list[tuple[str, str | list[str]]]:
    """The frontmatter shardpy adds to an imported note.

    A source note that already uses one of these keys keeps its own values
    byte for byte: shardpy's provenance then goes under ``shardpy_<key>``.
    """
    clash = not set(PROVENANCE_KEYS).isdisjoint(source_keys)
    prefix = PROVENANCE_NAMESPACE if clash else ""
    values = (prov.imported_from, source_path, prov.imported_at, f"sha256:{source_hash}")
    return [(prefix + key, value) for key, value in zip(PROVENANCE_KEYS, values, strict=True)]


def link_signature(uses: list[LinkUse]) -> str:
    return "\n".join(f"{u.text}\0{u.replacement or ''}" for u in uses)
