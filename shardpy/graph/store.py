"""The derived index of the graph: every entity note under ``<memory_root>/graph/``, parsed once
per file version and kept fresh by stat, never re-read whole on each call.

Freshness: the folder's own stat is taken on every call (a write through shardpy is a rename,
which changes it, so such a write is seen at once); the notes themselves are listed and
stat-ed when the folder changed or at most ``SWEEP_SECONDS`` after the last sweep (a note
edited in place by hand is seen within that time); a note is re-read only when its size,
mtime or inode changed. A write checks, under the vault lock, that every note it rewrites is
still the version it read (``unchanged``), and sweeps in full and recomputes when one is not.
"""

from __future__ import annotations

import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from shardpy.graph.note import Entity, Invalid, parse_note, safe_stem

GRAPH_FOLDER = "graph"
FOREIGN_FOLDERS = ("basic-memory",)  # import folders whose notes are read as entities too
SWEEP_SECONDS = 5.0
NOTE_BYTES_MAX = 8 * 1024 * 1024  # a note larger than this is reported, not parsed


@dataclass
class Snapshot:
    """One consistent reading of the graph."""

    entities: dict[str, Entity]  # exact name → entity (placeholders included)
    invalid: list[Invalid]
    stems: dict[str, str]  # casefolded file stem → the name holding it
    incoming: dict[str, list[str]]  # target name → names of the notes with a relation to it
    version: int = 0


@dataclass
class GraphStore:
    vault: Path  # realpath
    memory_root: str
    _files: dict[str, tuple[tuple[int, int, int], Entity | Invalid]] = field(default_factory=dict)
    _dir_key: tuple[int, int] | None = None
    _swept_at: float = 0.0
    _snapshot: Snapshot | None = None
    _version: int = 0

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
        """The graph as it is on disk now (``full``: list and stat every note, whatever the clock)."""
        key = self._folder_key()
        now = time.monotonic()
        due = full or key != self._dir_key or now - self._swept_at >= SWEEP_SECONDS
        if self._snapshot is not None and not due:
            return self._snapshot
        changed = self._sweep()
        self._dir_key, self._swept_at = key, now
        if changed or self._snapshot is None:
            self._version += 1
            self._snapshot = _build(self._files, self._version)
        return self._snapshot

    def written(self, rels: list[str]) -> None:
        """After this process's own write (under the vault lock): those notes re-read, the folder's
        new stat taken as seen, so the next call does not sweep every note for a change it made."""
        for rel in rels:
            try:
                st = os.lstat(self.vault / rel)
            except OSError:
                self._files.pop(rel, None)
                continue
            if stat.S_ISREG(st.st_mode):
                key = (st.st_size, st.st_mtime_ns, st.st_ino)
                self._files[rel] = (key, _read(str(self.vault / rel), rel, st.st_size))
        self._version += 1
        old = self._snapshot
        patched = _patch(old, self._files, set(rels), self._version) if old is not None else None
        self._snapshot = patched or _build(self._files, self._version)
        self._dir_key = self._folder_key()

    def unchanged(self, rels: list[str]) -> bool:
        """Whether each note at ``rels`` is still the version the snapshot parsed (an in-place edit
        by hand changes its size, mtime or inode; a note that is gone, or new, counts as changed)."""
        for rel in rels:
            cached = self._files.get(rel)
            try:
                st = os.lstat(self.vault / rel)
            except OSError:
                if cached is not None:
                    return False
                continue
            if cached is None or cached[0] != (st.st_size, st.st_mtime_ns, st.st_ino):
                return False
        return True

    def _folder_key(self) -> tuple[int, int] | None:
        try:
            st = os.lstat(self.folder)
        except OSError:
            return None
        return (st.st_mtime_ns, st.st_ino) if stat.S_ISDIR(st.st_mode) else None

    def _sweep(self) -> bool:
        folder = self.folder
        seen: set[str] = set()
        changed = False
        if os.path.realpath(folder) == str(folder) and folder.is_dir():
            with os.scandir(folder) as it:
                for entry in it:
                    if not entry.name.endswith(".md") or entry.name.startswith("."):
                        continue
                    changed |= self._visit(entry, seen)
        for sub in FOREIGN_FOLDERS:
            changed |= self._sweep_foreign(sub, seen)
        for gone in [k for k in self._files if k not in seen]:
            del self._files[gone]
            changed = True
        return changed

    def _sweep_foreign(self, sub: str, seen: set[str]) -> bool:
        """Notes under ``<memory_root>/<sub>/`` (an import's folder), read as entities, never followed
        through a link."""
        top = self.vault / self.memory_root.strip("/") / sub
        if os.path.realpath(top) != str(top) or not top.is_dir():
            return False
        changed = False
        for dirpath, dirnames, filenames in os.walk(top):
            dirnames[:] = [
                d for d in dirnames if not d.startswith(".") and not os.path.islink(os.path.join(dirpath, d))
            ]
            rel_dir = os.path.relpath(dirpath, self.vault).replace(os.sep, "/")
            for name in filenames:
                if name.endswith(".md") and not name.startswith("."):
                    changed |= self._visit_path(os.path.join(dirpath, name), f"{rel_dir}/{name}", seen)
        return changed

    def _visit(self, entry: os.DirEntry[str], seen: set[str]) -> bool:
        return self._visit_path(entry.path, f"{self.folder_rel}/{entry.name}", seen)

    def _visit_path(self, full: str, rel: str, seen: set[str]) -> bool:
        try:
            st = os.lstat(full)
        except OSError:
            return False
        if not stat.S_ISREG(st.st_mode):
            return False  # a link is never an entity, as it is never a note
        seen.add(rel)
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        cached = self._files.get(rel)
        if cached is not None and cached[0] == key:
            return False
        self._files[rel] = (
            key,
            _read(full, rel, st.st_size, foreign=not rel.startswith(self.folder_rel + "/")),
        )
        return True


