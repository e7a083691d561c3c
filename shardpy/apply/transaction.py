"""The only code that changes a vault: journal, backups, atomic writes,
rollback, and recovery after a crash.

A transaction is planned in full before it starts. It first writes a
journal naming every path it will touch, copies each existing one into a
backup folder, then applies the operations (writes before deletes, each
atomic). Any exception or Ctrl-C restores every touched path from the
backups. If the process dies instead, the journal stays behind and the
next shardpy command in that vault calls :func:`recover` before anything
else: a journal that never reached "committed" is rolled back, one that
did is finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from shardpy.errors import ShardpyError
from shardpy.fsutil import (
    SYNCFS_MIN,
    TMP_MARK,
    atomic_write,
    check_relpath,
    fsync_path,
    io_error,
    remove_file,
    safe_target,
    sha256_file,
    syncfs_all,
)
from shardpy.vault.layout import BACKUPS, JOURNAL, SIDECAR

JOURNAL_VERSION = 1
KEEP_BACKUPS = 5


@dataclass(frozen=True)
class Op:
    kind: Literal["write", "delete", "move"]
    path: str
    data: bytes | None = None
    dest: str | None = None  # move target
    mode: int | None = None

    @staticmethod
    def write(path: str, data: bytes, mode: int | None = None) -> Op:
        return Op("write", path, data=data, mode=mode)

    @staticmethod
    def delete(path: str) -> Op:
        return Op("delete", path)

    @staticmethod
    def move(path: str, dest: str) -> Op:
        return Op("move", path, dest=dest)

    def touched(self) -> list[str]:
        return [self.path] + ([self.dest] if self.dest else [])


@dataclass
class RecoveryReport:
    action: Literal["rolled-back", "completed"]
    label: str
    paths: int
    started_at: str


ProgressFn = Callable[[int, int], None]


def _now() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")


def _test_delay() -> float:
    # Test-only: widen the window between operations so fault-injection
    # tests can kill the process mid-apply. Never set in normal use.
    raw = os.environ.get("SHARDPY_TEST_APPLY_DELAY")
    try:
        return float(raw) if raw else 0.0
    except ValueError:
        return 0.0


@dataclass
class Transaction:
    root: Path
    label: str
    remove_sidecar_on_rollback: bool = False
    backup_dir: str = ""
    _journal: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.backup_dir:
            self.backup_dir = f"{BACKUPS}/{self.label}-{_now()}"

    # -- journal -------------------------------------------------------------

    def _save_journal(self) -> None:
        atomic_write(self.root, JOURNAL, json.dumps(self._journal, indent=1).encode())

    def _plan_journal(self, ops: list[Op]) -> None:
        touched: dict[str, dict[str, Any]] = {}
        new_dirs: list[str] = []
        seen_dirs: set[str] = set()
        root = os.fspath(self.root)
        for op in ops:
            for path in op.touched():
                check_relpath(path)
                if path in touched:
                    continue
                target = safe_target(self.root, path)
                existed = target.is_file()
                touched[path] = {"path": path, "existed": existed}
                parts = path.split("/")[:-1]
                for i in range(len(parts)):
                    d = "/".join(parts[: i + 1])
                    if d in seen_dirs:
                        continue
                    seen_dirs.add(d)
                    if not os.path.exists(f"{root}/{d}"):
                        new_dirs.append(d)
        self._journal = {
            "version": JOURNAL_VERSION,
            "label": self.label,
            "phase": "backing-up",
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "pid": os.getpid(),
            "backup_dir": self.backup_dir,
            "remove_sidecar_on_rollback": self.remove_sidecar_on_rollback,
            "touched": list(touched.values()),
            "new_dirs": new_dirs,
        }

    def _backup(self) -> None:
        delay = _test_delay()
        for entry in self._journal["touched"]:
            if not entry["existed"]:
                continue
            src = self.root / entry["path"]
            dst = self.root / self.backup_dir / entry["path"]
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
            _fsync(dst)
            entry["hash"] = sha256_file(src)
            if delay:
                time.sleep(delay)

    # -- apply ----------------------------------------------------------------

    def _apply_op(self, op: Op, durable: bool) -> None:
        if op.kind == "write":
            assert op.data is not None
            atomic_write(self.root, op.path, op.data, mode=op.mode, durable=durable, sync_dir=False)
        elif op.kind == "delete":
            remove_file(self.root, op.path)
        else:
            assert op.dest is not None
            src = safe_target(self.root, op.path)
            data = src.read_bytes()
            mode = os.stat(src).st_mode & 0o7777
            atomic_write(self.root, op.dest, data, mode=mode, durable=durable, sync_dir=False)
            remove_file(self.root, op.path)

    def _make_durable(self, ordered: list[Op], flushed_each: bool) -> None:
        """Every write, rename and delete of ``ordered`` on disk: the journal may then say "committed"."""
        directories = sorted({(self.root / p).parent for o in ordered for p in o.touched()})
        if not flushed_each:
            if syncfs_all(directories):
                return  # the files and their folders alike
            for op in ordered:  # no syncfs here: each file the transaction left behind
                for path in op.touched():
                    with contextlib.suppress(FileNotFoundError):
                        _fsync(safe_target(self.root, path))
        # Renames are durable once their directories are: one fsync each.
        for directory in directories:
            fsync_path(directory)

    def run(self, ops: list[Op], *, progress: ProgressFn | None = None) -> None:
        """Apply ``ops`` all-or-nothing. Writes and moves run before deletes."""
        ordered = [o for o in ops if o.kind != "delete"] + [o for o in ops if o.kind == "delete"]
        self._plan_journal(ordered)
        current = JOURNAL
        try:
            self._save_journal()
        except OSError as exc:
            raise io_error(exc, f"Writing {JOURNAL}", path=JOURNAL) from exc
        try:
            current = self.backup_dir
            self._backup()
            self._journal["phase"] = "applying"
            current = JOURNAL
            self._save_journal()
            delay = _test_delay()
            # A large transaction writes without waiting for the disk and then flushes the whole
            # filesystem once (syncfs); a small one fsyncs as it goes, not waiting for other
            # programs' unwritten data.
            flushed_each = len(ordered) < SYNCFS_MIN
            for i, op in enumerate(ordered, 1):
                current = op.path
                self._apply_op(op, durable=flushed_each)
                if progress is not None:
                    progress(i, len(ordered))
                if delay:
                    time.sleep(delay)
            current = "."
            self._make_durable(ordered, flushed_each)
            self._journal["phase"] = "committed"
            current = JOURNAL
            self._save_journal()
        except BaseException as exc:
            with _no_interrupts():
                _rollback(self.root, self._journal)
            if isinstance(exc, OSError):
                raise io_error(exc, f"Writing {current}", path=current, rolled_back=True) from exc
            raise
        _finish(self.root, self._journal)


def _fsync(path: Path) -> None:
    # Each backup must be on disk before the journal says "applying": a
    # rollback after power loss restores from them. Per file, not os.sync():
    # that flushes every filesystem on the machine.
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _no_interrupts() -> Iterator[None]:
    """Hold off Ctrl-C while restoring, so a second Ctrl-C cannot leave half a rollback."""
    try:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _remove_temp_files(root: Path, paths: list[str]) -> None:
    parents = {(root / p).parent for p in paths}
    for parent in parents:
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                if entry.name.startswith(TMP_MARK) and entry.is_file(follow_symlinks=False):
                    os.unlink(entry.path)


def _rollback(root: Path, journal: dict[str, Any]) -> None:
    backup_dir = journal.get("backup_dir", "")
    touched = list(journal.get("touched", []))
    # Until the journal says "applying" nothing in the vault was changed, and
    # a backup may be half-copied: restore nothing, just clean up.
    applying = journal.get("phase") != "backing-up"
    for entry in reversed(touched if applying else []):
        path = entry["path"]
        target = root / path
        if entry.get("existed"):
            backup = root / backup_dir / path
            if not backup.is_file():
                continue  # never backed up: the op had not run either
            if sha256_file(target) == sha256_file(backup):
                continue
            atomic_write(root, path, backup.read_bytes(), mode=os.stat(backup).st_mode & 0o7777)
        else:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError):
                if not target.is_symlink():
                    os.unlink(target)
    _remove_temp_files(root, [e["path"] for e in touched])
    for d in sorted(journal.get("new_dirs", []), key=lambda p: p.count("/"), reverse=True):
        with contextlib.suppress(OSError):
            os.rmdir(root / d)
    with contextlib.suppress(FileNotFoundError):
        shutil.rmtree(root / backup_dir)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / JOURNAL)
    if journal.get("remove_sidecar_on_rollback"):
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(root / SIDECAR)


def _prune_backups(root: Path) -> None:
    base = root / BACKUPS
    with contextlib.suppress(FileNotFoundError):
        folders = sorted((p for p in base.iterdir() if p.is_dir()), key=lambda p: p.name)
        for old in folders[:-KEEP_BACKUPS]:
            shutil.rmtree(old, ignore_errors=True)


def _finish(root: Path, journal: dict[str, Any]) -> None:
    _remove_temp_files(root, [e["path"] for e in journal.get("touched", [])])
    backup_dir = root / journal.get("backup_dir", "")
    if backup_dir.is_dir() and not any(e.get("existed") for e in journal.get("touched", [])):
        shutil.rmtree(backup_dir, ignore_errors=True)
    _prune_emptied(root, [e["path"] for e in journal.get("touched", [])])
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / JOURNAL)
    _prune_backups(root)


def pending_journal(root: Path) -> dict[str, Any] | None:
    path = root / JOURNAL
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ShardpyError(
            "TRANSACTION_JOURNAL_CORRUPT",
            f"An interrupted operation left an unreadable journal: {JOURNAL}",
            f"Restore files from {BACKUPS}/ by hand if needed, then delete {JOURNAL}.",
            path=JOURNAL,
        ) from None
    return data if isinstance(data, dict) else None


def recover(root: Path) -> RecoveryReport | None:
    """Finish or undo a transaction a killed process left behind.

    Call with the vault lock held, before reading state.
    """
    journal = pending_journal(root)
    if journal is None:
        return None
    count = len(journal.get("touched", []))
    label = str(journal.get("label", "operation"))
    started = str(journal.get("started_at", ""))
    if journal.get("phase") == "committed":
        _finish(root, journal)
        return RecoveryReport("completed", label, count, started)
    _rollback(root, journal)
    return RecoveryReport("rolled-back", label, count, started)


def _prune_emptied(root: Path, paths: list[str]) -> None:
    """Folders the transaction's deletes left empty (a removed module's
    `.gemini/`) go too; a folder holding anything stays."""
    for path in paths:
        if os.path.lexists(root / path):
            continue
        parent = Path(path).parent
        while parent != Path(".") and parent != Path(SIDECAR):
            try:
                os.rmdir(root / parent)  # only an empty folder: anything in it keeps it
            except OSError:
                break
            parent = parent.parent
