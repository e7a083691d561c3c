"""``shardpy sync --watch``: a round every interval and shortly after the vault changes.

Change detection: Linux's inotify (through libc with ctypes: standard library
only), a watch per vault folder; elsewhere, or when inotify is refused (the
watch limit), a stat poll of the vault's files (path, size, mtime) once a
second. ``.git`` and the machine-local folders are left out either way.
A change starts a round once the vault has been quiet for
:data:`DEBOUNCE_S` (an editor saving in bursts makes one round).

One watcher per vault: the watcher holds an exclusive ``flock`` on the
repository's git folder for its whole life (the kernel drops it when the
process dies, so a killed watcher never blocks the next); a second watcher
gets ``SYNC_WATCH_RUNNING``. SIGTERM and Ctrl-C set a flag the round reads
between steps, so a stop never lands in a merge; a watcher killed outright
is recovered by the next round (:mod:`shardpy.sync.round`).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

from shardpy.controls import has_control
from shardpy.errors import ShardpyError, UsageError
from shardpy.fsutil import printable, utf8_name
from shardpy.gitsync.repo import Repo

__all__ = [
    "DEBOUNCE_S",
    "Inotify",
    "Poll",
    "Stopper",
    "detector",
    "snapshot",
    "unit_text",
    "watch",
    "watch_lock",
]

DEBOUNCE_S = 2.0
POLL_S = 1.0
SKIP_DIRS = frozenset({".git", "backups", "imports"})


class Stopper:
    """Set by SIGTERM / SIGINT; the round asks it between steps."""

    def __init__(self) -> None:
        self.stopped = False

    def __call__(self) -> bool:
        return self.stopped

    def handle(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True

    def install(self) -> None:
        signal.signal(signal.SIGTERM, self.handle)
        signal.signal(signal.SIGINT, self.handle)


@contextlib.contextmanager
def watch_lock(repo: Repo) -> Iterator[None]:
    fd = os.open(repo.git_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ShardpyError(
                "SYNC_WATCH_RUNNING",
                "Another `shardpy sync --watch` is already running for this vault",
                "Stop it first (or let it do the syncing).",
            ) from None
        yield
    finally:
        os.close(fd)


def _counts(vault: Path, path: str) -> bool:
    """A change to ``path`` (absolute) is one a round syncs: not a file one machine keeps for
    itself (sync/plan.local_only). Obsidian rewrites its workspace.json as you click: each write
    started a round, a fetch from every remote every few seconds, and a log line for nothing
    (tests/sync/test_watch.py)."""
    from shardpy.sync.plan import local_only

    rel = os.path.relpath(path, vault).replace(os.sep, "/")
    return not local_only(rel)


def snapshot(vault: Path) -> dict[str, tuple[int, int]]:
    """Every vault file's (size, mtime) — what a change looks like to the poll (files one machine
    keeps for itself left out)."""
    out: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".shardpy-")]
        for name in files:
            path = os.path.join(folder, name)
            if not _counts(vault, path):
                continue
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                out[path] = (st.st_size, st.st_mtime_ns)
    return out


class Poll:
    """Change detection by a stat snapshot of the vault every :data:`POLL_S` (works everywhere)."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.last = snapshot(vault)

    def settle(self) -> None:
        """Forget what changed so far (the round's own writes are not a change)."""
        self.last = snapshot(self.vault)

    def wait(self, stop: Callable[[], bool]) -> bool:
        _sleep(POLL_S, stop)
        seen = snapshot(self.vault)
        changed, self.last = seen != self.last, seen
        return changed

    def close(self) -> None:
        pass


_IN_EVENTS = 0x2 | 0x4 | 0x8 | 0x40 | 0x80 | 0x100 | 0x200  # modify attrib close-write moves create delete


class Inotify(Poll):
    """Linux's inotify through libc (ctypes: standard library only); a watch per vault folder."""

    def __init__(self, vault: Path) -> None:
        import ctypes

        self.vault = vault
        self.folders: dict[int, str] = {}  # watch descriptor → the folder it watches
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = int(self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        try:
            self._watch_folders()
        except OSError:
            os.close(self.fd)
            raise

    def _watch_folders(self) -> None:
        import ctypes

        for folder, dirs, _files in os.walk(self.vault):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".shardpy-")]
            wd = int(self.libc.inotify_add_watch(self.fd, os.fsencode(folder), _IN_EVENTS))
            if wd < 0:
                raise OSError(ctypes.get_errno(), "inotify_add_watch")  # e.g. the watch limit
            self.folders[wd] = folder

    def _drain(self) -> bool:
        """Read every pending event: True when one is a change a round syncs."""
        got = False
        with contextlib.suppress(BlockingIOError):
            while True:
                data = os.read(self.fd, 1 << 16)
                if not data:
                    break
                got = self._relevant(data) or got
        return got

    def _relevant(self, data: bytes) -> bool:
        """Any event in ``data`` (inotify's records: wd, mask, cookie, name length, name) that is
        not about a file one machine keeps for itself; a queue overflow counts (unknown)."""
        import struct

        at = 0
        while at + 16 <= len(data):
            wd, mask, _cookie, size = struct.unpack_from("iIII", data, at)
            name = data[at + 16 : at + 16 + size].rstrip(b"\0")
            at += 16 + size
            folder = self.folders.get(wd)
            if mask & 0x4000 or folder is None or not name:  # IN_Q_OVERFLOW, or the folder itself
                return True
            if _counts(self.vault, os.path.join(folder, os.fsdecode(name))):
                return True
        return False

    def settle(self) -> None:
        self._drain()
        self._watch_folders()  # folders a round (or the user) added since

    def wait(self, stop: Callable[[], bool]) -> bool:
        import select

        ready, _, _ = select.select([self.fd], [], [], POLL_S)
        if not ready or not self._drain():
            return False
        with contextlib.suppress(OSError):
            self._watch_folders()
        return True

    def close(self) -> None:
        os.close(self.fd)


