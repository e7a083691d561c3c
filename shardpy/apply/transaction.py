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
import re
import signal
import stat
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from shardpy.apply import journalcheck as jc
from shardpy.apply.journalcheck import ensure_vault_id
from shardpy.errors import ShardpyError
from shardpy.fsutil import (
    SYNCFS_MIN,
    TMP_MARK,
    atomic_write,
    check_relpath,
    fsync_path,
    io_error,
    make_parents,
    rel_parts,
    remove_file,
    replace_with_link,
    replaced_mode,
    safe_target,
    sha256_bytes,
    sha256_file,
    syncfs_all,
)
from shardpy.record import Record, field
from shardpy.vault.layout import BACKUPS, JOURNAL, SIDECAR, VAULT_ID, first_write_temps

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any, Literal, TypeVar

    Phase = Literal["backing-up", "applying", "committed"]
    _T = TypeVar("_T")


JOURNAL_VERSION = 2  # 2: bound to the vault id, each path's written hash
KEEP_BACKUPS = 5


class Op(Record, frozen=True):
    """One change a transaction makes to one vault path."""

    # "link": a symbolic link whose text is ``data`` (a copier template's, issue 26 item 4), made
    # like a write: beside the path, then renamed over it; "unlink": remove the link at ``path``.
    kind: Literal["write", "delete", "move", "link", "unlink"]
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

    @staticmethod
    def link(path: str, target: str) -> Op:
        """A symbolic link at ``path`` with the link text ``target`` (never followed: the
        caller has checked where it points; tests/hardening/test_copier_links.py)."""
        return Op("link", path, data=os.fsencode(target))

    @staticmethod
    def drop_link(path: str) -> Op:
        """Remove the symbolic link at ``path`` (a file there instead is left alone)."""
        return Op("unlink", path)

    def touched(self) -> list[str]:
        return [self.path] + ([self.dest] if self.dest else [])


class RecoveryReport(Record):
    """What recovering an interrupted transaction did."""

    action: Literal["rolled-back", "completed"]
    label: str
    paths: int
    started_at: str
    # Paths changed since the interrupted transaction wrote them: left as they are (the user's).
    kept: list[str] = field(default_factory=list)


ProgressFn = Callable[[int, int], None]


def _utc_now() -> datetime:
    # datetime and shutil are imported where used: a sync round or a search that writes nothing
    # pays neither (issue 30, a one-shot sync's start-up).
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _now() -> str:
    return _utc_now().strftime("%Y%m%dT%H%M%S%fZ")


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _test_delay() -> float:
    # Test-only: widen the window between operations so fault-injection
    # tests can kill the process mid-apply. Never set in normal use.
    raw = os.environ.get("SHARDPY_TEST_APPLY_DELAY")
    try:
        return float(raw) if raw else 0.0
    except ValueError:
        return 0.0


