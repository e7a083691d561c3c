"""``shardpy sync --watch``: a round every interval and shortly after the vault changes.

Change detection is a stat poll of the vault's files (path, size, mtime;
``.git`` and the machine-local records left out) once a second: stdlib only,
the same on every system. A change starts a round once the vault has been
quiet for :data:`DEBOUNCE_S` (an editor saving in bursts makes one round).

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
import shlex
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType

from shardpy.errors import ShardpyError, UsageError
from shardpy.gitsync.repo import Repo

__all__ = ["DEBOUNCE_S", "Stopper", "snapshot", "unit_text", "watch", "watch_lock"]

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


def snapshot(vault: Path) -> dict[str, tuple[int, int]]:
    """Every vault file's (size, mtime) — what a change looks like to the poll."""
    out: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(vault):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith(".shardpy-")]
        for name in files:
            path = os.path.join(folder, name)
            with contextlib.suppress(OSError):
                st = os.lstat(path)
                out[path] = (st.st_size, st.st_mtime_ns)
    return out


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
        last = snapshot(vault)
        due = 0.0  # the first round at once
        changed_at: float | None = None
        while not stop():
            now = time.monotonic()
            if now >= due or (changed_at is not None and now - changed_at >= DEBOUNCE_S):
                log(round_once())
                last, due, changed_at = snapshot(vault), time.monotonic() + interval, None
                continue
            _sleep(POLL_S, stop)
            seen = snapshot(vault)
            if seen != last:
                last, changed_at = seen, time.monotonic()


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
    if kind == "systemd":
        return (
            "# ~/.config/systemd/user/shardpy-sync.service, then:\n"
            "#   systemctl --user enable --now shardpy-sync\n"
            "[Unit]\nDescription=shardpy sync --watch for " + str(vault) + "\n\n"
            "[Service]\nExecStart=" + " ".join(shlex.quote(a) for a in argv) + "\n"
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
