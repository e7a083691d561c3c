"""Each note's frontmatter keys, kept between runs (issue 25: status --verbose on 20,000 notes).

``status --verbose`` needs only which keys each note's frontmatter has, and
reading 20,000 notes costs three times a whole plain ``status`` by itself
(the bench's raw floor: open, read, split). So the keys are kept in the user
cache folder, one JSON file per vault, keyed by each note's size,
modification time and inode; a note whose ``stat`` still matches is not
read again, any other is read and its keys derived by
:func:`shardpy.notes.frontmatter.frontmatter_keys`, the one derivation.

A note changed within the same clock tick as the run that cached it could
keep its size and modification time: as git does with its index ("racily
clean" entries), an entry is trusted only when the note's modification
time is older than the start of the run that wrote it by ``RACY_NS``. The
file is derived data: anything unreadable or malformed in it is ignored and
rewritten (tests/notes/test_keycache.py).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

VERSION = 1
RACY_NS = 2_000_000_000  # two seconds: coarse file-system clocks (FAT, some network shares) tick that slowly

# A note's entry: [size, mtime_ns, inode, index into the cache's key lists] (checked where used).
Entry = list[int]


def vault_key(vault: Path) -> str:
    """The name a vault's files in the user cache folder carry (its real path's digest)."""
    from shardpy.fsutil import sha256_bytes

    return sha256_bytes(os.path.realpath(vault).encode("utf-8", "surrogateescape"))[:16]


def cache_file(vault: Path) -> Path:
    from shardpy.cachedir import cache_dir

    return cache_dir() / "status" / f"keys-{vault_key(vault)}.json"


def _load(path: Path) -> tuple[int, dict[str, Any], list[list[str]]]:
    """(start of the run that wrote it, entries, key lists); empty when absent or not ours."""
    try:
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("v") != VERSION:
            return 0, {}, []
        started, notes, lists = data["started_ns"], data["notes"], data["keys"]
        ok = type(started) is int and isinstance(notes, dict) and isinstance(lists, list)
        if not ok or not all(isinstance(k, list) and all(isinstance(s, str) for s in k) for k in lists):
            return 0, {}, []
        return started, notes, lists
    except (OSError, ValueError, KeyError, TypeError):
        return 0, {}, []


def read_keys(name: str) -> list[str]:
    """A note's frontmatter keys read from the note; only string keys: a required key is a
    string, so no other key can be one. The parser is imported here, on the first note not
    kept: a run that reads none does not load it."""
    from shardpy.fsutil import read_text
    from shardpy.notes.frontmatter import frontmatter_keys

    return [k for k in frontmatter_keys(read_text(name)) if isinstance(k, str)]


class KeyCache:
    """The cached keys of one vault's notes, read and rewritten by one run."""

    def __init__(self, vault: Path) -> None:
        self.vault = vault
        self.path = cache_file(vault)
        self.started = time.time_ns()
        written, self.old, self.lists = _load(self.path)
        self.trusted_before = written - RACY_NS
        self.new: dict[str, Entry] = {}
        self._index: dict[tuple[str, ...], int] | None = None  # built at the first note read
        self.changed = False

    def _hit(self, rel: str, st: os.stat_result) -> list[str] | None:
        """The kept keys when the entry is well formed, matches the note and is not racy."""
        old = self.old.get(rel)
        if type(old) is not list or len(old) != 4 or st.st_mtime_ns >= self.trusted_before:
            return None
        size, mtime, ino, at = old
        if size != st.st_size or mtime != st.st_mtime_ns or ino != st.st_ino:
            return None
        if type(at) is not int or not 0 <= at < len(self.lists):
            return None
        self.new[rel] = old
        found: list[str] = self.lists[at]
        return found

    def keys(self, rels: Iterable[str]) -> Iterator[tuple[str, list[str] | None]]:
        """(note, its frontmatter keys; None when it cannot be read), in the order given."""
        base = os.fspath(self.vault)
        for rel in rels:
            name = f"{base}/{rel}"
            try:
                st = os.stat(name)  # what read_text reads: a link is followed, so its target is what is kept
                found = self._hit(rel, st)
                if found is not None:
                    yield rel, found
                    continue
                found = read_keys(name)
            except (OSError, UnicodeDecodeError):
                yield rel, None
                continue
            self.changed = True
            self._keep(rel, st, found)
            yield rel, found

    def _keep(self, rel: str, st: os.stat_result, found: list[str]) -> None:
        if self._index is None:
            self._index = {tuple(k): i for i, k in enumerate(self.lists)}
        key = tuple(found)
        at = self._index.get(key)
        if at is None:
            at = self._index[key] = len(self.lists)
            self.lists.append(found)
        self.new[rel] = [st.st_size, st.st_mtime_ns, st.st_ino, at]

    def save(self) -> None:
        """Write the run's entries (only the notes it asked about) when any was read or dropped;
        a cache that cannot be written is no error: the next run reads the notes again."""
        if not self.changed and self.new.keys() == self.old.keys() and self.trusted_before > 0:
            return
        used = sorted({e[3] for e in self.new.values()})
        if len(used) < len(self.lists):  # drop key lists no note uses any more
            renumber = {old: new for new, old in enumerate(used)}
            self.lists = [self.lists[i] for i in used]
            self.new = {rel: [*e[:3], renumber[e[3]]] for rel, e in self.new.items()}
        data = {"v": VERSION, "started_ns": self.started, "keys": self.lists, "notes": self.new}
        keep(self.path, data)


def keep(path: Path, data: Any) -> None:
    """Write one of status's kept files (this one's, shardpy/flows/statuschecks.py's) as JSON;
    a cache that cannot be written is no error: the next run derives it again."""
    from shardpy.fsutil import atomic_write

    blob = json.dumps(data, separators=(",", ":")).encode()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path.parent, path.name, blob, durable=False)
    except OSError:
        return
