"""One record's fate in the second pass: render, compare with the ledger and the vault, pick an action."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shardpy.fsutil import sha256_bytes as sha256
from shardpy.importers.links import LinkUse, Resolver
from shardpy.importers.models import (
    RENDER_VERSION,
    Adapter,
    Built,
    BuiltNote,
    Provenance,
    Record,
    SourceChanged,
)
from shardpy.importers.vaultread import parents_ok, read_vault_file
from shardpy.plan.actions import ImportAction, WriteKind
from shardpy.plan.importplan import LinkRow, NoteRow, PlanOptions
from shardpy.vault.ledger import Ledger

# How much of a step the second pass makes (issue 27: planning keeps no bytes, apply makes them):
# "count" (a dry run: that there is one), "keys" (a plan for --apply: the step's identity, StepKey)
# or "bytes" (the apply stage, importers/steps.py: everything the journal needs, StepOutcome).
StepDetail = Literal["count", "keys", "bytes"]
# A planned step's identity: (pre_sha, render_key). The bytes a step writes follow from it: the
# render key covers every input of the render, pre_sha the vault file merged with or replaced.
StepKey = tuple[str | None, str]
# What a step writes, as the apply stage makes it (numbered by the plan, in record order):
# (pre_sha, new_sha, render_key, base_sha, new bytes, pre bytes, base bytes or None: the new ones).
StepOutcome = tuple[str | None, str, str, str, bytes, bytes | None, bytes | None]


@dataclass(slots=True)
class Planned:
    """One record's outcome in the second pass (computed here or in a worker process)."""

    row: NoteRow
    links: list[LinkRow]  # rows for the plan's link table
    statuses: dict[str, int]  # link status → count
    rewritten: int
    # None: no step; True: a dry run's step (only counted); else its StepKey or StepOutcome (StepDetail)
    step: StepOutcome | StepKey | bool | None = None


@dataclass(slots=True)
class Work:
    adapter: Adapter
    records: list[Record]
    vault: Path
    ledger: Ledger
    resolver: Resolver
    prov: Provenance
    opts: PlanOptions
    detail: StepDetail
    merge: Callable[[bytes, bytes, bytes], tuple[str, bytes]] | None
    folders: dict[str, str] = field(default_factory=dict)


# A record's outcome as it travels from a worker: only what the parent's Record does not hold.
# (action, observations, detail, ((link status, count), ...), rewritten links, link rows, step)
# where step is Planned.step.
Outcome = tuple[ImportAction, int, str, tuple[tuple[str, int], ...], int, list[LinkRow], Any]


def pack(planned: Planned) -> Outcome:
    row = planned.row
    return (
        row.action,
        row.observations,
        row.detail,
        tuple(planned.statuses.items()),
        planned.rewritten,
        planned.links,
        planned.step,
    )


def _render_key(fmt: str, rec: Record, link_sig: str) -> str:
    """Equal keys: the import would write the same note (the run's instant aside)."""
    return sha256(f"{RENDER_VERSION}\0{fmt}\0{rec.source_hash}\0{rec.target}\0{link_sig}".encode())


def _count_links(planned: Planned, rec: Record, uses: list[LinkUse], opts: PlanOptions) -> None:
    statuses = planned.statuses
    for use in uses:
        statuses[use.status] = statuses.get(use.status, 0) + 1
        if use.replacement is not None:
            planned.rewritten += 1
        if use.status != "resolved" or opts.keep_resolved_links:
            planned.links.append(
                LinkRow(rec.source_path, use.text, use.status, use.target, use.reason, use.replacement)
            )


def plan_record(work: Work, rec: Record) -> Planned:
    row = NoteRow("error", rec.kind, rec.type, rec.name, rec.source_path, rec.target, 0, "", rec.warnings)
    planned = Planned(row, [], {}, 0)
    prepare = getattr(work.adapter, "prepare", None)
    try:
        built: BuiltNote | None = prepare(rec, work.resolver, work.prov) if prepare is not None else None
        if built is None:
            built = work.adapter.build(rec, work.resolver, work.prov)
        _decide(work, rec, built, planned)
    except (SourceChanged, OSError) as exc:
        # Read lazily or not, the record is an error and nothing of it counts.
        planned = Planned(row, [], {}, 0)
        row.action = "error"
        row.observations = 0
        if isinstance(exc, SourceChanged):
            row.detail = f"the source changed while planning: {exc}"
        else:
            row.detail = f"cannot read the source: {exc.strerror or exc}"
    return planned


def _decide(work: Work, rec: Record, built: BuiltNote, planned: Planned) -> None:
    """The record's action; ``built.data`` and ``built.observations`` are used only where needed."""
    vault, opts, fmt = work.vault, work.opts, work.adapter.format
    row = planned.row
    if work.detail != "bytes":  # the apply stage makes only the steps: the plan has the links
        _count_links(planned, rec, built.links, opts)
    parent_problem = parents_ok(vault, rec.target, work.folders)
    if parent_problem:
        row.detail = f"cannot write here: {parent_problem}"
        return
    state, current, why = read_vault_file(vault, rec.target)
    if state == "bad":
        row.detail = why
        return
    entry = work.ledger.get(fmt, opts.into, rec.source_path)
    # Needed only to compare with an earlier import or for a step's identity: a dry run of new
    # notes never hashes it (nor builds the link signature it covers).
    counting = entry is None and work.detail == "count"
    render_key = "" if counting else _render_key(fmt, rec, built.link_sig)
    user_sha = None if current is None or entry is None else sha256(current)
    emit = _Emit(work, planned, built, render_key, current, user_sha)
    if entry is None:
        if current is not None:  # claim_targets let it through only when absent; the vault moved under us
            row.action = "collision"
            row.detail = "the vault path already holds a note this import did not write"
            return
        row.observations = built.observation_count
        emit("create", None, None, None, "")
    elif current is None:
        _decide_deleted(work, built, planned, entry.render_key == render_key, emit)
    elif entry.render_key == render_key:
        row.action = "unchanged"
        if user_sha != entry.written_sha and user_sha != entry.base_sha:
            row.detail = "edited in the vault; your edits are kept"
    else:
        _decide_changed(work, rec, built, planned, current, user_sha == entry.base_sha, emit)


