"""Claiming vault paths: each record's target, and the collisions between records and files."""

from __future__ import annotations

import operator

from shardpy.importers.links import VaultIndex
from shardpy.importers.models import Record
from shardpy.plan.importplan import NoteRow
from shardpy.vault.ledger import Ledger


def _join(into: str, folder: str, name: str) -> str:
    return "/".join(p for p in (into, folder, name) if p)


def claim_targets(
    records: list[Record],
    *,
    fmt: str,
    into: str,
    ledger: Ledger,
    vault: VaultIndex,
    known: dict[str, str],
) -> tuple[list[Record], list[NoteRow]]:
    """Give each record its vault path; return (records that own a path, collision rows).

    A record imported before keeps the path it was written to (a later title
    change does not move the user's note). New records take their wanted path
    unless another record of this import, an earlier import of another source,
    or (case-insensitively) another file already holds it. ``known`` is the
    ledger's source path → vault path of this format and folder's records.
    """
    entries: set[int] = set()
    for i, rec in enumerate(records):
        target = known.get(rec.source_path)
        if target is not None:
            entries.add(i)
            rec.target = target
        else:
            ext = ".md" if rec.kind == "note" else ""
            rec.target = _join(into, rec.folder, rec.stem + ext)
    claimed: dict[str, Record] = {}
    sticky: set[str] = set()
    winners: list[Record] = []
    collisions: list[NoteRow] = []
    paths = [rec.source_path for rec in records]
    if entries:
        order = sorted(range(len(records)), key=lambda i: (i not in entries, paths[i]))
    else:  # a first import: the same order by source path alone, with a C-speed key
        order = sorted(range(len(records)), key=paths.__getitem__)
    for i in order:
        rec = records[i]
        key = rec.target.casefold()
        first = claimed.get(key)
        reason = ""
        if first is not None:
            reason = (
                f"collides with {first.source_path} at the same vault path; keeping {first.source_path}"
                + (" (imported there before)" if key in sticky else " (first by source path)")
            )
        elif i not in entries:
            owners = [o for o in ledger.owners(rec.target) if o != (fmt, into, rec.source_path)]
            if owners:
                f, d, s = owners[0]
                reason = f"the vault path holds a note imported from {s} ({f} into {d})"
            else:
                existing = vault.with_path(key)
                if existing:
                    reason = (
                        "the vault path already holds a note this import did not write"
                        if rec.target in existing
                        else f"a note whose path differs only by case exists: {existing[0]}"
                    )
        if reason:
            collisions.append(
                NoteRow(
                    "collision",
                    rec.kind,
                    rec.type,
                    rec.name,
                    rec.source_path,
                    rec.target,
                    0,
                    reason,
                    rec.warnings,
                )
            )
            continue
        claimed[key] = rec
        if i in entries:
            sticky.add(key)
        winners.append(rec)
    winners.sort(key=operator.attrgetter("source_path"))
    return winners, collisions