class Transaction(Record):
    """The one journaled, all-or-nothing write of vault files (:meth:`run`)."""

    root: Path
    label: str
    remove_sidecar_on_rollback: bool = False
    backup_dir: str = ""
    _journal: dict[str, Any] = field(default_factory=dict)
    # Folders a write replaces, emptied by this run's deletes first (see :func:`_order`).
    _clearing: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.backup_dir:
            self.backup_dir = f"{BACKUPS}/{self.label}-{_now()}"

    # -- journal -------------------------------------------------------------

    def _save_journal(self) -> None:
        # Compact: json's C encoder (an indent takes the pure-Python one, ~4x slower at
        # a few hundred paths, and the journal is saved three times per command).
        atomic_write(self.root, JOURNAL, json.dumps(self._journal, separators=(",", ":")).encode())

    def _plan_journal(self, ops: list[Op]) -> None:
        touched: dict[str, dict[str, Any]] = {}
        new_dirs: list[str] = []
        seen_dirs: set[str] = set()
        root = os.fspath(self.root)
        written = _written_hashes(self.root, ops)
        for op in ops:
            for path in op.touched():
                check_relpath(path)
                jc.planned_write(path, records=True)  # never .git/, nor .shardmind/ beyond the records
                if path in touched:
                    continue
                # A link op may replace a link (never following it); every other op refuses one.
                target = (
                    _link_slot(self.root, path) if op.kind in _LINK_KINDS else safe_target(self.root, path)
                )
                is_link = op.kind in _LINK_KINDS and os.path.islink(target)
                existed = is_link or target.is_file()
                # "written": the states the transaction may leave the path in (None: no file).
                # A rollback undoes a path only while it still holds exactly that.
                touched[path] = {"path": path, "existed": existed, "written": written[path]}
                if op.kind in _LINK_KINDS:
                    # Only such a path may be (or become) a link; any other stays refused if it is one.
                    touched[path]["link_op"] = True
                if is_link:
                    touched[path]["link"] = True  # backed up as its link text, restored as a link
                parts = path.split("/")[:-1]
                for i in range(len(parts)):
                    d = "/".join(parts[: i + 1])
                    if d in seen_dirs:
                        continue
                    seen_dirs.add(d)
                    # Not a folder yet (absent, or a file a delete of this run clears away: a
                    # release turning a file into a folder): a rollback removes it again.
                    if not os.path.isdir(f"{root}/{d}"):
                        new_dirs.append(d)
        self._journal = {
            "version": JOURNAL_VERSION,
            "vault_id": "",
            "made_vault_id": False,
            "label": self.label,
            "phase": "backing-up",
            "started_at": _utc_now().isoformat(timespec="seconds"),
            "pid": os.getpid(),
            "backup_dir": self.backup_dir,
            "remove_sidecar_on_rollback": self.remove_sidecar_on_rollback,
            "touched": list(touched.values()),
            "new_dirs": new_dirs,
        }

    def _backup(self) -> None:
        """Copy every existing touched file into the backup folder, never through a link.

        The backup folder must be a real folder inside the vault's own
        ``.shardmind/backups`` (a link there would send the copies, and later
        the pruning, outside the vault); each copy is written like any vault
        file and its hash journaled, so recovery can tell a tampered copy.
        """
        delay = _test_delay()
        existing = [e for e in self._journal["touched"] if e["existed"]]
        # Each backup must be on disk before the journal says "applying". Many
        # backups: write them all, then one syncfs (as the apply phase does);
        # a few, or no syncfs here: an fsync each, and one per folder.
        each = len(existing) < SYNCFS_MIN
        copies: set[Path] = set()
        for entry in existing:
            rel = f"{self.backup_dir}/{entry['path']}"
            if entry.get("link"):
                # A link is backed up as a file holding its text; its journaled hash is the link's.
                data = os.fsencode(os.readlink(_link_slot(self.root, entry["path"])))
                atomic_write(self.root, rel, data, mode=0o600, durable=each, sync_dir=False)
                entry["hash"] = link_digest(data)
                copies.add((self.root / rel).parent)
                continue
            src = safe_target(self.root, entry["path"])
            data = src.read_bytes()
            mode = os.stat(src, follow_symlinks=False).st_mode & 0o7777
            atomic_write(self.root, rel, data, mode=mode | 0o600, durable=each, sync_dir=False)
            copies.add((self.root / rel).parent)
            entry["hash"] = sha256_bytes(data)
            if delay:
                time.sleep(delay)
        if each or not syncfs_all(sorted(copies)):
            if not each:
                for entry in existing:
                    fsync_path(self.root / self.backup_dir / entry["path"])
            for folder in sorted(copies):
                fsync_path(folder)

    # -- apply ----------------------------------------------------------------

    def _apply_op(self, op: Op, durable: bool) -> None:
        made = op.dest or op.path
        for gone in self._clearing.get(made, []) if op.kind != "delete" else []:
            with contextlib.suppress(OSError):  # only empty ones: a file of the user's keeps it
                os.rmdir(safe_target(self.root, gone))
        if op.kind != "delete" and made in self._clearing and os.path.isdir(safe_target(self.root, made)):
            raise ShardpyError(
                "PATH_NOT_REGULAR",
                f"{made} is a folder holding files this change does not own; it would put a file there",
                f"Move what is left in {made}/ elsewhere, then run again. Every change was rolled back.",
                path=made,
            )
        if op.kind == "write":
            assert op.data is not None
            atomic_write(self.root, op.path, op.data, mode=op.mode, durable=durable, sync_dir=False)
        elif op.kind == "delete":
            remove_file(self.root, op.path)
        elif op.kind == "link":
            assert op.data is not None
            make_link(self.root, op.path, op.data)
        elif op.kind == "unlink":
            remove_link(self.root, op.path)
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
                    if op.kind in _LINK_KINDS:
                        continue  # a link is durable with its folder (fsynced below)
                    with contextlib.suppress(FileNotFoundError):
                        _fsync(safe_target(self.root, path))
        # Renames are durable once their directories are: one fsync each.
        for directory in directories:
            fsync_path(directory)

    def run(self, ops: list[Op], *, progress: ProgressFn | None = None) -> None:
        """Apply ``ops`` all-or-nothing. Links are removed first (a file may take their place),
        then the deletes that clear the way for a write, then writes, moves and links, then the
        other deletes (see :func:`_order`)."""
        ordered, self._clearing = _order(ops)
        jc.engine_folder(self.root, BACKUPS)  # a link there would take the backups (and pruning) outside
        self._plan_journal(ordered)
        current = JOURNAL
        try:
            self._journal["vault_id"], self._journal["made_vault_id"] = ensure_vault_id(self.root)
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
                _rollback(self.root, _check(self.root, self._journal, ours=True))
            if isinstance(exc, OSError):
                raise io_error(exc, f"Writing {current}", path=current, rolled_back=True) from exc
            raise
        # No temp sweep here: each write removes its own temporary file when it fails (even on
        # Ctrl-C: fsutil.replace_with), so a transaction that ran to the end in this process left
        # none; listing every folder it wrote to cost 50 ms per graph write at 20,000 entity notes
        # (issue 28, "Speed"). A killed one's leftovers are swept by recover() (the next command;
        # tests/graph/test_write_cost.py).
        _finish(self.root, _check(self.root, self._journal, ours=True), sweep=False)


