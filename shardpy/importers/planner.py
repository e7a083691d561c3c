"""Source records → a pure import Plan.

Planning runs in two streaming passes so that no note body is held for the
whole run:

1. ``scan``: each adapter reads its source once and yields compact
   ``Record`` rows (names, hashes, the vault path), plus skipped files and
   notices. Vault paths are claimed here: a path kept from an earlier import
   stays with its record; two records on one path (case-insensitively) are a
   collision, first by source path wins.
2. ``build``: each record is read again, its links resolved against every
   record of the import and the vault, and its note rendered; the rendered
   bytes are hashed, compared with the import records and the vault file,
   and given an action. With ``--apply`` the bytes go straight to the run
   journal (``sink``); a dry run keeps only the row.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from shardpy.importers.claim import claim_targets
from shardpy.importers.decide import Outcome, Work
from shardpy.importers.links import Resolver, VaultIndex
from shardpy.importers.models import (
    Adapter,
    NoteRow,
    Plan,
    PlanOptions,
    Progress,
    Provenance,
    Record,
    Step,
    StepSink,
)
from shardpy.importers.pool import plan_all, scan_source
from shardpy.importers.walk import Skipped
from shardpy.plan.actions import WriteKind
from shardpy.vault.ledger import Ledger

SETTLE_EVERY = 4096


@contextmanager
def collector_settled() -> Iterator[Callable[[], None]]:
    """Keep the cyclic collector off the planning state, not off anything else: yields ``settle``.

    Planning builds hundreds of thousands of long-lived, acyclic objects (records,
    link tables, rows), and every full collection walked them all again, hundreds of
    times while they piled up (measured: 1.3 s of a 100,000-note dry run).
    ``settle()`` (``gc.freeze``, constant time) moves everything alive so far out of
    the collector's sight. Reference counting still frees what is dropped, and
    cycles made afterwards (ruamel's YAML loader makes ~90 objects of them per call)
    are still collected, so the collector is never simply turned off. At the end
    everything is handed back (``gc.unfreeze``), into the oldest generation.
    """
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()


def build_plan(
    adapter: Adapter,
    *,
    vault: Path,
    ledger: Ledger,
    opts: PlanOptions,
    sink: StepSink | None = None,
    progress: Progress | None = None,
    merge: Callable[[bytes, bytes, bytes], tuple[str, bytes]] | None = None,
) -> Plan:
    """Plan the import of everything ``adapter`` yields into ``vault``; see the module docstring."""
    with collector_settled() as settle:
        return _build_plan(adapter, vault, ledger, opts, sink, progress, merge, settle)


def _build_plan(
    adapter: Adapter,
    vault: Path,
    ledger: Ledger,
    opts: PlanOptions,
    sink: StepSink | None,
    progress: Progress | None,
    merge: Callable[[bytes, bytes, bytes], tuple[str, bytes]] | None,
    settle: Callable[[], None],
) -> Plan:
    fmt = adapter.format
    plan = Plan(
        fmt,
        opts.source_label,
        str(vault),
        opts.into,
        opts.imported_at,
        opts.on_conflict,
        dry_run=sink is None,
    )
    records: list[Record] = []
    for n, item in enumerate(scan_source(adapter, opts), 1):
        if isinstance(item, Record):
            records.append(item)
        elif isinstance(item, Skipped):
            plan.skipped.append(item)
        else:
            plan.notices.append(item)
        if n % SETTLE_EVERY == 0:
            settle()
        if progress is not None and n % 256 == 0:
            progress("scan", n, None)
    settle()
    known = dict(ledger.keys(fmt, opts.into))
    # Notes this import wrote for records still in the source keep their paths (claim_targets) and
    # are this import's own for link resolution: the vault index needs no entry for them (at
    # 100,000 notes a re-run saves ~35 MB).
    sources = {r.source_path for r in records}
    vindex = VaultIndex.walk(vault, skip={t for s, t in known.items() if s in sources})
    del sources
    winners, collisions = claim_targets(
        records, fmt=fmt, into=opts.into, ledger=ledger, vault=vindex, known=known
    )
    del records
    present = {r.source_path for r in winners} | {c.source_path for c in collisions}
    plan.gone = [(s, t) for s, t in known.items() if s not in present]
    del present, known
    planned = {r.target for r in winners}
    resolver = Resolver(vindex, planned.__contains__)
    for rec in winners:
        resolver.add_record(rec.target, rec.names or (rec.name,), rec.keys, rec.source_path)
    settle()
    prov = Provenance(fmt, opts.imported_at)
    work = Work(adapter, winners, vault, ledger, resolver, prov, opts, sink is not None, merge)
    rows: list[NoteRow] = []
    step_index = 0
    total = len(winners)
    done = 0
    for lo, part in plan_all(work):
        for i, outcome in enumerate(part, lo):
            step_index = absorb(plan, rows, winners[i], outcome, sink, step_index)
        done += len(part)
        if done % SETTLE_EVERY < len(part):  # the rows pile up as the records did
            settle()
        if progress is not None:
            progress("plan", done, total)
    rows.extend(collisions)
    rows.sort(key=lambda r: r.source_path)
    plan.notes = rows
    plan.steps = step_index
    return plan


def absorb(
    plan: Plan, rows: list[NoteRow], rec: Record, outcome: Outcome, sink: StepSink | None, index: int
) -> int:
    """Fold one record's outcome into the plan, in record order (steps are numbered here)."""
    action, observations, detail, statuses, rewritten, links, step = outcome
    for status, n in statuses:
        plan.link_counts[status] = plan.link_counts.get(status, 0) + n
    plan.rewritten_links += rewritten
    plan.links.extend(links)
    row = NoteRow(
        action, rec.kind, rec.type, rec.name, rec.source_path, rec.target, observations, detail, rec.warnings
    )
    if step is not None:
        row.step = index
        if sink is not None:
            pre_sha, new_sha, render_key, base_sha, new, pre, base = step
            sink.add(
                Step(
                    index,
                    cast(WriteKind, action),  # a row has a step only when its action writes (decide._Emit)
                    rec.kind,
                    rec.source_path,
                    rec.target,
                    pre_sha,
                    new_sha,
                    rec.source_hash,
                    render_key,
                    base_sha,
                ),
                new,
                pre,
                base,
            )
        index += 1
    rows.append(row)
    return index