def detector(vault: Path) -> Poll:
    """inotify where the system has it (unless SHARDPY_SYNC_WATCH=poll), else the stat poll."""
    if sys.platform.startswith("linux") and os.environ.get("SHARDPY_SYNC_WATCH") != "poll":
        with contextlib.suppress(OSError, AttributeError):
            return Inotify(vault)
    return Poll(vault)


def _sleep(seconds: float, stop: Callable[[], bool]) -> None:
    end = time.monotonic() + seconds
    while not stop() and time.monotonic() < end:
        time.sleep(min(0.2, max(0.0, end - time.monotonic())))


def watch(
    vault: Path,
    round_once: Callable[[], str],
    *,
    interval: float,
    stop: Stopper,
    log: Callable[[str], None],
) -> None:
    """Run ``round_once`` (which returns its log line) until ``stop``; one line per round."""
    from shardpy.gitsync.repo import open_repo

    with watch_lock(open_repo(vault)):
        changes = detector(vault)
        try:
            due = 0.0  # the first round at once
            changed_at: float | None = None
            while not stop():
                now = time.monotonic()
                if now >= due or (changed_at is not None and now - changed_at >= DEBOUNCE_S):
                    line = round_once()
                    # Forget the round's own writes before saying it ended: a change made once the
                    # line is out must start the next round (it was drained and lost, and the test
                    # that writes right after reading the line waited out its 90 s).
                    changes.settle()
                    log(line)
                    due, changed_at = time.monotonic() + interval, None
                    continue
                if changes.wait(stop):
                    changed_at = time.monotonic()
        finally:
            changes.close()


def _systemd_word(arg: str) -> str:
    """One ExecStart word as systemd reads it back: double-quoted with C escapes, and `%` (a
    specifier) and `$` (a variable) doubled (tests/sync/test_watch.py runs systemd-analyze)."""
    escaped = arg.replace("\\", "\\\\").replace('"', '\\"').replace("%", "%%").replace("$", "$$")
    return f'"{escaped}"'


def unit_text(kind: str, vault: Path, interval: float) -> str:
    """A service unit running the watcher for ``vault`` (systemd user unit or launchd agent)."""
    argv = [
        sys.executable,
        "-I",
        "-m",
        "shardpy",
        "sync",
        str(vault),
        "--watch",
        "--interval",
        f"{interval:g}",
    ]
    if has_control("".join(argv)) or not utf8_name(str(vault)):
        raise ShardpyError(
            "SYNC_UNIT_PATH",
            f"A service unit cannot name {printable(str(vault))!r}: the path holds a control "
            "character or bytes that are not UTF-8 (a unit file is UTF-8 text)",
            "Move or rename the vault (or a folder above it), then print the unit again.",
        )
    if kind == "systemd":
        return (
            "# ~/.config/systemd/user/shardpy-sync.service, then:\n"
            "#   systemctl --user enable --now shardpy-sync\n"
            "[Unit]\nDescription=shardpy sync --watch for " + str(vault).replace("%", "%%") + "\n\n"
            "[Service]\nExecStart=" + " ".join(_systemd_word(a) for a in argv) + "\n"
            "Restart=on-failure\nRestartSec=30\nKillSignal=SIGTERM\nTimeoutStopSec=120\n\n"
            "[Install]\nWantedBy=default.target\n"
        )
    if kind == "launchd":
        from xml.sax.saxutils import escape

        args = "".join(f"    <string>{escape(a)}</string>\n" for a in argv)
        return (
            '<?xml version="1.0" encoding="UTF-8"?>\n'
            "<!-- ~/Library/LaunchAgents/dev.shardpy.sync.plist; then: launchctl load -w that file -->\n"
            '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
            '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n'
            '<plist version="1.0">\n<dict>\n'
            "  <key>Label</key><string>dev.shardpy.sync</string>\n"
            f"  <key>ProgramArguments</key>\n  <array>\n{args}  </array>\n"
            "  <key>RunAtLoad</key><true/>\n  <key>KeepAlive</key><true/>\n"
            "</dict>\n</plist>\n"
        )
    raise UsageError(f"No unit of kind {kind!r}", "Use --print-unit systemd or --print-unit launchd.")
