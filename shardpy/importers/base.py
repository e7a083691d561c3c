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
import hashlib
import itertools
import json
import operator
import os
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from shardpy.importers.ledger import Ledger
from shardpy.importers.links import LinkUse, Resolver, VaultIndex
from shardpy.importers.walk import Skipped

OnConflict = Literal["keep", "theirs", "markers"]
ACTIONS: tuple[str, ...] = ("create", "update", "unchanged", "merge", "conflict", "collision", "error")
# Bumped when the rendering of notes changes, so earlier imports re-render.
RENDER_VERSION = "1"
# The second pass runs in worker processes from this many records on (forking costs ~0.1 s).
PARALLEL_MIN = 2000
CHUNK = 128  # records per unit of work
SCAN_CHUNK = 256  # files per unit of work while reading the source


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(slots=True)
class Record:
    """One source record (a note file, an attachment, an MCP entity), without its body."""

    source_path: str  # key in the import records; shown to the user
    kind: str  # "note" | "attachment"
    type: str | None
    name: str
    stem: str  # wanted file name (without extension for notes)
    folder: str  # wanted folder relative to --into
    source_hash: str
    locator: Any  # adapter data to read the record again (a path, an entity index)
    names: tuple[str, ...] = ()  # link keys of first rank (title, entity name)
    keys: tuple[str, ...] = ()  # link keys of second rank (permalink, file stem, path)
    warnings: tuple[str, ...] = ()
    target: str = ""  # vault path, set when paths are claimed
    renamed: bool = False  # file name differs from the name (the name goes to aliases)
    prepared: Any = None  # adapter data found while reading (basic-memory: observation count, links)

    def __reduce__(self) -> tuple[Callable[..., Record], tuple[Any, ...]]:
        # Records travel from the reading workers by the 100,000: a plain tuple pickles 4x faster
        # than the dataclass default (Python-level __getstate__/__setstate__ for slots).
        return (
            Record,
            (
                self.source_path,
                self.kind,
                self.type,
                self.name,
                self.stem,
                self.folder,
                self.source_hash,
                self.locator,
                self.names,
                self.keys,
                self.warnings,
                self.target,
                self.renamed,
                self.prepared,
            ),
        )


@dataclass(frozen=True, slots=True)
class Notice:
    source_path: str
    message: str


@dataclass(slots=True)
class Provenance:
    imported_from: str
    imported_at: str


@dataclass(slots=True)
class Built:
    """A record rendered for the vault."""

    data: bytes
    observations: list[str]  # observation texts (for the "added" count)
    links: list[LinkUse]
    link_sig: str  # link decisions that shaped ``data`` (part of the render key)

    @property
    def observation_count(self) -> int:
        return len(self.observations)


class Adapter(Protocol):
    format: str

    def scan(self) -> Iterator[Record | Skipped | Notice]: ...

    def build(self, record: Record, resolver: Resolver, prov: Provenance) -> Built: ...

    def observations_of(self, data: bytes) -> list[str]: ...


class SourceChanged(Exception):
    """The source record's bytes changed between the two passes."""


@dataclass(slots=True)
class NoteRow:
    action: str
    kind: str
    type: str | None
    name: str
    source_path: str
    vault_path: str
    observations: int
    detail: str = ""
    warnings: tuple[str, ...] = ()
    step: int | None = None  # index of the journal step that writes it


@dataclass(frozen=True, slots=True)
class LinkRow:
    source_path: str
    text: str
    status: str
    target: str | None
    reason: str
    rewritten: str | None

    def __reduce__(self) -> tuple[type[LinkRow], tuple[Any, ...]]:
        # Rows travel back from second-pass workers by the thousand: a plain tuple pickles
        # and unpickles several times faster than a frozen dataclass's default.
        return (LinkRow, (self.source_path, self.text, self.status, self.target, self.reason, self.rewritten))


