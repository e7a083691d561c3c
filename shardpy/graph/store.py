"""The derived index of the graph: every entity note under ``<memory_root>/graph/`` (and the notes
of ``FOREIGN_FOLDERS``), parsed once per file version and kept in memory, fresh by file stat.

No call re-reads every note, nor stats every note (issue 28, "Speed": listing and stat-ing 20,000
notes costs 100-300 ms on a loaded machine, more than a call's whole budget):

- every call stats the graph folder. A note added, removed or renamed (a write through shardpy,
  a ``git pull``, an editor that saves by rename) changes it; the folder is then listed (names and
  inode numbers, no stat per note) and each note that is new or has another inode is read;
- a note edited in place keeps its inode and the folder's stat: the notes a call answers from are
  stat-ed before it answers (:meth:`GraphStore.fresh`: ``open_nodes``, ``query_graph``), and a
  background sweep (:meth:`GraphStore.watch`, every ``SWEEP_SECONDS`` while calls come,
  :meth:`GraphStore.tick`) stats every note, so ``read_graph`` and ``search_nodes`` see such an
  edit within that time (tests/graph/test_freshness.py);
- a note is re-read only when its size, mtime or inode changed, also across servers: a server's
  store starts from the on-disk index of the last one (``graph.cache``, in the user's cache
  folder), stats every note once and parses only those that changed since.

A write checks, under the vault lock, that every note it rewrites is still the version its
snapshot parsed (:meth:`GraphStore.unchanged`), re-reads those and recomputes when one is not.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from shardpy.fsutil import open_regular
from shardpy.graph import cache
from shardpy.graph.cache import FileKey, Files  # (size, mtime_ns, inode); note path → (key, item)
from shardpy.graph.note import Entity, Invalid, parse_note, safe_stem
from shardpy.graph.search import Haystack

GRAPH_FOLDER = "graph"
FOREIGN_FOLDERS = ("basic-memory",)  # import folders whose notes are read as entities too
SWEEP_SECONDS = 5.0
SWEEP_DUTY = 10.0  # the background sweep waits at least this many times its own duration
NOTE_BYTES_MAX = 8 * 1024 * 1024  # a note larger than this is reported, not parsed
PATCH_MAX = 2_000  # notes changed at once above which the snapshot is built anew, not patched
_DUPLICATE = "names the same entity as"

Item = Entity | Invalid


@dataclass
class Snapshot:
    """One consistent reading of the graph (never changed once built: a change makes another)."""

    entities: dict[str, Entity]  # exact name → entity (placeholders included)
    invalid: list[Invalid]
    stems: dict[str, str]  # casefolded file stem → the name holding it
    incoming: dict[str, list[str]]  # target name → names of the notes with a relation to it
    version: int = 0
    paths: dict[str, str] = field(default_factory=dict)  # note path → the entity read from it
    _haystack: Haystack | None = None
    _order: dict[str, int] | None = None

    def haystack(self) -> Haystack:
        """search_nodes' joined text of these entities (graph.search), built on first use."""
        if self._haystack is None:
            self._haystack = Haystack.of(self.entities.values())
        return self._haystack

    def order(self) -> dict[str, int]:
        """Each entity's place in ``entities`` (the order answers list entities in)."""
        if self._order is None:
            self._order = {name: i for i, name in enumerate(self.entities)}
        return self._order


def _key(st: os.stat_result) -> FileKey:
    return (st.st_size, st.st_mtime_ns, st.st_ino)


