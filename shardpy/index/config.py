"""What the index covers in a vault, and how fresh a search wants it.

Built-in rules (always on): only ``.md`` / ``.markdown`` files; nothing whose
name starts with a dot (``.obsidian/``, ``.shardmind/``, ``.git/``,
``.trash/``, ``.claude/``...); no folder named ``transcripts``,
``session-logs``, ``node_modules`` or ``credentials`` (raw session dumps are
staging data, not memory); no sync-conflict copies; no file or folder the
vault manifest lists in ``mcp_never_expose`` (case-insensitive, by name or by
vault path); no symbolic link (never followed, so a link cannot pull a file
from outside the vault into the index).

Configurable in the vault manifest's ``search`` section::

    "search": {"include": ["brain/", "work/"],      # only these (gitignore patterns)
               "exclude": ["work/archive/"],         # never these
               "refresh_seconds": 60}                # search refreshes an older index first

``SHARDPY_SEARCH_REFRESH_SECONDS`` overrides the interval.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.shard.content import ContentRules, vault_content_rules

NOTE_SUFFIXES = (".md", ".markdown")
SKIPPED_FOLDERS = frozenset({"transcripts", "session-logs", "node_modules", "credentials"})
DEFAULT_REFRESH_SECONDS = 60.0
MAX_NOTE_BYTES = 4 * 1024 * 1024
_CONFLICT = re.compile(r"\.sync-conflict-|conflicted copy|\(conflict", re.IGNORECASE)


def _anchored(pattern: str) -> str:
    pattern = pattern.strip()
    return pattern if pattern.startswith(("/", "**", "!")) else "/" + pattern


def _spec(patterns: list[str]) -> Any:
    if not patterns:
        return None
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([_anchored(p) for p in patterns if p.strip()])


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str) and v.strip()] if isinstance(value, list) else []


def _refresh_seconds(search: dict[str, Any]) -> float:
    raw: Any = os.environ.get("SHARDPY_SEARCH_REFRESH_SECONDS", search.get("refresh_seconds"))
    try:
        value = float(raw) if raw is not None else DEFAULT_REFRESH_SECONDS
    except (TypeError, ValueError):
        return DEFAULT_REFRESH_SECONDS
    return value if value >= 0 else DEFAULT_REFRESH_SECONDS


@dataclass
class IndexConfig:
    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    never_expose: list[str] = field(default_factory=list)
    type_paths: dict[str, str] = field(default_factory=dict)
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS
    _include: Any = None
    _exclude: Any = None
    _never: frozenset[str] = frozenset()
    _never_dirs: tuple[str, ...] = ()
    _types: list[tuple[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._include = _spec(self.include)
        self._exclude = _spec(self.exclude)
        names = [n.strip().strip("/").casefold() for n in self.never_expose]
        self._never = frozenset(n for n in names if n)
        self._never_dirs = tuple(n + "/" for n in self._never)

    @classmethod
    def from_rules(cls, rules: ContentRules) -> IndexConfig:
        search = rules.search
        return cls(
            include=_strings(search.get("include")),
            exclude=_strings(search.get("exclude")),
            never_expose=list(rules.never_expose),
            type_paths=dict(rules.type_paths),
            refresh_seconds=_refresh_seconds(search),
        )

    @classmethod
    def for_vault(cls, vault: Path) -> IndexConfig:
        return cls.from_rules(vault_content_rules(vault))

    def fingerprint(self) -> str:
        """Changes when a rule that decides a stored field (the note type) changes."""
        blob = json.dumps(sorted(self.type_paths.items()))
        return hashlib.sha1(blob.encode()).hexdigest()[:16]

    def never_exposed(self, rel: str, name: str) -> bool:
        if not self._never:
            return False
        folded = rel.casefold()
        return name.casefold() in self._never or folded in self._never or folded.startswith(self._never_dirs)

    def skip_dir(self, rel: str, name: str) -> bool:
        """A folder the walk does not enter."""
        if name.startswith(".") or name.casefold() in SKIPPED_FOLDERS or self.never_exposed(rel, name):
            return True
        return self._exclude is not None and self._exclude.match_file(rel + "/")

    def skip_file(self, rel: str, name: str) -> bool:
        """A file that is not a note the index covers (its folders already passed skip_dir)."""
        if name.startswith(".") or not name.lower().endswith(NOTE_SUFFIXES) or _CONFLICT.search(name):
            return True
        if self.never_exposed(rel, name):
            return True
        if self._exclude is not None and self._exclude.match_file(rel):
            return True
        return self._include is not None and not self._include.match_file(rel)

    def type_of(self, rel: str) -> str | None:
        """The note type the manifest's folder conventions give a path (first match wins)."""
        if self.type_paths and not self._types:
            import pathspec

            self._types = [
                (name, pathspec.GitIgnoreSpec.from_lines([_anchored(glob)]))
                for name, glob in self.type_paths.items()
            ]
        for name, spec in self._types:
            if spec.match_file(rel):
                return name
        return None
