"""Source records → a pure import Plan (``plan/importplan.py``): planning writes nothing.

Planning runs in two streaming passes so that no note body is held for the
whole run:

1. ``scan``: each adapter reads its source once and yields compact
   ``Record`` rows (names, hashes, the vault path), plus skipped files and
   notices. Vault paths are claimed here: a path kept from an earlier import
   stays with its record; two records on one path (case-insensitively) are a
   collision, first by source path wins.
2. ``build``: each record's links are resolved against every record of the
   import and the vault, compared with the import records and the vault file,
   and given an action (``decide.py``; a note is read again and rendered only
   where the decision needs its bytes). A plan for ``--apply``
   (``for_apply``) also keeps each step's identity (``NoteRow.pre_sha``,
   ``render_key``) and, in ``Plan.writes``, what makes the steps' bytes
   again once the run's journal exists (``steps.py``); a dry run keeps only
   the row. Nothing here writes a file or a journal row (issue 27: planning
   ends before the first journal write; tests/importers/test_pure_planning.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from shardpy.importers.claim import claim_targets
from shardpy.importers.decide import Outcome, StepDetail, Work
from shardpy.importers.links import Resolver, VaultIndex
from shardpy.importers.models import Adapter, Provenance, Record
from shardpy.importers.pool import collector_settled, plan_all, scan_source
from shardpy.importers.steps import Replay
from shardpy.plan.importplan import NoteRow, Plan, PlanOptions, Progress, Skipped
from shardpy.vault.ledger import Ledger

SETTLE_EVERY = 4096


def build_plan(
    adapter: Adapter,
    *,
    vault: Path,
    ledger: Ledger,
    opts: PlanOptions,
    progress: Progress | None = None,
    merge: Callable[[bytes, bytes, bytes], tuple[str, bytes]] | None = None,
    for_apply: bool = False,
) -> Plan:
    """Plan the import of everything ``adapter`` yields into ``vault``; see the module docstring.

    ``for_apply``: a plan ``--apply`` runs; its ``writes`` reads ``ledger`` again, so the caller
    keeps it open until the steps are made.
    """
    with collector_settled() as settle:
        return _build_plan(adapter, vault, ledger, opts, progress, merge, settle, for_apply)


def _build_plan(
    adapter: Adapter,
    vault: Path,
    ledger: Ledger,
    opts: PlanOptions,
    progress: Progress | None,
    merge: Callable[[bytes, bytes, bytes], tuple[str, bytes]] | None,
    settle: Callable[[], None],
    for_apply: bool,
) -> Plan:
    fmt = adapter.format
    plan = Plan(
        fmt,
        opts.source_label,
        str(vault),
        opts.into,
        opts.imported_at,
        opts.on_conflict,
        dry_run=not for_apply,
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
    detail: StepDetail = "keys" if for_apply else "count"
    work = Work(adapter, winners, vault, ledger, resolver, prov, opts, detail, merge)
    rows = _second_pass(plan, work, progress, settle)
    if for_apply and plan.steps:
        # What makes the steps' bytes again once the journal exists: the same pass over the records
        # with a step (rows[i] is winners[i]'s row until the collisions join below).
        stepped = [i for i, row in enumerate(rows) if row.step is not None]
        again = replace(work, records=[winners[i] for i in stepped], detail="bytes", folders={})
        plan.writes = Replay(again, [rows[i] for i in stepped])
    rows.extend(collisions)
    rows.sort(key=lambda r: r.source_path)
    plan.notes = rows
    return plan


def _second_pass(
    plan: Plan, work: Work, progress: Progress | None, settle: Callable[[], None]
) -> list[NoteRow]:
    """Every record's row, in record order (``work.records``), its outcome folded into ``plan``."""
    rows: list[NoteRow] = []
    records = work.records
    total = len(records)
    done = 0
    for lo, part in plan_all(work):
        for i, outcome in enumerate(part, lo):
            rows.append(absorb(plan, records[i], outcome))
        done += len(part)
        if done % SETTLE_EVERY < len(part):  # the rows pile up as the records did
            settle()
        if progress is not None:
            progress("plan", done, total)
    return rows


def absorb(plan: Plan, rec: Record, outcome: Outcome) -> NoteRow:
    """One record's outcome folded into the plan, in record order: its row (steps are numbered here)."""
    action, observations, detail, statuses, rewritten, links, step = outcome
    for status, n in statuses:
        plan.link_counts[status] = plan.link_counts.get(status, 0) + n
    plan.rewritten_links += rewritten
    plan.links.extend(links)
    row = NoteRow(
        action, rec.kind, rec.type, rec.name, rec.source_path, rec.target, observations, detail, rec.warnings
    )
    if step is not None:
        row.step = plan.steps
        plan.steps += 1
        if isinstance(step, tuple):  # a plan for --apply: the step's identity (decide.StepKey)
            row.pre_sha, row.render_key = step[0], step[1]
    return row