def _order(ops: list[Op]) -> tuple[list[Op], dict[str, list[str]]]:
    """``ops`` in the order they run, and the folders each write must find emptied.

    A release may turn a file into a folder (``guide`` becomes ``guide/intro.md``) or a folder into
    a file (``kit/a.md`` becomes ``kit``): the deletes (and moves away) under or above a written
    path then run before the writes, and the folders they emptied on the way to a written path are
    removed just before it is written (writes came first: "guide is not a directory", "kit: Is a
    directory"; tests/update/test_update_flow.py, tests/update/test_transaction_order.py). Every other delete
    still runs last. A link never takes a folder's place this way: such a run fails and is rolled
    back, as before (its journal could not name paths below a link).
    """
    made = {o.dest or o.path for o in ops if o.kind in ("write", "move")}
    above_made = {"/".join(p.split("/")[:i]) for p in made for i in range(1, p.count("/") + 1)}
    clearing: dict[str, list[str]] = {}
    first: list[int] = []  # positions in ``ops``: sets of paths, not pairs (an update of thousands)
    for k, d in enumerate(ops):
        if d.kind not in ("delete", "move"):
            continue
        parts = d.path.split("/")
        folders = ["/".join(parts[:i]) for i in range(len(parts) - 1, 0, -1)]  # deepest first
        below = [f for f in folders if f in made and f != d.dest]  # a folder becoming a file
        if below or d.path in above_made:  # or a file becoming a folder
            first.append(k)
        for w in below:
            gone = clearing.setdefault(w, [])
            gone += [f for f in folders if (f == w or f.startswith(w + "/")) and f not in gone]
    for gone in clearing.values():
        gone.sort(key=lambda f: f.count("/"), reverse=True)
    early = set(first)
    ordered = (
        [o for o in ops if o.kind == "unlink"]
        + [ops[k] for k in first]
        + [o for k, o in enumerate(ops) if o.kind not in ("delete", "unlink") and k not in early]
        + [o for k, o in enumerate(ops) if o.kind == "delete" and k not in early]
    )
    return ordered, clearing


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


def _written_hashes(root: Path, ops: list[Op]) -> dict[str, list[str | None]]:
    """Every state ``ops`` (in order) leave each touched path in: its hash, None for no file.

    Not only the last: a path moved away and then written (install --backup)
    is absent for a while, and a crash there must still count as the
    transaction's own doing.
    """
    out: dict[str, list[str | None]] = {}
    for op in ops:
        if op.kind == "write":
            assert op.data is not None
            out.setdefault(op.path, []).append(sha256_bytes(op.data))
        elif op.kind == "link":
            assert op.data is not None
            out.setdefault(op.path, []).append(link_digest(op.data))
        elif op.kind in ("delete", "unlink"):
            out.setdefault(op.path, []).append(None)
        else:
            assert op.dest is not None
            moved = out[op.path][-1] if op.path in out else sha256_file(safe_target(root, op.path))
            out.setdefault(op.dest, []).append(moved)
            out.setdefault(op.path, []).append(None)
    return out


