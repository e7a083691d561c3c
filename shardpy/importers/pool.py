"""Which planning work runs in worker processes, and how many (:mod:`shardpy.workers` runs the processes)."""

from __future__ import annotations

import gc
import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from shardpy.importers.decide import Outcome, Work, pack, plan_record
from shardpy.importers.models import Adapter, Record
from shardpy.plan.importplan import Notice, PlanOptions, Skipped
from shardpy.vault.ledger import Ledger

# The second pass runs in worker processes from this many records on (forking costs ~0.1 s).
PARALLEL_MIN = 2000
CHUNK = 128  # records per unit of work
SCAN_CHUNK = 256  # files per unit of work while reading the source


def scan_source(adapter: Adapter, opts: PlanOptions) -> Iterator[Record | Skipped | Notice]:
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
    from shardpy import workers as parallel

    chunks = _batched(itertools.chain(head, found), SCAN_CHUNK)
    for part in parallel.run_stream(adapter, chunks, workers, _scan_chunk):
        yield from part


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


def _plan_chunk(work: Work, lo: int, hi: int) -> tuple[int, list[Outcome]]:
    return lo, [pack(plan_record(work, work.records[i])) for i in range(lo, hi)]


def plan_all(work: Work) -> Iterator[tuple[int, list[Outcome]]]:
    """Outcomes of every record, in order, chunk by chunk (in worker processes when it pays)."""
    total = len(work.records)
    chunk = CHUNK
    bounds = [(lo, min(lo + chunk, total)) for lo in range(0, total, chunk)]
    workers = _worker_count(work.opts, total, shares_state=True)
    if workers <= 1:
        for lo, hi in bounds:
            yield _plan_chunk(work, lo, hi)
        return
    from shardpy import workers as parallel

    yield from parallel.run_chunks(work, bounds, workers, _plan_chunk, _reopen_ledger)


_INHERITED: list[Ledger] = []


def _reopen_ledger(work: Work) -> None:
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
    from shardpy import workers as parallel

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