@dataclass
class GraphStore:
    vault: Path  # realpath
    memory_root: str
    persist: bool = False  # start from, and save, the on-disk index (graph.cache): a server's store
    _files: Files = field(default_factory=dict)
    _saved: int = 0  # the snapshot version last saved
    _dirty: set[str] | None = None  # notes changed since the last save (None: save every note)
    _dir_key: tuple[int, int] | None = None
    _snapshot: Snapshot | None = None
    _version: int = 0
    _mu: threading.RLock = field(default_factory=threading.RLock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _asked: threading.Event = field(default_factory=threading.Event)  # a call read the graph
    _watcher: threading.Thread | None = None

    @property
    def folder_rel(self) -> str:
        return f"{self.memory_root.strip('/')}/{GRAPH_FOLDER}"

    @property
    def folder(self) -> Path:
        return self.vault / self.folder_rel

    def path_for(self, name: str, snap: Snapshot) -> str:
        """The vault path a new entity ``name`` gets: its safe stem, or that stem with a hash when
        another entity's note already holds the stem (compared case-insensitively)."""
        from shardpy.graph.note import text_hash

        stem = safe_stem(name)
        holder = snap.stems.get(stem.casefold())
        if holder is not None and holder != name:
            stem = f"{stem[:150]} {text_hash(name)[:8]}"
        return f"{self.folder_rel}/{stem}.md"

    def snapshot(self, *, full: bool = False) -> Snapshot:
        """The graph as this process knows it, after a look at the graph folder (``full``: list and
        stat every note now, as the first call and the CLI do)."""
        self._asked.set()
        with self._mu:
            if full or self._snapshot is None:
                if self._snapshot is None and self.persist:
                    self._files = cache.load(self.vault, self.memory_root)  # then checked by stat below
                    self._dirty = set() if self._files else None  # a file to update, or one to write
                key = self._folder_key()
                stats = self._stat_all()
                self._update(self._refresh(self._differs(stats), stats))
                self._dir_key = key
            else:
                key = self._folder_key()
                if key != self._dir_key:
                    self._update(self._refresh(self._relisted(), None))
                    self._dir_key = key  # taken before the listing: a later change is seen next call
            assert self._snapshot is not None
            return self._snapshot

    def fresh(self, names: list[str]) -> Snapshot:
        """The snapshot with the notes of ``names`` stat-ed now and re-read when edited in place."""
        with self._mu:
            snap = self.snapshot()
            rels = {e.path for n in names if (e := snap.entities.get(n)) is not None and e.path}
            self._update(self._refresh(rels, None))
            assert self._snapshot is not None
            return self._snapshot

    def written(self, rels: list[str]) -> None:
        """After this process's own write (under the vault lock): those notes re-read, the folder's
        new stat taken as seen, so the next call does not list the folder for a change it made."""
        with self._mu:
            self._update(self._refresh(set(rels), None))
            self._dir_key = self._folder_key()

    def unchanged(self, rels: list[str], snap: Snapshot) -> bool:
        """Whether each note at ``rels`` is still the version ``snap`` parsed (an edit by hand
        changes its size, mtime or inode; a note that is gone, or new, counts as changed)."""
        with self._mu:
            for rel in rels:
                name = snap.paths.get(rel)
                held = snap.entities.get(name) if name is not None else None
                cached = self._files.get(rel)
                try:
                    st = os.lstat(self.vault / rel)
                except OSError:
                    if held is not None:
                        return False
                    continue
                if held is None or cached is None or cached[1] is not held or cached[0] != _key(st):
                    return False
            return True

    def refresh(self, rels: list[str]) -> Snapshot:
        """The notes at ``rels`` stat-ed and re-read now when changed (a write that found one
        edited since its snapshot)."""
        with self._mu:
            self._update(self._refresh(set(rels), None))
            assert self._snapshot is not None
            return self._snapshot

    def watch(self) -> None:
        """Sweep every note in the background every ``SWEEP_SECONDS`` (a long-lived server)."""
        with self._mu:
            if self._watcher is None:
                self._watcher = threading.Thread(target=self._sweeping, name="graph-sweep", daemon=True)
                self._watcher.start()

    def close(self) -> None:
        self._stop.set()

    def sweep(self) -> None:
        """List and stat every note; re-read what changed (the background sweep's one pass)."""
        stats = self._stat_all()  # outside the lock: a call is not held up by 20,000 lstats
        with self._mu:
            self._update(self._refresh(self._differs(stats), None))  # re-stat-ed under the lock

    def save(self) -> None:
        """Write the on-disk index when the snapshot changed since the last save."""
        with self._mu:
            if self._snapshot is None or self._version == self._saved:
                return
            files, version, dirty = dict(self._files), self._version, self._dirty
            self._dirty = set()
        try:
            cache.save(self.vault, self.memory_root, files, dirty)  # outside the lock: items never change
        except (OSError, sqlite3.Error):
            self._dirty = None  # the next save writes every note
            return
        self._saved = version

    def tick(self) -> float:
        """One turn of the background sweep; returns the seconds until the next. A pass runs only
        when a call asked for the graph since the last one (a quiet server stats nothing), and the
        wait is at least ``SWEEP_DUTY`` times the pass's own time (a slow disk or a loaded machine
        never spends more than a tenth of its time sweeping)."""
        if not self._asked.is_set():
            return SWEEP_SECONDS
        self._asked.clear()
        start = time.monotonic()
        try:
            self.sweep()
            if self.persist:
                self.save()
        except OSError:
            pass  # the folder is being replaced (a checkout), the cache unwritable: the next pass
        return max(SWEEP_SECONDS, SWEEP_DUTY * (time.monotonic() - start))

    def _sweeping(self) -> None:
        wait = SWEEP_SECONDS
        while not self._stop.wait(wait):
            wait = self.tick()

    # -- reading the folder -------------------------------------------------------------------

    def _folder_key(self) -> tuple[int, int] | None:
        try:
            st = os.lstat(self.folder)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_ino) if stat.S_ISDIR(st.st_mode) else None

    def _own_entries(self) -> list[os.DirEntry[str]]:
        """The graph folder's notes (never through a link: a linked folder is no graph)."""
        folder = self.folder
        if os.path.realpath(folder) != str(folder) or not folder.is_dir():
            return []
        with os.scandir(folder) as it:
            return [e for e in it if e.name.endswith(".md") and not e.name.startswith(".")]

    def _relisted(self) -> set[str]:
        """Notes of the graph folder that are new, gone or another file (inode) than the one read."""
        prefix = self.folder_rel + "/"
        listed = {prefix + e.name: e.inode() for e in self._own_entries()}
        changed = {
            rel for rel, ino in listed.items() if (c := self._files.get(rel)) is None or c[0][2] != ino
        }
        changed |= {rel for rel in self._files if rel.startswith(prefix) and rel not in listed}
        return changed

    def _stat_all(self) -> dict[str, FileKey]:
        """Every note of the graph folder and of the foreign folders: path → its stat key."""
        out: dict[str, FileKey] = {}
        prefix = self.folder_rel + "/"
        for entry in self._own_entries():
            _note_key(entry.path, prefix + entry.name, out)
        for sub in FOREIGN_FOLDERS:
            self._stat_foreign(sub, out)
        return out

    def _stat_foreign(self, sub: str, out: dict[str, FileKey]) -> None:
        """Notes under ``<memory_root>/<sub>/`` (an import's folder), never followed through a link."""
        top = self.vault / self.memory_root.strip("/") / sub
        if os.path.realpath(top) != str(top) or not top.is_dir():
            return
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [
                d for d in dirnames if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d))
            ]
            rel_dir = os.path.relpath(dirpath, self.vault).replace(os.sep, "/")
            for name in filenames:
                if name.endswith(".md") and not name.startswith("."):
                    _note_key(os.path.join(dirpath, name), f"{rel_dir}/{name}", out)

    def _differs(self, stats: dict[str, FileKey]) -> set[str]:
        changed = {rel for rel, key in stats.items() if (c := self._files.get(rel)) is None or c[0] != key}
        return changed | {rel for rel in self._files if rel not in stats}

    def _refresh(self, rels: set[str], known: dict[str, FileKey] | None) -> set[str]:
        """Each note at ``rels`` stat-ed (or its stat taken from ``known``, fresh under this lock)
        and re-read when its key changed; a note that is gone is forgotten. Returns what changed."""
        changed: set[str] = set()
        for rel in rels:
            key = known.get(rel) if known is not None else _lstat_key(self.vault / rel)
            cached = self._files.get(rel)
            if key is None:
                if self._files.pop(rel, None) is not None:
                    changed.add(rel)
                continue
            if cached is not None and cached[0] == key:
                continue
            foreign = not rel.startswith(self.folder_rel + "/")
            self._files[rel] = (key, _read(str(self.vault / rel), rel, key[0], foreign=foreign))
            changed.add(rel)
        if self._dirty is not None:
            self._dirty |= changed
        return changed

    def _update(self, changed: set[str]) -> None:
        if not changed and self._snapshot is not None:
            return
        self._version += 1
        old = self._snapshot
        patched = None
        if old is not None and len(changed) <= PATCH_MAX:
            patched = _patch(old, self._files, changed, self._version)
        self._snapshot = patched or _build(self._files, self._version)