_PHASES: tuple[Phase, ...] = ("backing-up", "applying", "committed")
_LABEL = re.compile(r"[a-z][a-z0-9-]{0,40}")


class _Entry(Record, frozen=True):
    """One path of a journal, as a rollback reads it."""

    path: str
    existed: bool
    before: str | None  # hash of the backed-up copy (an existing file once backed up)
    written: tuple[str | None, ...]  # hashes the transaction may leave at ``path`` (None: no file)
    link: bool = False  # it was a symbolic link: ``before`` is its link_digest, restored as a link
    link_op: bool = False  # a link op touched it: it may be a link now (every other path never is)


class _Checked(Record, frozen=True):
    """A journal that passed every rule of :mod:`shardpy.apply.journalcheck`."""

    label: str
    phase: Phase
    started_at: str
    backup_dir: str
    entries: list[_Entry]
    new_dirs: list[str]
    remove_sidecar: bool
    made_vault_id: bool


def _invalid(problems: list[str]) -> ShardpyError:
    shown = jc.summary(problems)
    return ShardpyError(
        "TRANSACTION_JOURNAL_INVALID",
        f"Refusing to replay {JOURNAL}: {shown}. Nothing was changed",
        f"shardpy did not write this journal in this vault (it was copied, planted or edited). If you "
        f"did not just interrupt a shardpy command here, delete {JOURNAL}; otherwise restore the files "
        f"it names from {BACKUPS}/ or version control first, then delete it.",
        path=JOURNAL,
        details={"problems": problems},
    )


def _entry(root: Path, raw: Any, i: int, backed_up: bool) -> _Entry:
    if not isinstance(raw, dict):
        raise jc.Untrusted(f"touched[{i}] is not an object")
    link_op = raw.get("link_op", False)
    if not isinstance(link_op, bool):
        raise jc.Untrusted(f"touched[{i}].link_op is not true or false")
    what = f"touched[{i}].path"
    path = (
        _journal_path(root, raw.get("path"), what) if link_op else jc.vault_path(root, raw.get("path"), what)
    )
    try:
        jc.planned_write(path, records=True)  # what a transaction may plan is all it may undo
    except ShardpyError:
        raise jc.Untrusted(f"touched[{i}].path {path!r} lies in .git/ or in .shardmind/") from None
    existed = raw.get("existed")
    if not isinstance(existed, bool):
        raise jc.Untrusted(f"touched[{i}].existed is not true or false")
    before = jc.digest(raw.get("hash"), f"touched[{i}].hash", optional=not (existed and backed_up))
    states = raw.get("written")
    if not isinstance(states, list) or len(states) > 16:
        raise jc.Untrusted(f"touched[{i}].written is not a list of digests")
    written = tuple(jc.digest(h, f"touched[{i}].written") for h in states)
    link = raw.get("link", False)
    if not isinstance(link, bool) or (link and not (existed and link_op)):
        raise jc.Untrusted(f"touched[{i}].link is not true or false for an existing path a link op touched")
    return _Entry(path, existed, before, written, link, link_op)


def _check(root: Path, data: Any, *, ours: bool) -> _Checked:
    """Validate a journal (``ours``: the one this process holds in memory) or refuse it."""
    if not isinstance(data, dict):
        raise _invalid(["the journal is not a JSON object"])
    if data.get("version") != JOURNAL_VERSION:
        raise _invalid([f"it is not a version {JOURNAL_VERSION} journal"])
    if not ours and not jc.bound_to(root, data.get("vault_id")):
        raise _invalid([f"it names another vault than this one ({VAULT_ID})"])
    problems: list[str] = []
    phase, label, touched, new_dirs, flags = _header(data, problems)
    backup_dir = ""
    try:
        backup_dir = jc.backup_folder(root, data.get("backup_dir"))
    except jc.Untrusted as exc:
        problems.append(str(exc))
    entries = _checked_list(touched, problems, lambda raw, i: _entry(root, raw, i, phase != "backing-up"))
    dirs = _checked_list(new_dirs, problems, lambda raw, i: jc.vault_path(root, raw, f"new_dirs[{i}]"))
    if problems:
        raise _invalid(problems)
    started = str(data.get("started_at", ""))
    known = _PHASES[_PHASES.index(phase)]  # one of them: _header said so, or problems stopped us
    return _Checked(str(label), known, started, backup_dir, entries, dirs, flags[0], flags[1])


