"""Resolve and fetch a remote source in a forked child while this process loads the engine.

``install`` and ``update`` spend their first ~0.3 s importing the engine
(pydantic and the shard-schema models, Jinja, ruamel) and the next ~0.1-0.3 s
talking to GitHub and extracting the release (httpx, the TLS context, the
requests' round trips, tar). Neither needs the other, so on Linux the CLI
forks before the engine is imported: the child resolves the source and
fetches it into the download cache (``sources/cache.py``: archive and
extracted tree, both verified on every read) while the parent imports.

The child only warms the cache. It sends back the ``Resolved`` release and
its download progress; the parent still calls ``fetch`` itself, which now
finds the archive and the tree cached and verifies them as always. When
anything differs, the child's work is dropped and the parent does it all
itself, exactly as without this module: the child failed (its error is
raised again, typed, by the parent's own attempt), the spec the parent ends
up with is not the one the child guessed (update's recovery changed the
state), or the cache cannot be written (the child then gives up before
asking the network anything).

Never started with other threads running (fork would copy their locks), off
Linux, or with ``SHARDPY_PREFETCH=0``. A child that is never taken (the
command failed before it needed the source) is stopped at exit and its
partial extraction removed: nothing runs on after the command returns.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import signal
import sys
import threading
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from shardpy.sources.model import ProgressFn, Resolved
    from shardpy.sources.spec import SourceSpec

ENV_VAR = "SHARDPY_PREFETCH"
# Fetched into the download cache under an immutable key (the commit), so the
# parent's own fetch is a cache hit with no request. Not a tarball URL: its
# cached copy is revalidated with the server on every fetch, so the parent
# would repeat a round trip the child just made.
_REMOTE_KINDS = frozenset({"github", "registry"})


@dataclass
class _Child:
    pid: int
    reader: IO[bytes]
    spec: SourceSpec
    include_prerelease: bool

    def stop(self) -> None:
        """End the child (its SIGTERM handler removes a partial extraction) and reap it."""
        with contextlib.suppress(OSError):
            os.kill(self.pid, signal.SIGTERM)
        self.reap()

    def reap(self) -> None:
        with contextlib.suppress(OSError):
            self.reader.close()
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(self.pid, 0)


_pending: _Child | None = None


def wanted(spec: SourceSpec) -> bool:
    """Worth a child: a source fetched over the network into the download cache."""
    if spec.kind not in _REMOTE_KINDS:
        return False
    return (
        sys.platform == "linux"
        and os.environ.get(ENV_VAR, "1") != "0"
        and threading.active_count() == 1
        and hasattr(os, "fork")
    )


def start(spec: SourceSpec, *, include_prerelease: bool) -> None:
    """Fork a child that resolves and fetches ``spec`` (when :func:`wanted`); returns at once."""
    global _pending
    if _pending is not None or not wanted(spec):
        return
    read_fd, write_fd = os.pipe()
    parent = os.getpid()  # before the fork: a parent gone by the time the child asks is then seen
    try:
        pid = os.fork()
    except OSError:
        os.close(read_fd)
        os.close(write_fd)
        return
    if pid == 0:  # the child
        os.close(read_fd)
        _child_main(write_fd, spec, include_prerelease, parent)  # never returns
    os.close(write_fd)
    _pending = _Child(pid, os.fdopen(read_fd, "rb"), spec, include_prerelease)
    atexit.register(_stop_pending)


def pending() -> bool:
    """A child is fetching (or has fetched) for this process."""
    return _pending is not None


def take(spec: SourceSpec, *, include_prerelease: bool, progress: ProgressFn | None) -> Resolved | None:
    """The child's resolution of exactly this request, once its fetch is cached; None
    when there is no child, it was asked something else, or it failed (the caller
    then resolves and fetches itself). Replays the child's download progress."""
    global _pending
    child, _pending = _pending, None
    if child is None:
        return None
    if (child.spec, child.include_prerelease) != (spec, include_prerelease):
        child.stop()
        return None
    try:
        resolved = _receive(child.reader, progress)
    except BaseException:  # Ctrl-C while waiting, or the progress display failed: end the child too
        child.stop()
        raise
    child.reap()
    return resolved


def _receive(reader: IO[bytes], progress: ProgressFn | None) -> Resolved | None:
    """Read the child's frames to the end: progress replayed, then its result (None if it failed)."""
    resolved: Resolved | None = None
    while True:
        try:
            message = pickle.load(reader)  # our own child's frames, over our own pipe
        except (EOFError, pickle.UnpicklingError, OSError):
            return resolved
        if message[0] == "progress" and progress is not None:
            progress(*message[1:])
        elif message[0] == "done":
            resolved = message[1]


def _stop_pending() -> None:
    global _pending
    child, _pending = _pending, None
    if child is not None:
        child.stop()


def _child_main(write_fd: int, spec: SourceSpec, include_prerelease: bool, parent: int) -> None:
    """Resolve and fetch, report, and leave with os._exit (no atexit handlers, no
    flush of buffers copied from the parent, never back into the parent's code)."""
    code = 1
    try:
        _quiet()
        _end_with(parent)
        with os.fdopen(write_fd, "wb") as out:
            sender = _Sender(out)
            if not _cache_writable():
                return  # the fetch would land in a temp dir and be lost: the parent does it all
            from shardpy.sources.fetch import fetch, resolve

            resolved = resolve(spec, include_prerelease=include_prerelease)
            fetch(resolved, progress=sender.progress).cleanup()
            sender.send(("done", resolved))
            code = 0
    except BaseException:  # the parent repeats the work and reports any error itself
        pass
    finally:
        os._exit(code)


def _cache_writable() -> bool:
    """Whether the download cache can be written (or made): else nothing the child
    fetched would be kept for the parent. Asked of the nearest folder that exists."""
    from shardpy.cachedir import cache_dir

    path = cache_dir()
    while not os.path.lexists(path) and path != path.parent:
        path = path.parent
    return path.is_dir() and os.access(path, os.W_OK | os.X_OK)


def _quiet() -> None:
    """No terminal for the child: nothing it does can print or read, and SIGTERM
    unwinds it (so the cache's extraction removes its partial tree)."""
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.close(devnull)

    def _terminate(_signum: int, _frame: object) -> None:
        raise SystemExit(1)

    signal.signal(signal.SIGTERM, _terminate)


def _end_with(parent: int) -> None:
    """SIGTERM (an unwinding exit) for this child when the parent dies, even by a
    signal that skips its exit handlers; a parent already gone ends it now."""
    from shardpy.childproc import die_with_parent

    if not die_with_parent(parent, signal.SIGTERM):
        raise SystemExit(1)


class _Sender:
    """Frames to the parent; a parent that stopped listening does not stop the fetch."""

    def __init__(self, out: IO[bytes]) -> None:
        self.out: IO[bytes] | None = out

    def send(self, message: tuple[object, ...]) -> None:
        if self.out is None:
            return
        try:
            pickle.dump(message, self.out)
            self.out.flush()
        except OSError:
            self.out = None

    def progress(self, label: str, done: int, total: int | None) -> None:
        self.send(("progress", label, done, total))
