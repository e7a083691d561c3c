"""Rewriting wikilinks to renamed notes (`[[Old]]`, `[[Old|alias]]`,
`[[Old#Heading]]`, `![[Old]]`, path-style `[[folder/Old]]`), outside code.

The links are the ones :mod:`shardpy.notes.wikilinks` reads (issue 25): not
inside inline code, fences or indented code, not after a backslash escape —
as import and serve read them (tests/notes/test_disagreements.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from shardpy.notes.wikilinks import rewrite_links


def _stem(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return name[:-3] if name.lower().endswith(".md") else name


def _no_ext(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


@dataclass(frozen=True)
class LinkRenames:
    """Target spellings of renamed notes → their new spellings."""

    by_name: dict[str, str]  # lowercased old stem → new stem
    by_path: dict[str, str]  # lowercased old path without .md → new path without .md

    @classmethod
    def from_moves(cls, moves: Mapping[str, str]) -> LinkRenames:
        notes = {a: b for a, b in moves.items() if a.lower().endswith(".md") and b.lower().endswith(".md")}
        by_name: dict[str, str] = {}
        ambiguous: set[str] = set()
        for old, new in notes.items():
            key = _stem(old).lower()
            if key in by_name and by_name[key] != _stem(new):
                ambiguous.add(key)
            by_name[key] = _stem(new)
        for key in ambiguous:
            del by_name[key]
        by_path = {_no_ext(old).lower(): _no_ext(new) for old, new in notes.items()}
        return cls(by_name, by_path)

    def __bool__(self) -> bool:
        return bool(self.by_name or self.by_path)

    def _target(self, target: str) -> str | None:
        stripped = target.strip()
        key = _no_ext(stripped).lower()
        if "/" in stripped:
            new = self.by_path.get(key)
            if new is None:
                return None
            return new + (".md" if stripped.lower().endswith(".md") else "")
        new = self.by_name.get(key)
        if new is None or new == _no_ext(stripped):
            return None
        return new + (".md" if stripped.lower().endswith(".md") else "")

    def rewrite(self, text: str) -> tuple[str, int]:
        """``text`` with links to renamed notes rewritten; and how many."""
        return rewrite_links(text, self._target)