def _header(
    data: dict[str, Any], problems: list[str]
) -> tuple[Any, Any, list[Any], list[Any], tuple[Any, Any]]:
    """(phase, label, touched, new_dirs, (remove_sidecar, made_vault_id)); broken rules to ``problems``."""
    phase, label = data.get("phase"), data.get("label")
    if phase not in _PHASES:
        problems.append("phase is not one of " + ", ".join(_PHASES))
    if not isinstance(label, str) or _LABEL.fullmatch(label) is None:
        problems.append("label is not a command name")
    touched, new_dirs = data.get("touched"), data.get("new_dirs")
    if not isinstance(touched, list) or not isinstance(new_dirs, list):
        problems.append("touched and new_dirs must be lists")
        touched, new_dirs = [], []
    flags = (data.get("remove_sidecar_on_rollback", False), data.get("made_vault_id", False))
    if not all(isinstance(f, bool) for f in flags):
        problems.append("remove_sidecar_on_rollback and made_vault_id must be true or false")
    return phase, label, touched, new_dirs, flags


def _checked_list(raw: list[Any], problems: list[str], check: Callable[[Any, int], _T]) -> list[_T]:
    """Each item of ``raw`` checked; a broken rule goes to ``problems`` and the item is dropped."""
    out: list[_T] = []
    for i, item in enumerate(raw):
        try:
            out.append(check(item, i))
        except jc.Untrusted as exc:
            problems.append(str(exc))
    return out


def _backup_problems(root: Path, journal: _Checked, restores: list[_Entry]) -> list[str]:
    """Backups the rollback needs that are missing, reached through a link, or not what was copied."""
    problems: list[str] = []
    for entry in restores:
        rel = f"{journal.backup_dir}/{entry.path}"
        try:
            jc.vault_path(root, rel, "backup")
        except jc.Untrusted as exc:
            problems.append(str(exc))
            continue
        found = jc.current_hash(root, rel)
        if entry.link and isinstance(found, str):
            found = link_digest((root / rel).read_bytes())  # the backup holds the link's text
        if found is jc.FileState.ABSENT:
            problems.append(f"the backup of {entry.path} is missing")
        elif found != entry.before:
            problems.append(f"the backup of {entry.path} is not the copy that was made")
    return problems


def _backup_refused(journal: _Checked, problems: list[str]) -> ShardpyError:
    shown = jc.summary(problems)
    return ShardpyError(
        "TRANSACTION_BACKUP_INVALID",
        f"Cannot roll back the interrupted {journal.label}: {shown}. Nothing was changed",
        f"Restore those files from version control or your own backup, then delete {JOURNAL}. "
        f"The other backups are in {journal.backup_dir}/.",
        path=journal.backup_dir,
        details={"problems": problems},
    )


def _plan_undo(root: Path, journal: _Checked) -> tuple[list[_Entry], list[str]]:
    """(paths to put back, paths changed since the transaction wrote them: the user's now)."""
    if journal.phase == "backing-up":
        return [], []  # nothing in the vault was changed yet; a backup may be half-copied
    restores: list[_Entry] = []
    kept: list[str] = []
    for entry in journal.entries:
        found = _current_state(root, entry.path) if entry.link_op else jc.current_hash(root, entry.path)
        if found is jc.FileState.OTHER and _made_folder(root, journal, entry.path):
            # A file this run turned into a folder (transaction._order): the folder is the run's,
            # undone with the paths below it, then the file put back (tests/update/test_faults.py).
            found = jc.FileState.ABSENT
        decision = jc.undo(found, entry.before, entry.written)
        if decision is jc.Undo.RESTORE:
            restores.append(entry)
        elif decision is jc.Undo.KEEP:
            kept.append(entry.path)
    return restores, kept


def _made_folder(root: Path, journal: _Checked, rel: str) -> bool:
    """``rel`` is a folder (not a link to one) the journal says the run created."""
    if rel not in journal.new_dirs:
        return False
    try:
        return stat.S_ISDIR(os.lstat(safe_target(root, rel)).st_mode)
    except (OSError, ShardpyError):
        return False


