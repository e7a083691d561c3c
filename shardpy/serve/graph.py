"""Links between served notes: what a note links to, and which served notes link back.

Everything here is computed over the notes :meth:`Exposure.notes` returns,
so a backlink from a withheld note is never reported, and a link to a
withheld note resolves to nothing (its existence is not disclosed).

A link to a file that is not a note (``![[Work Dashboard.base]]``, an image, a
PDF) is not broken when that file exists where the search index would look
(:class:`Attachments`): such a file is never served, and its name is already
in the note the caller reads (issue 26 item 19,
tests/hardening/test_serve_health_embeds.py).
"""

from __future__ import annotations

import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path

from shardpy.fsutil import open_regular
from shardpy.index.config import IndexConfig
from shardpy.notes import visibility
from shardpy.notes.blocks import inline_blocks
from shardpy.notes.frontmatter import fences
from shardpy.notes.note import is_note_name, without_ext
from shardpy.notes.note import stem as note_stem
from shardpy.notes.wikilinks import find_wikilinks
from shardpy.serve.exposure import Note

MAX_ATTACHMENTS = 100_000  # files looked at when listing a vault's attachments (a bound, not a limit hit)


@dataclass
class Names:
    """Link targets of the served notes: by path without extension, and by stem (case-insensitive)."""

    by_path: dict[str, str]
    by_stem: dict[str, list[str]]

    @staticmethod
    def of(notes: dict[str, Note]) -> Names:
        by_path: dict[str, str] = {}
        by_stem: dict[str, list[str]] = {}
        for rel in sorted(notes):
            by_path[without_ext(rel).casefold()] = rel
            by_stem.setdefault(note_stem(rel).casefold(), []).append(rel)
        return Names(by_path, by_stem)

    def resolve(self, target: str) -> str | None:
        key = without_ext(target.strip()).casefold()
        if key in self.by_path:
            return self.by_path[key]
        paths = self.by_stem.get(key.rsplit("/", 1)[-1])
        return min(paths, key=lambda p: (p.count("/"), p)) if paths else None


@dataclass(frozen=True)
class Attachments:
    """The vault's files that are not notes, casefolded: by vault path and by file name (Obsidian
    resolves ``![[diagram.png]]`` by name anywhere in the vault, ``![[img/diagram.png]]`` by path)."""

    paths: frozenset[str]
    names: frozenset[str]

    @staticmethod
    def of(vault: Path, index: IndexConfig) -> Attachments:
        """Listed by the one walker and rule (``shardpy.notes.visibility``): lstat only, no link
        followed or counted, no dot folder, none the index never enters (``credentials``,
        ``transcripts``, ``mcp_never_expose``), within its depth bound. The manifest's
        ``search`` patterns are not applied (``Rule.without_search``): the flagship excludes
        ``bases/`` from the index because a ``.base`` is not a note, and those are exactly the
        files embedded."""
        rule = index.rule.without_search()

        def wanted(rel: str, name: str) -> bool:
            """A file that is not a note and that nothing withholds by name."""
            return not is_note_name(name) and not rule.never_exposed(rel, name)

        found = visibility.walk(vault, rule, wanted)
        paths = {e.rel.casefold() for e in itertools.islice(found, MAX_ATTACHMENTS) if e.is_regular}
        return Attachments(frozenset(paths), frozenset(p.rsplit("/", 1)[-1] for p in paths))

    def has(self, target: str) -> bool:
        key = target.strip().casefold()
        if not key or is_note_name(key):
            return False
        return key in self.paths or ("/" not in key and key in self.names)


def links_in(text: str) -> list[str]:
    """Wikilink targets in a note's body (outside code spans, fences and indented code, as the one
    block scanner reads them), in order, without duplicates."""
    found = fences(text)
    body = text if found is None else found.body
    seen: dict[str, None] = {}
    for block in inline_blocks(body):
        for link in find_wikilinks(body[block.start : block.end]):
            if link.target:
                seen.setdefault(link.target, None)
    return list(seen)


@dataclass
class LinkCache:
    """Outgoing link targets per served note, re-read only when the file changes."""

    vault: Path
    _cache: dict[str, tuple[tuple[int, int], list[str]]] = field(default_factory=dict)

    def targets(self, rel: str) -> list[str]:
        full = self.vault / rel
        try:
            st = os.lstat(full)
        except OSError:
            return []
        key = (st.st_size, st.st_mtime_ns)
        hit = self._cache.get(rel)
        if hit is not None and hit[0] == key:
            return hit[1]
        try:  # a served note is a regular file: never read through a link swapped in since
            fd = open_regular(full)
            with os.fdopen(fd, "rb") as fh:
                text = fh.read().decode("utf-8", "replace")
        except OSError:
            return []
        found = links_in(text)
        self._cache[rel] = (key, found)
        return found

    def backlinks(self, target: str, notes: dict[str, Note], names: Names) -> list[str]:
        return sorted(
            rel
            for rel in notes
            if rel != target and any(names.resolve(t) == target for t in self.targets(rel))
        )

    def broken(
        self, notes: dict[str, Note], names: Names, files: Attachments, cap: int = 50
    ) -> tuple[int, list[dict[str, str]]]:
        """Links of served notes that resolve to no served note and name no attachment in ``files``."""
        count = 0
        sample: list[dict[str, str]] = []
        for rel in sorted(notes):
            for t in self.targets(rel):
                if names.resolve(t) is None and not files.has(t):
                    count += 1
                    if len(sample) < cap:
                        sample.append({"note": rel, "link": t})
        return count, sample
