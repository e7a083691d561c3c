"""Rewriting wikilinks to renamed notes (`[[Old]]`, `[[Old|alias]]`,
`[[Old#Heading]]`, `![[Old]]`, path-style `[[folder/Old]]`), outside code."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

_LINK_RE = re.compile(r"(!?\[\[)([^\[\]\|#\n]+?)((?:#[^\[\]\|\n]*)?)((?:\|[^\[\]\n]*)?)(\]\])")
_FENCE_RE = re.compile(r"^(```|~~~)")


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
        count = 0
        out: list[str] = []
        in_fence = False
        for line in text.splitlines(keepends=True):
            if _FENCE_RE.match(line.lstrip()):
                in_fence = not in_fence
                out.append(line)
                continue
            if in_fence or "[[" not in line:
                out.append(line)
                continue

            def swap(match: re.Match[str]) -> str:
                nonlocal count
                new = self._target(match.group(2))
                if new is None:
                    return match.group(0)
                count += 1
                return f"{match.group(1)}{new}{match.group(3)}{match.group(4)}{match.group(5)}"

            out.append(_LINK_RE.sub(swap, line))
        return "".join(out), count