class _Emit:
    """Makes a record's step: writing ``data`` (None: the rendered note) with merge base ``base``."""

    def __init__(
        self,
        work: Work,
        planned: Planned,
        built: BuiltNote,
        render_key: str,
        current: bytes | None,
        user_sha: str | None,
    ) -> None:
        self.work, self.planned, self.built = work, planned, built
        self.render_key, self.current, self.user_sha = render_key, current, user_sha

    def __call__(
        self, action: WriteKind, data: bytes | None, pre: bytes | None, base: bytes | None, detail: str
    ) -> None:
        planned = self.planned
        planned.row.action = action
        planned.row.detail = detail
        mode = self.work.detail
        if mode == "count":
            planned.step = True  # a dry run only counts the step: nothing is rendered for it
            return
        pre_sha = None if pre is None else self.user_sha if pre is self.current else sha256(pre)
        if mode == "keys":
            planned.step = (pre_sha, self.render_key)  # a new note is not rendered for its plan
            return
        data = self.built.data if data is None else data
        base = self.built.data if base is None else base
        new_sha = sha256(data)
        planned.step = (
            pre_sha,
            new_sha,
            self.render_key,
            new_sha if base is data else sha256(base),
            data,
            pre,
            base if base != data else None,
        )


def _decide_deleted(work: Work, built: BuiltNote, planned: Planned, same_render: bool, emit: _Emit) -> None:
    """Imported before, deleted in the vault since."""
    row = planned.row
    if same_render:
        row.action = "unchanged"
        row.detail = "deleted in the vault; not recreated"
        return
    if work.opts.on_conflict == "keep":
        row.action = "conflict"
        row.detail = (
            "deleted in the vault, changed in the source: kept deleted (--on-conflict theirs: recreate)"
        )
        return
    row.observations = built.observation_count
    emit("conflict", None, None, None, "deleted in the vault, changed in the source: recreated")


def _decide_changed(
    work: Work,
    rec: Record,
    built: BuiltNote,
    planned: Planned,
    current: bytes,
    user_untouched: bool,
    emit: _Emit,
) -> None:
    """Imported before and changed in the source: update, merge or conflict with the vault's copy."""
    adapter, opts, merge, row = work.adapter, work.opts, work.merge, planned.row
    base = work.ledger.base(adapter.format, opts.into, rec.source_path)
    old_obs = adapter.observations_of(base) if base is not None else []
    built = _superseding(adapter, base, built, work.prov)
    emit.built = built
    row.observations = _added(old_obs, built.observations)
    if user_untouched:
        emit("update", None, current, None, "changed in the source")
        return
    if emit.user_sha == sha256(built.data):
        emit("update", None, current, None, "the vault already has the new version")
        return
    # Changed on both sides.
    if rec.kind != "note" or base is None or merge is None:
        reason = "changed in the source and in the vault" + (
            "" if merge is not None or rec.kind != "note" else " (three-way merge unavailable)"
        )
        _conflict(row, current, reason, opts, emit)
        return
    kind, merged = merge(base, current, built.data)
    if kind == "clean":
        emit("merge", merged, current, None, "changed in the source and in the vault: merged cleanly")
        return
    if kind == "conflict" and opts.on_conflict == "markers":
        emit("conflict", merged, current, None, "conflicting edits: conflict markers written")
        return
    _conflict(row, current, "conflicting edits in the source and in the vault", opts, emit)


def _superseding(adapter: Adapter, base: bytes | None, built: BuiltNote, prov: Provenance) -> BuiltNote:
    """The new rendering with the keyed observations the source changed kept under ``## Superseded``
    (an adapter with a keyed-observation convention says how), instead of a silent text merge."""
    supersede = getattr(adapter, "supersede", None)
    if supersede is None or base is None:
        return built
    data: bytes = supersede(base, built.data, prov.imported_at[:10])
    return built if data == built.data else Built(data, built.observations, built.links, built.link_sig)


def _conflict(
    row: NoteRow,
    current: bytes,
    reason: str,
    opts: PlanOptions,
    emit: _Emit,
) -> None:
    if opts.on_conflict == "theirs":
        emit("conflict", None, current, None, f"{reason}: replaced by the import (your version is backed up)")
        return
    row.action = "conflict"
    row.detail = f"{reason}: your note is kept (--on-conflict theirs|markers to change)"


def _added(old: list[str], new: list[str]) -> int:
    pool: dict[str, int] = {}
    for o in old:
        pool[o] = pool.get(o, 0) + 1
    added = 0
    for o in new:
        if pool.get(o, 0) > 0:
            pool[o] -= 1
        else:
            added += 1
    return added