@dataclass(slots=True)
class Step:
    """A write the apply stage performs (the bytes travel separately, see ``StepSink``)."""

    index: int
    action: str
    kind: str
    source_path: str
    target: str
    pre_sha: str | None  # what must be at ``target`` before writing (None: nothing)
    new_sha: str
    source_hash: str
    render_key: str
    base_sha: str  # the pristine render, the next merge base


class StepSink(Protocol):
    def add(self, step: Step, new: bytes, pre: bytes | None, base: bytes | None) -> None: ...


@dataclass(slots=True)
class Plan:
    format: str
    source: str
    vault: str
    into: str
    imported_at: str
    on_conflict: str
    dry_run: bool = True
    notes: list[NoteRow] = field(default_factory=list)
    links: list[LinkRow] = field(default_factory=list)
    link_counts: dict[str, int] = field(
        default_factory=lambda: {"resolved": 0, "ambiguous": 0, "unresolved": 0}
    )
    rewritten_links: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    gone: list[tuple[str, str]] = field(default_factory=list)  # (source_path, vault path) no longer in source
    run_id: str | None = None
    steps: int = 0

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(ACTIONS, 0)
        for row in self.notes:
            out[row.action] = out.get(row.action, 0) + 1
        return out

    @property
    def failed(self) -> bool:
        c = self.counts()
        return c["collision"] > 0 or c["error"] > 0

    def summary_line(self) -> str:
        c = self.counts()
        parts = [f"{c[a]} {a}" for a in ACTIONS]
        obs = sum(r.observations for r in self.notes if r.action in ("create", "update", "merge"))
        lc = self.link_counts
        return (
            f"Summary: {len(self.notes)} record(s): " + ", ".join(parts) + f"; {obs} observation(s) added; "
            f"links: {lc['resolved']} resolved ({self.rewritten_links} rewritten), "
            f"{lc['ambiguous']} ambiguous, "
            f"{lc['unresolved']} unresolved; {len(self.skipped)} skipped file(s)"
        )

    def to_dict(self, *, rows: bool = True) -> dict[str, Any]:
        """The plan as ``--json`` prints it (``rows=False``: the notes and links lists left empty)."""
        return {
            "dry_run": self.dry_run,
            "run_id": self.run_id,
            "format": self.format,
            "source": self.source,
            "vault": self.vault,
            "into": self.into,
            "imported_at": self.imported_at,
            "on_conflict": self.on_conflict,
            "notes": [_note_dict(r) for r in self.notes] if rows else [],
            "links": [_link_dict(lr) for lr in self.links] if rows else [],
            "skipped": [{"source_path": s.source_path, "reason": s.reason} for s in self.skipped],
            "notices": [{"source_path": n.source_path, "message": n.message} for n in self.notices],
            "no_longer_in_source": [{"source_path": s, "vault_path": v} for s, v in self.gone],
            "summary": {
                **self.counts(),
                "records": len(self.notes),
                "links": dict(self.link_counts),
                "links_rewritten": self.rewritten_links,
                "skipped": len(self.skipped),
                "observations_added": sum(
                    r.observations for r in self.notes if r.action in ("create", "update", "merge")
                ),
            },
        }

    def json_chunks(self) -> Iterator[str]:
        """``to_dict()`` as JSON text, piece by piece: the notes and links are never all in one object.

        One note or link per line (C-speed encoding); the object equals ``to_dict()``.
        """
        encode = json.JSONEncoder(ensure_ascii=False).encode
        head = self.to_dict(rows=False)
        for i, (key, value) in enumerate(head.items()):
            yield ("{\n" if i == 0 else ",\n") + encode(key) + ": "
            if key == "notes":
                yield from _json_array(encode, map(_note_dict, self.notes))
            elif key == "links":
                yield from _json_array(encode, map(_link_dict, self.links))
            else:
                yield encode(value)
        yield "\n}\n"


def _note_dict(r: NoteRow) -> dict[str, Any]:
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


def _link_dict(lr: LinkRow) -> dict[str, Any]:
    return {
        "source_path": lr.source_path,
        "text": lr.text,
        "status": lr.status,
        "target": lr.target,
        "reason": lr.reason,
        "rewritten": lr.rewritten,
    }