def _read(full: str, rel: str, size: int, *, foreign: bool = False) -> Entity | Invalid:
    if size > NOTE_BYTES_MAX:
        return Invalid(rel, f"the note is {size:,} bytes; an entity note holds at most {NOTE_BYTES_MAX:,}")
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW)
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


def _build(files: dict[str, tuple[tuple[int, int, int], Entity | Invalid]], version: int) -> Snapshot:
    entities: dict[str, Entity] = {}
    invalid: list[Invalid] = []
    stems: dict[str, str] = {}
    for rel in sorted(files, key=lambda r: (_is_foreign(files[r][1]), r)):  # the graph's own notes first
        item = files[rel][1]
        if isinstance(item, Invalid):
            invalid.append(item)
            continue
        if item.name in entities:
            other = entities[item.name].path
            invalid.append(Invalid(rel, f"names the same entity as {other}; only {other} is read"))
            continue
        entities[item.name] = item
        if not item.foreign:
            stems[rel.rsplit("/", 1)[-1].removesuffix(".md").casefold()] = item.name
    for bad in invalid:
        stems.setdefault(bad.path.rsplit("/", 1)[-1].removesuffix(".md").casefold(), "")
    incoming: dict[str, list[str]] = {}
    for e in entities.values():
        for _t, to in e.relations:
            holders = incoming.setdefault(to, [])
            if not holders or holders[-1] != e.name:
                holders.append(e.name)
    return Snapshot(entities, invalid, stems, incoming, version)


def _stem(rel: str) -> str:
    return rel.rsplit("/", 1)[-1].removesuffix(".md").casefold()


def _patch(
    old: Snapshot,
    files: dict[str, tuple[tuple[int, int, int], Entity | Invalid]],
    rels: set[str],
    version: int,
) -> Snapshot | None:
    """``old`` with the notes at ``rels`` replaced (a write's few notes), every other entity the same
    object (so a caller's view keeps what it computed for them); None when only a full build can
    decide (two notes naming one entity)."""
    entities = dict(old.entities)
    stems = dict(old.stems)
    incoming = dict(old.incoming)
    invalid = [i for i in old.invalid if i.path not in rels]
    for name in [n for n, e in old.entities.items() if e.path in rels]:
        e = entities.pop(name)
        stems.pop(_stem(e.path), None)
        for _t, to in e.relations:
            holders = [h for h in incoming.get(to, []) if h != name]
            if holders:
                incoming[to] = holders
            else:
                incoming.pop(to, None)
    for rel in sorted(rels):
        got = files.get(rel)
        if got is None:
            continue
        item = got[1]
        if isinstance(item, Invalid):
            invalid.append(item)
            stems.setdefault(_stem(rel), "")
            continue
        if item.name in entities:
            return None
        entities[item.name] = item
        if not item.foreign:
            stems[_stem(rel)] = item.name
        for _t, to in item.relations:
            holders = list(incoming.get(to, []))
            if item.name not in holders:
                holders.append(item.name)
            incoming[to] = holders
    return Snapshot(entities, invalid, stems, incoming, version)


def _is_foreign(item: Entity | Invalid) -> bool:
    return isinstance(item, Entity) and item.foreign
