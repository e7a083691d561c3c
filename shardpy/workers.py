"""Forked worker processes (Linux only, fork start method): shared infrastructure.

Not a feature's module (issue 25: no reader depends on a feature package for
infrastructure): the import planner (``importers/pool.py`` decides which of
its work runs here, and how many workers), the index's cold build
(``index/build.py``) and its embedding of many sections (``index/vectors.py``) use it.

``run_stream``: payloads produced as the caller goes (an import's walked
files, the index's batches of notes) go to workers forked before any
planning state exists; the walk overlaps with the reading. ``run_chunks``:
chunks of work go to workers that inherit the caller's state (an import's
records, link resolver, vault index) copy-on-write. Results come back in
order, so a parallel run is the same, step for step, as a serial one
(tests/importers/test_parallel.py).

Forked workers must not keep what belongs to the parent alive: they close
inherited folder descriptors (the vault lock is an ``flock`` on the vault
folder; a worker outliving a killed parent would otherwise keep the vault
locked) and ask the kernel to kill them when the parent dies.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

MAX_WORKERS = 4
T = TypeVar("T")
W = TypeVar("W")

_STATE: tuple[Any, Callable[..., Any], Callable[[Any], None]] | None = None


def available_workers() -> int:
    """Worker processes worth starting here (1 means: stay in this process)."""
    if not sys.platform.startswith("linux"):
        return 1  # fork is the only start method that shares the planning state cheaply
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_WORKERS))


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux), or None."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


def _no_setup(work: object) -> None:
    return None


def run_chunks(
    work: W,
    bounds: list[tuple[int, int]],
    workers: int,
    fn: Callable[[W, int, int], T],
    setup: Callable[[W], None] = _no_setup,
) -> Iterator[T]:
    """``fn(work, lo, hi)`` for each bound, in forked workers; results in order. ``setup(work)``
    runs once in each worker first."""
    return _in_pool((work, fn, setup), _run, iter(bounds), workers)


def run_stream(work: W, payloads: Iterator[Any], workers: int, fn: Callable[[W, Any], T]) -> Iterator[T]:
    """``fn(work, payload)`` for each payload, in forked workers; results in order.

    The payloads are produced (and pickled to the workers) while earlier ones
    are being processed: the source walk overlaps with the reading.
    """
    return _in_pool((work, fn, _no_setup), _run_payload, payloads, workers)


def _in_pool(
    state: tuple[Any, Callable[..., Any], Callable[[Any], None]],
    task: Callable[[Any], Any],
    items: Iterator[Any],
    workers: int,
) -> Iterator[Any]:
    """``task(item)`` for each item in a pool of forked workers that inherit ``state``; in order."""
    import multiprocessing

    global _STATE
    ctx = multiprocessing.get_context("fork")
    _STATE = state
    pool = None
    try:
        # Workers are forked with Ctrl-C held back (a held signal is not inherited; the parent's
        # is raised when it lets it through below), so none can take one before _init ignores
        # it: a Ctrl-C right after a fork printed that worker's traceback.
        with _sigint_held():
            pool = ctx.Pool(workers, initializer=_init, initargs=(os.getpid(),))
        yield from pool.imap(task, items, chunksize=1)
        pool.close()
    except BaseException:
        if pool is not None:
            pool.terminate()
        raise
    finally:
        if pool is not None:
            pool.join()
        _STATE = None


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    import signal

    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _run_payload(payload: Any) -> Any:
    assert _STATE is not None
    work, fn, _ = _STATE
    return fn(work, payload)


def _init(parent: int) -> None:
    import signal

    # Ctrl-C reaches the whole process group: the parent alone answers it (it stops the pool and
    # rolls back); a worker that raised KeyboardInterrupt printed its traceback under the
    # parent's message (tests/index/test_parallel_embed.py, Ctrl-C during a cold index). Forked
    # with it held back (_sigint_held): one sent meanwhile is dropped by SIG_IGN.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    # What the worker inherits is never collected by its GC, which would otherwise touch
    # (and so copy) every page holding one; freezing is constant time (no object is touched).
    gc.freeze()
    _die_with_parent(parent)
    _close_inherited_folders()
    assert _STATE is not None
    work, _, setup = _STATE
    setup(work)


def _run(bounds: tuple[int, int]) -> Any:
    assert _STATE is not None
    work, fn, _ = _STATE
    return fn(work, *bounds)


def _die_with_parent(parent: int) -> None:
    import signal

    from shardpy.childproc import die_with_parent

    if not die_with_parent(parent, signal.SIGKILL):  # the parent died before prctl took effect
        os._exit(1)


def _close_inherited_folders() -> None:
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return
    for name in names:
        with contextlib.suppress(ValueError, OSError):
            fd = int(name)
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.close(fd)