def _restore(root: Path, journal: _Checked, entry: _Entry) -> None:
    try:
        if entry.link_op:  # what a link op left there is a link of its own: put aside first
            remove_link(root, entry.path)
        if entry.existed and entry.link:
            make_link(root, entry.path, safe_target(root, f"{journal.backup_dir}/{entry.path}").read_bytes())
        elif entry.existed:
            if _made_folder(root, journal, entry.path):
                # A file this run turned into a folder: the folders it made there (emptied by the
                # undo of the paths below, which come later in the run) go first, deepest first.
                below = [d for d in journal.new_dirs if d.startswith(entry.path + "/")]
                for d in sorted(below, key=lambda d: d.count("/"), reverse=True):
                    with contextlib.suppress(FileNotFoundError):
                        os.rmdir(safe_target(root, d))
                os.rmdir(safe_target(root, entry.path))
            backup = safe_target(root, f"{journal.backup_dir}/{entry.path}")
            mode = os.stat(backup, follow_symlinks=False).st_mode & 0o7777
            atomic_write(root, entry.path, backup.read_bytes(), mode=mode)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(safe_target(root, entry.path))
    except OSError as exc:
        raise io_error(exc, f"Rolling back {entry.path}", path=entry.path, rolled_back=False) from exc


def _rollback(root: Path, journal: _Checked) -> list[str]:
    """Undo an unfinished transaction; return the paths left as they are (changed since)."""
    restores, kept = _plan_undo(root, journal)
    problems = _backup_problems(root, journal, [e for e in restores if e.existed])
    if problems:
        raise _backup_refused(journal, problems)
    for entry in reversed(restores):
        _restore(root, journal, entry)
    _remove_temp_files(root, [e.path for e in journal.entries])
    for d in sorted(journal.new_dirs, key=lambda p: p.count("/"), reverse=True):
        with contextlib.suppress(OSError):
            os.rmdir(root / d)
    if not kept and jc.real_folder(root, journal.backup_dir):
        _rmtree(root / journal.backup_dir)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / JOURNAL)
    if journal.made_vault_id:  # after the journal: a journal is never left without its vault id
        with contextlib.suppress(FileNotFoundError):
            os.unlink(root / VAULT_ID)
    if journal.remove_sidecar:  # only folders now empty: an import's records or backups stay
        for folder in (BACKUPS, SIDECAR):
            with contextlib.suppress(OSError):
                os.rmdir(root / folder)
    return kept


def _remove_temp_files(root: Path, paths: list[str]) -> None:
    parents = {(root / p).parent for p in paths}
    for parent in parents:
        with contextlib.suppress(OSError):
            for entry in os.scandir(parent):
                if entry.name.startswith(TMP_MARK) and (
                    entry.is_file(follow_symlinks=False) or entry.is_symlink()
                ):
                    os.unlink(entry.path)


def _prune_backups(root: Path) -> None:
    """Keep the newest KEEP_BACKUPS backup folders; delete only folders named as this module names
    them, inside a real backups folder (never through a link, never a name it did not make)."""
    if not jc.real_folder(root, BACKUPS):
        return
    with os.scandir(root / BACKUPS) as it:
        names = sorted(
            e.name for e in it if e.is_dir(follow_symlinks=False) and jc.BACKUP_NAME.fullmatch(e.name)
        )
    for name in names[:-KEEP_BACKUPS]:
        _rmtree(root / BACKUPS / name)


def _finish(root: Path, journal: _Checked, *, sweep: bool = True) -> None:
    """Settle a committed transaction: its backups pruned, the folders its deletes emptied
    removed, the journal gone. ``sweep``: also remove the temporary files a killed process left
    beside the paths it touched (recovery; a transaction finishing in its own process has none)."""
    if sweep:
        _remove_temp_files(root, [e.path for e in journal.entries])
    if not any(e.existed for e in journal.entries) and jc.real_folder(root, journal.backup_dir):
        _rmtree(root / journal.backup_dir)
    _prune_emptied(root, [e.path for e in journal.entries])
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / JOURNAL)
    _prune_backups(root)


def interrupted(root: Path) -> bool:
    """A killed transaction left something for :func:`recover`: its journal, or the temporary
    file of a journal it was still writing. (Cheap: one read attempt and one small scandir,
    so read-only commands ask it before deciding whether to take the vault lock.)"""
    return pending_journal(root) is not None or bool(_journal_temps(root))