def _lstat_key(path: Path) -> FileKey | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return _key(st) if stat.S_ISREG(st.st_mode) else None  # a link is never an entity, as never a note


def _note_key(full: str, rel: str, out: dict[str, FileKey]) -> None:
    try:
        st = os.lstat(full)
    except OSError:
        return
    if stat.S_ISREG(st.st_mode):
        out[rel] = _key(st)


def _read(full: str, rel: str, size: int, *, foreign: bool = False) -> Item:
    if size > NOTE_BYTES_MAX:
        return Invalid(rel, f"the note is {size:,} bytes; an entity note holds at most {NOTE_BYTES_MAX:,}")
    try:
        fd = open_regular(full)
    except OSError as exc:
        return Invalid(rel, f"cannot be read: {exc.strerror}")
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(NOTE_BYTES_MAX + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Invalid(rel, "the note is not UTF-8")
    if foreign:
        from shardpy.graph.foreign import parse_foreign

        return parse_foreign(rel, text)
    return parse_note(rel, text)


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md").casefold()


def _build(files: Files, version: int) -> Snapshot:
    entities: dict[str, Entity] = {}
    invalid: list[Invalid] = []
    stems: dict[str, str] = {}
    paths: dict[str, str] = {}
    for rel in sorted(files, key=lambda r: (_is_foreign(files[r][1]), r)):  # the graph's own notes first
        item = files[rel][1]
        if isinstance(item, Invalid):
            invalid.append(item)
            continue
        if item.name in entities:
            other = entities[item.name].path
            invalid.append(Invalid(rel, f"{_DUPLICATE} {other}; only {other} is read"))
            continue
        entities[item.name] = item
        paths[rel] = item.name
        if not item.foreign:
            stems[_stem(rel)] = item.name
    for bad in invalid:
        stems.setdefault(_stem(bad.path), "")
    incoming: dict[str, list[str]] = {}
    for e in entities.values():
        for _t, to in e.relations:
            holders = incoming.setdefault(to, [])
            if not holders or holders[-1] != e.name:
                holders.append(e.name)
    return Snapshot(entities, invalid, stems, incoming, version, paths)


def _patch(old: Snapshot, files: Files, rels: set[str], version: int) -> Snapshot | None:
    """``old`` with the notes at ``rels`` replaced (a write's few notes, a hand edit), every other
    entity the same object (so a caller's view keeps what it computed for them); None when only a
    full build can decide (two notes naming one entity).

    A key that stays is assigned, never removed and added again: every write copies these four
    maps, and a dict that ever lost a key copies item by item, 5 to 8 times slower than a clean
    one (at 20,000 entities, 10-20 ms of each add_observations; issue 28, "Speed"). Only what is
    really gone is removed, at the end."""
    if any(i.problem.startswith(_DUPLICATE) for i in old.invalid):
        return None
    entities = dict(old.entities)
    stems = dict(old.stems)
    incoming = dict(old.incoming)
    paths = dict(old.paths)
    invalid = [i for i in old.invalid if i.path not in rels]
    in_place: set[str] = set()  # an entity re-read under its name keeps its place (read_graph's order)
    left: list[str] = []  # notes whose entity is taken out (its path and stem go unless placed again)
    emptied: set[str] = set()  # relation targets that may have lost their last holder
    was_invalid = {i.path for i in old.invalid} & rels
    for rel in rels:
        name = paths.get(rel)
        if name is None:
            if rel in was_invalid:
                left.append(rel)  # its stem was held for it ("")
            continue
        e = entities[name]
        got = files.get(rel)
        if got is not None and isinstance(got[1], Entity) and got[1].name == name:
            in_place.add(name)
        else:
            del entities[name]
        left.append(rel)
        _unlink(incoming, e, emptied)
    placed: set[str] = set()  # paths and stems this patch gives a value
    gone = {_stem(rel) for rel in left}  # stems whose holder was taken out (free unless placed)
    for rel in sorted(rels):
        got = files.get(rel)
        if got is None:
            continue
        item = got[1]
        stem = _stem(rel)
        if isinstance(item, Invalid):
            invalid.append(item)
            if stem not in placed and (stem in gone or stem not in stems):
                stems[stem] = ""  # held, so no new entity takes the path of a note that does not parse
                placed.add(stem)
            continue
        if item.name in entities and item.name not in in_place:
            return None
        in_place.discard(item.name)
        entities[item.name] = item
        paths[rel] = item.name
        placed.add(rel)
        if not item.foreign:
            stems[stem] = item.name
            placed.add(stem)
        _link(incoming, item)
    _forget(paths, stems, incoming, left, placed, emptied)
    return Snapshot(entities, invalid, stems, incoming, version, paths)


def _forget(
    paths: dict[str, str],
    stems: dict[str, str],
    incoming: dict[str, list[str]],
    left: list[str],
    placed: set[str],
    emptied: set[str],
) -> None:
    """Remove the paths and stems of the notes ``left`` that the patch did not place again, and
    the targets no note links to any more."""
    for rel in left:
        if rel not in placed:
            paths.pop(rel, None)
        if (stem := _stem(rel)) not in placed:
            stems.pop(stem, None)
    for to in emptied:
        if not incoming.get(to, True):
            del incoming[to]


def _unlink(incoming: dict[str, list[str]], e: Entity, emptied: set[str]) -> None:
    """``e``'s relations out of ``incoming`` (lists are replaced, never changed: the old snapshot
    keeps its own); a target left with no holder goes to ``emptied``, removed by ``_forget``."""
    for _t, to in e.relations:
        if to not in incoming:
            continue
        holders = [h for h in incoming[to] if h != e.name]
        incoming[to] = holders
        if not holders:
            emptied.add(to)


def _link(incoming: dict[str, list[str]], e: Entity) -> None:
    for _t, to in e.relations:
        holders = list(incoming.get(to, []))
        if e.name not in holders:
            holders.append(e.name)
        incoming[to] = holders


def _is_foreign(item: Item) -> bool:
    return isinstance(item, Entity) and item.foreign
