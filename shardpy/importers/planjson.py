"""The JSON form of an import plan's rows (``Plan.to_dict`` / ``Plan.json_chunks``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shardpy.importers.models import LinkRow, NoteRow


def note_dict(r: NoteRow) -> dict[str, Any]:
    return {
        "action": r.action,
        "kind": r.kind,
        "type": r.type,
        "name": r.name,
        "source_path": r.source_path,
        "vault_path": r.vault_path,
        "observations_added": r.observations,
        "detail": r.detail,
        "warnings": list(r.warnings),
    }


def link_dict(lr: LinkRow) -> dict[str, Any]:
    return {
        "source_path": lr.source_path,
        "text": lr.text,
        "status": lr.status,
        "target": lr.target,
        "reason": lr.reason,
        "rewritten": lr.rewritten,
    }


def json_array(encode: Callable[[Any], str], items: Iterator[dict[str, Any]]) -> Iterator[str]:
    yield "["
    batch: list[str] = []
    first = True
    for item in items:
        batch.append(encode(item))
        if len(batch) == 1024:
            yield ("\n" if first else ",\n") + ",\n".join(batch)
            first = False
            batch.clear()
    if batch:
        yield ("\n" if first else ",\n") + ",\n".join(batch)
    yield "]"