def pending_journal(root: Path) -> dict[str, Any] | None:
    """The journal an interrupted transaction left (unchecked: :func:`recover` checks it)."""
    path = root / JOURNAL
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with open(fd, "rb") as fh:
            raw = fh.read()
        data = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError):
        raise ShardpyError(
            "TRANSACTION_JOURNAL_CORRUPT",
            f"An interrupted operation left an unreadable journal: {JOURNAL}",
            f"Restore files from {BACKUPS}/ by hand if needed, then delete {JOURNAL}.",
            path=JOURNAL,
        ) from None
    return data if isinstance(data, dict) else {"version": None}


def recover(root: Path) -> RecoveryReport | None:
    """Finish or undo a transaction a killed process left behind.

    Call with the vault lock held, before reading state. The journal is
    checked first (:func:`_check`); one that breaks a rule is refused with
    nothing changed, and so is a rollback whose backups do not match.
    """
    _remove_journal_temps(root)
    data = pending_journal(root)
    if data is None:
        return None
    journal = _check(root, data, ours=False)
    count = len(journal.entries)
    if journal.phase == "committed":
        _finish(root, journal)
        return RecoveryReport("completed", journal.label, count, journal.started_at)
    kept = _rollback(root, journal)
    return RecoveryReport("rolled-back", journal.label, count, journal.started_at, kept)


def _journal_temps(root: Path) -> list[str]:
    """The journal's own temporary file (a kill while the journal is being written leaves it
    beside a journal never renamed into place), or the vault id's, written just before the first
    journal (issue 27: the fault harness's adopt trial; tests/test_spine_session.py)."""
    if not jc.real_folder(root, SIDECAR):
        return []
    return first_write_temps(root / SIDECAR)


def _remove_journal_temps(root: Path) -> None:
    """Remove what a kill mid-way through writing the journal left (the caller holds the
    vault lock, so no live writer is writing one); only names this module's writes make."""
    for path in _journal_temps(root):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


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


# -- symbolic links (a copier template's, issue 26 item 4; tests/hardening/test_copier_links.py) --

_LINK_KINDS = frozenset({"link", "unlink"})


def link_digest(text: bytes) -> str:
    """The journal's hash of a link with ``text``: never the hash of a file holding the same bytes,
    so a rollback cannot take a file for the link it wrote (or the other way round)."""
    return sha256_bytes(b"symlink\0" + text)


def _link_slot(root: Path, rel: str) -> Path:
    """``root/rel`` where a link may be made or removed: no link on the way to it (PATH_SYMLINK),
    while ``rel`` itself may be one (it is replaced or removed, never followed)."""
    parent, _, name = rel.rpartition("/")
    folder = safe_target(root, parent) if parent else root
    check_relpath(rel)
    return folder / name


def _journal_path(root: Path, value: Any, what: str) -> str:
    """A touched path (:func:`jc.vault_path`'s rules), which may itself be a link: a link op left
    one there, or was to replace one. Only the folders on the way must be real."""
    rel = jc.text(value, what)
    head, _, _name = rel.rpartition("/")
    try:
        normal = "/".join(rel_parts(rel)) == rel
    except ShardpyError:
        raise jc.Untrusted(f"{what} {rel!r} is not a path inside the vault") from None
    if not normal:
        raise jc.Untrusted(f"{what} {rel!r} is not normalised")
    if head:
        jc.vault_path(root, head, what)
    return rel


def _current_state(root: Path, rel: str) -> str | jc.FileState:
    """What ``rel`` holds for a rollback's decision: a file's hash, a link's :func:`link_digest`."""
    found = jc.current_hash(root, rel)
    if found is jc.FileState.OTHER:
        try:
            return link_digest(os.fsencode(os.readlink(_link_slot(root, rel))))
        except (OSError, ShardpyError):
            return found
    return found


def make_link(root: Path, rel: str, text: bytes) -> None:
    """A link with ``text`` at ``rel``, made beside it and renamed over what is there (a link or a
    file: never followed; a read-only file is refused as a write would refuse it)."""
    target = _link_slot(root, rel)
    make_parents(root, rel)
    name = os.fspath(target)
    if not os.path.islink(name):
        replaced_mode(name, rel)  # PATH_READ_ONLY for a read-only file, as a write says
    replace_with_link(name, text)  # fsutil's one atomic writer, for a link (issue 27)


def remove_link(root: Path, rel: str) -> bool:
    """Remove the link at ``rel`` (never what it points to); anything else there is left."""
    target = _link_slot(root, rel)
    if not os.path.islink(target):
        return False
    os.unlink(target)
    return True
