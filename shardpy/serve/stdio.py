"""The server's stdin, read in the event loop so Ctrl-C ends ``shardpy serve`` (issue 26, item 13).

The SDK's ``stdio_server`` reads stdin in a worker thread; a thread blocked in
``read`` on a terminal is out of reach of any cancellation, so SIGINT cancelled
the server and then waited for a line that never came (a second Ctrl-C too).
Here the descriptor's readiness is awaited in the loop (``anyio.wait_readable``)
and only then read, so a cancellation lands at that await: the handler of a
call in flight (run synchronously in the loop) finishes its write first, and a
second SIGINT inside it interrupts the transaction, which rolls back.

Used when stdin can be waited on (a pipe, a terminal, a socket); a regular file
or the null device is left to the SDK's own reader (it reaches end of file
anyway). As the SDK does for the descriptors it claims, fd 0 points at the null
device while serving, so a child (the QMD server) reads end of file, never the
client's messages; the wire is a private duplicate, restored on exit.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
from collections.abc import Iterator

import anyio

CHUNK = 65536


class Lines:
    """An async iterator of the lines read from one descriptor (text, ending in a newline)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._buffer = b""
        self._eof = False

    def __aiter__(self) -> Lines:
        return self

    async def __anext__(self) -> str:
        while b"\n" not in self._buffer:
            if self._eof:
                if not self._buffer:
                    raise StopAsyncIteration
                last, self._buffer = self._buffer, b""
                return last.decode("utf-8", "replace")
            await anyio.wait_readable(self.fd)
            try:
                chunk = os.read(self.fd, CHUNK)  # ready: returns what is there, never blocks for more
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:  # a terminal hung up (EIO): the client is gone, as at end of file
                chunk = b""
            self._eof = not chunk
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "replace") + "\n"


def _waitable(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    if stat.S_ISCHR(mode):
        return os.isatty(fd)  # a terminal; /dev/null cannot be registered with epoll
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@contextlib.contextmanager
def stdin_lines() -> Iterator[Lines | None]:
    """The client's messages from fd 0, read in the loop (None: leave stdin to the SDK's reader)."""
    if not _waitable(0):
        yield None
        return
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield Lines(wire)
    finally:
        os.dup2(wire, 0)
        os.close(wire)
