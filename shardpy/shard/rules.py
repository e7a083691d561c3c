"""Frontmatter rules from the schema: which keys each note type requires.

`path_match` globs: `*` stays inside one path segment, `**` crosses
segments (CONTRACT §2).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the models load pydantic: status compiles kept rules without them (issue 25)
    from shardpy.shard.schema import Schema


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """``path_match`` as a regex. A shard's schema is untrusted input and status matches it
    against every note: a ``*`` followed by more of the pattern and another ``*`` finds its
    following literal at the first place it fits and keeps it (an atomic group, as fnmatch
    does), so ``*a*a*a*b`` is linear, not exponential, in a long name; ``**`` stays a plain
    ``.*`` (tests/hardening/test_rules_globs.py)."""
    return re.compile("^" + "".join(_glob_pieces(pattern)) + "$")


def _glob_pieces(pattern: str) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            chunk, i = _literal_chunk(pattern, i + 1)
            star_follows = i < len(pattern) and pattern[i] == "*" and not pattern.startswith("**", i)
            # Exact for a fixed-length chunk with another single-segment star after it.
            out.append(f"(?>[^/]*?{chunk})" if chunk and star_follows else f"[^/]*{chunk}")
        else:
            chunk, i = _literal_chunk(pattern, i)
            out.append(chunk)
    return out


def _literal_chunk(pattern: str, i: int) -> tuple[str, int]:
    """The regex of the star-free run starting at ``pattern[i]`` (``?`` is one non-slash)."""
    out = []
    while i < len(pattern) and pattern[i] != "*":
        out.append("[^/]" if pattern[i] == "?" else re.escape(pattern[i]))
        i += 1
    return "".join(out), i


def note_type(path: str, schema: Schema) -> str | None:
    """The first declared note type whose `path_match` matches ``path``."""
    return KeyRules(schema).note_type(path)


def required_keys(path: str, schema: Schema) -> tuple[str | None, list[str]]:
    return KeyRules(schema).required(path)


RuleSpec = tuple[str, list[str], str | None]
"""One frontmatter rule as plain data: (note type, required keys, ``path_match``)."""


def rule_specs(schema: Schema) -> list[RuleSpec]:
    """The schema's frontmatter rules as plain data, in declared order (status keeps them
    between runs without the schema's models: shardpy/flows/statuschecks.py)."""
    return [(name, list(rule.required), rule.path_match) for name, rule in schema.frontmatter.items()]


class KeyRules:
    """The schema's frontmatter rules compiled once, for loops over many notes:
    each note type's glob and its required keys (the global ones first)."""

    def __init__(self, schema: Schema) -> None:
        self._compile(rule_specs(schema))

    @classmethod
    def of(cls, specs: Iterable[RuleSpec]) -> KeyRules:
        """The rules compiled from :func:`rule_specs`' plain data."""
        rules = cls.__new__(cls)
        rules._compile(list(specs))
        return rules

    def _compile(self, specs: list[RuleSpec]) -> None:
        self.base: list[str] = next((list(req) for name, req, _ in specs if name == "global"), [])
        self.types: list[tuple[str, list[str]]] = []
        alternatives = []
        for name, required, path_match in specs:
            if name != "global" and path_match:
                keys = list(self.base)
                keys.extend(k for k in required if k not in keys)  # lazily: repeats dropped too
                # Ordered alternatives: the first declared type that matches wins, in one match call.
                alternatives.append(f"(?P<t{len(self.types)}>{glob_regex(path_match).pattern})")
                self.types.append((name, keys))
        self.match: Callable[[str], re.Match[str] | None] | None = (
            re.compile("|".join(alternatives)).match if alternatives else None
        )

    def note_type(self, path: str) -> str | None:
        return self.required(path)[0]

    def required(self, path: str) -> tuple[str | None, list[str]]:
        """(the note's type or None, the keys it must have)."""
        kind, keys = self._rule(path)
        return kind, list(keys)

    def _rule(self, path: str) -> tuple[str | None, list[str]]:
        """As :meth:`required`, the compiled lists themselves (not to be changed)."""
        m = self.match(path) if self.match is not None else None
        if m is None or m.lastgroup is None:
            return None, self.base
        return self.types[int(m.lastgroup[1:])]

    def missing(self, path: str, text: str) -> tuple[str | None, list[str]]:
        """(note type, required keys absent from the note's frontmatter)."""
        from shardpy.notes.frontmatter import frontmatter_keys  # here: kept keys need no parser

        kind, keys = self._rule(path)
        if not keys:
            return kind, []
        return self.missing_from(path, frontmatter_keys(text))

    def missing_from(self, path: str, present: list[Any]) -> tuple[str | None, list[str]]:
        """:meth:`missing` for a note whose keys are known (``notes/keycache.py`` keeps them)."""
        kind, keys = self._rule(path)
        return kind, [k for k in keys if k not in present]


def missing_keys(path: str, text: str, schema: Schema) -> tuple[str | None, list[str]]:
    """(note type, required keys absent from the note's frontmatter)."""
    return KeyRules(schema).missing(path, text)