def _json_array(encode: Callable[[Any], str], items: Iterator[dict[str, Any]]) -> Iterator[str]:
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


@dataclass(slots=True)
class PlanOptions:
    into: str
    imported_at: str
    on_conflict: str = "keep"
    keep_resolved_links: bool = False
    source_label: str = ""
    workers: int | None = None  # processes for the second pass (None: decide by size and CPUs)


Progress = Callable[[str, int, int | None], None]


def _read_vault_file(vault: Path, rel: str) -> tuple[str, bytes | None, str]:
    """("absent"|"file"|"bad", bytes, reason) for a vault path, never following links."""
    path = f"{vault}/{rel}"
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return "absent", None, ""
    except NotADirectoryError:
        return "bad", None, "a parent of this path is a file"
    except OSError as exc:
        return "bad", None, f"cannot inspect: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        return "bad", None, "the vault path is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "bad", None, "the vault path is not a regular file"
    try:
        with open(path, "rb") as fh:
            return "file", fh.read(), ""
    except OSError as exc:
        return "bad", None, f"unreadable: {exc.strerror or exc}"


def _parents_ok(vault: Path, rel: str, cache: dict[str, str]) -> str:
    """Reason a write to ``rel`` would be refused because of its parents, or ''.

    ``cache`` (folder → reason) spares the lstat calls for the many notes of one
    folder while planning; apply checks every parent again when it writes.
    """
    folder = rel.rpartition("/")[0]
    found = cache.get(folder)
    if found is None:
        found = cache[folder] = _parents_problem(vault, rel)
    return found


def _parents_problem(vault: Path, rel: str) -> str:
    current = vault
    parts = rel.split("/")
    for part in parts[:-1]:
        current = current / part
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            return ""
        if stat.S_ISLNK(st.st_mode):
            return f"{current.relative_to(vault).as_posix()} is a symbolic link"
        if not stat.S_ISDIR(st.st_mode):
            return f"{current.relative_to(vault).as_posix()} is not a folder"
    return ""


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


# Records (or rows) made between two moves of the planning state out of the collector's sight.
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
    for n, item in enumerate(_scan(adapter, opts), 1):
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
    work = _Work(adapter, winners, vault, ledger, resolver, prov, opts, sink is not None, merge)
    rows: list[NoteRow] = []
    step_index = 0
    total = len(winners)
    done = 0
    for lo, part in _plan_all(work):
        for i, outcome in enumerate(part, lo):
            step_index = _absorb(plan, rows, winners[i], outcome, sink, step_index)
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


def _scan(adapter: Adapter, opts: PlanOptions) -> Iterator[Record | Skipped | Notice]:
    """``adapter.scan()``, with the per-file reads in worker processes when there are many files.

    The walk goes on in this process while the workers read what it found so
    far (the first ``PARALLEL_MIN`` files are walked first, to decide whether
    workers pay off at all).
    """
    walk = getattr(adapter, "walk", None)
    read_found = getattr(adapter, "read_found", None)
    if walk is None or read_found is None:
        yield from adapter.scan()
        return
    found = iter(walk())
    head = list(itertools.islice(found, PARALLEL_MIN))
    workers = _worker_count(opts, len(head) + (1 if len(head) == PARALLEL_MIN else 0))
    if workers <= 1:
        yield from read_all(read_found, itertools.chain(head, found))
        return
    from shardpy.importers import parallel

    chunks = _batched(itertools.chain(head, found), SCAN_CHUNK)
    for part in parallel.run_stream(adapter, chunks, workers, _scan_chunk):
        yield from part


