"""Links between served notes: what a note links to, and which served notes link back.

Everything here is computed over the notes :meth:`Exposure.notes` returns,
so a backlink from a withheld note is never reported, and a link to a
withheld note resolves to nothing (its existence is not disclosed).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from shardpy.frontmatter import split_frontmatter
from shardpy.importers.links import note_stem, without_ext
from shardpy.importers.markdown import find_wikilinks
from shardpy.serve.exposure import Note


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


def links_in(text: str) -> list[str]:
    """Wikilink targets in a note's body (outside inline code), in order, without duplicates."""
    split = split_frontmatter(text)
    body = split.body if split.state == "present" else text
    seen: dict[str, None] = {}
    for link in find_wikilinks(_without_fences(body)):
        if link.target:
            seen.setdefault(link.target, None)
    return list(seen)


def _without_fences(body: str) -> str:
    """Body with fenced code blocks blanked (a link shown as an example is not a link)."""
    out: list[str] = []
    fence = ""
    for line in body.split("\n"):
        stripped = line.lstrip()
        if fence:
            if stripped.startswith(fence):
                fence = ""
            out.append("")
            continue
        if stripped.startswith(("```", "~~~")):
            fence = stripped[:3]
            out.append("")
            continue
        out.append(line)
    return "\n".join(out)


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
            fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
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

    def broken(self, notes: dict[str, Note], names: Names, cap: int = 50) -> tuple[int, list[dict[str, str]]]:
        count = 0
        sample: list[dict[str, str]] = []
        for rel in sorted(notes):
            for t in self.targets(rel):
                if names.resolve(t) is None:
                    count += 1
                    if len(sample) < cap:
                        sample.append({"note": rel, "link": t})
        return count, sample