def _batched(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    while batch := list(itertools.islice(items, size)):
        yield batch


def _scan_chunk(adapter: Any, items: list[Any]) -> list[Record | Skipped | Notice]:
    return list(read_all(adapter.read_found, items))


def read_all(
    read_found: Callable[[Any], list[Record | Skipped | Notice]], items: Iterable[Any]
) -> Iterator[Record | Skipped | Notice]:
    """What an adapter's walk found, each file read (a walk's own ``Skipped`` passes through)."""
    for item in items:
        if isinstance(item, Skipped):
            yield item
        else:
            yield from read_found(item)


# What a step writes, as the second pass finds it (numbered later, in record order):
# (pre_sha, new_sha, render_key, base_sha, new bytes, pre bytes, base bytes or None: the new ones).
StepOutcome = tuple[str | None, str, str, str, bytes, bytes | None, bytes | None]


@dataclass(slots=True)
class Planned:
    """One record's outcome in the second pass (computed here or in a worker process)."""

    row: NoteRow
    links: list[LinkRow]  # rows for the plan's link table
    statuses: dict[str, int]  # link status → count
    rewritten: int
    # None: no step; True: a dry run's step (only counted); else what the step writes (StepOutcome)
    step: StepOutcome | bool | None = None


@dataclass(slots=True)
class _Work:
    adapter: Adapter
    records: list[Record]
    vault: Path
    ledger: Ledger
    resolver: Resolver
    prov: Provenance
    opts: PlanOptions
    keep_bytes: bool
    merge: Callable[[bytes, bytes, bytes], tuple[str, bytes]] | None
    folders: dict[str, str] = field(default_factory=dict)


# A record's outcome as it travels from a worker: only what the parent's Record does not hold.
# (action, observations, detail, ((link status, count), ...), rewritten links, link rows, step)
# where step is Planned.step.
Outcome = tuple[str, int, str, tuple[tuple[str, int], ...], int, list[LinkRow], Any]


def _pack(planned: Planned) -> Outcome:
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


def _absorb(
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
                    action,
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


def _plan_chunk(work: _Work, lo: int, hi: int) -> tuple[int, list[Outcome]]:
    return lo, [_pack(_plan_record(work, work.records[i])) for i in range(lo, hi)]


def _plan_all(work: _Work) -> Iterator[tuple[int, list[Outcome]]]:
    """Outcomes of every record, in order, chunk by chunk (in worker processes when it pays)."""
    total = len(work.records)
    chunk = CHUNK
    bounds = [(lo, min(lo + chunk, total)) for lo in range(0, total, chunk)]
    workers = _worker_count(work.opts, total, shares_state=True)
    if workers <= 1:
        for lo, hi in bounds:
            yield _plan_chunk(work, lo, hi)
        return
    from shardpy.importers import parallel

    yield from parallel.run_chunks(work, bounds, workers, _plan_chunk, _reopen_ledger)


_INHERITED: list[Ledger] = []


def _reopen_ledger(work: _Work) -> None:
    """In a worker process: an own read-only connection (a parent's sqlite connection is not fork-safe).

    The inherited one is kept referenced, never closed here: closing it would act on the parent's file.
    """
    _INHERITED.append(work.ledger)
    work.ledger = Ledger.open_readonly(work.vault)


WORKERS_ENV = "SHARDPY_IMPORT_WORKERS"  # a number of worker processes; 1 keeps planning in one process


MEMORY_ENV = "SHARDPY_IMPORT_MEMORY_MB"  # memory budget of a planning run (default MEMORY_BUDGET_MB)
MEMORY_BUDGET_MB = 300
# A forked second-pass worker ends up owning about this share of its parent's memory: it touches
# (and so copies) the records and the link tables it reads (measured: 0.55 at 100,000 notes).
WORKER_COPY = 0.6


def _worker_count(opts: PlanOptions, records: int, *, shares_state: bool = False) -> int:
    """Worker processes for a pass over ``records`` items (1: stay in this process).

    ``shares_state``: the workers inherit this process's planning state, so
    each costs about ``WORKER_COPY`` of its memory; only as many are started
    as keep the estimated total within the memory budget (speed is traded
    for memory: at 100,000 notes the second pass stays in one process).
    """
    if opts.workers is not None:
        return opts.workers
    forced = os.environ.get(WORKERS_ENV, "")
    if forced.isdigit() and int(forced) > 0:
        return int(forced)
    if records < PARALLEL_MIN:
        return 1
    from shardpy.importers import parallel

    wanted = parallel.available_workers()
    if not shares_state or wanted <= 1:
        return wanted
    rss = parallel.resident_bytes()
    if rss is None:
        return wanted
    budget_mb = os.environ.get(MEMORY_ENV, "")
    budget = (int(budget_mb) if budget_mb.isdigit() else MEMORY_BUDGET_MB) * 1024 * 1024
    for workers in range(wanted, 1, -1):
        if rss * (1 + WORKER_COPY * workers) <= budget:
            return workers
    return 1


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


def _plan_record(work: _Work, rec: Record) -> Planned:
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


class BuiltNote(Protocol):
    """A record rendered for the vault, at once (``Built``) or on demand (an adapter's ``prepare``)."""

    @property
    def data(self) -> bytes: ...

    @property
    def observations(self) -> list[str]: ...

    @property
    def observation_count(self) -> int: ...

    @property
    def links(self) -> list[LinkUse]: ...

    @property
    def link_sig(self) -> str: ...


def _decide(work: _Work, rec: Record, built: BuiltNote, planned: Planned) -> None:
    """The record's action; ``built.data`` and ``built.observations`` are used only where needed."""
    adapter, vault, ledger, opts, merge = work.adapter, work.vault, work.ledger, work.opts, work.merge
    fmt = adapter.format
    row = planned.row
    _count_links(planned, rec, built.links, opts)
    parent_problem = _parents_ok(vault, rec.target, work.folders)
    if parent_problem:
        row.detail = f"cannot write here: {parent_problem}"
        return
    state, current, why = _read_vault_file(vault, rec.target)
    if state == "bad":
        row.detail = why
        return
    entry = ledger.get(fmt, opts.into, rec.source_path)
    # Needed only to compare with an earlier import or to write a step: a dry run of new notes
    # never hashes it (nor builds the link signature it covers).
    render_key = "" if entry is None and not work.keep_bytes else _render_key(fmt, rec, built.link_sig)
    user_sha = None if current is None or entry is None else sha256(current)

    def emit(action: str, data: bytes | None, pre: bytes | None, base: bytes | None, detail: str) -> None:
        """A step writing ``data`` (None: the rendered note) with merge base ``base`` (None: the same)."""
        row.action = action
        row.detail = detail
        if not work.keep_bytes:
            planned.step = True  # a dry run only counts the step: nothing is rendered for it
            return
        data = built.data if data is None else data
        base = built.data if base is None else base
        new_sha = sha256(data)
        planned.step = (
            None if pre is None else user_sha if pre is current else sha256(pre),
            new_sha,
            render_key,
            new_sha if base is data else sha256(base),
            data,
            pre,
            base if base != data else None,
        )

    if entry is None:
        if current is not None:  # claim_targets let it through only when absent; the vault moved under us
            row.action = "collision"
            row.detail = "the vault path already holds a note this import did not write"
            return
        row.observations = built.observation_count
        emit("create", None, None, None, "")
        return

    if current is None:
        if entry.render_key == render_key:
            row.action = "unchanged"
            row.detail = "deleted in the vault; not recreated"
            return
        if opts.on_conflict == "keep":
            row.action = "conflict"
            row.detail = (
                "deleted in the vault, changed in the source: kept deleted (--on-conflict theirs: recreate)"
            )
            return
        row.observations = built.observation_count
        emit("conflict", None, None, None, "deleted in the vault, changed in the source: recreated")
        return
    if entry.render_key == render_key:
        row.action = "unchanged"
        if user_sha != entry.written_sha and user_sha != entry.base_sha:
            row.detail = "edited in the vault; your edits are kept"
        return
    base = ledger.base(fmt, opts.into, rec.source_path)
    old_obs = adapter.observations_of(base) if base is not None else []
    built = _superseding(adapter, base, built, work.prov)
    row.observations = _added(old_obs, built.observations)
    if user_sha == entry.base_sha:
        emit("update", None, current, None, "changed in the source")
        return
    if user_sha == sha256(built.data):
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
    emit: Callable[[str, bytes | None, bytes | None, bytes | None, str], None],
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
