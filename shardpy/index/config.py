"""What the index covers in a vault, and how fresh a search wants it.

Which paths the index covers is the one admission rule every reader asks,
:class:`shardpy.notes.visibility.Rule` (only ``.md`` / ``.markdown`` notes; no
dot segment, no ``transcripts``/``credentials``/... folder, no sync-conflict
copy, nothing ``mcp_never_expose`` names; no symbolic link), with this
module's ``search`` include/exclude patterns given to it.

Configurable in the vault manifest's ``search`` section::

    "search": {"include": ["brain/", "work/"],      # only these (gitignore patterns)
               "exclude": ["work/archive/"],         # never these
               "refresh_seconds": 60}                # search refreshes an older index first

``SHARDPY_SEARCH_REFRESH_SECONDS`` overrides the interval.

The manifest comes with a shard or a ``git pull``: the section is untrusted
input. Patterns are at most :data:`MAX_PATTERNS` of :data:`MAX_PATTERN_CHARS`
characters, relative to the vault (no leading ``/``, no ``..`` segment), and
``refresh_seconds`` a finite number of seconds up to a year; anything else is
``SEARCH_CONFIG_INVALID`` naming the key. Patterns are matched by :class:`Glob`,
segment by segment, without backtracking: pathspec's regular expressions took
exponential time on ``*a*a*a…b`` against a long name, and ``shardpy index``
ran past 90 s (issue 24 item 13, tests/security/test_search_inputs.py).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path

from shardpy.controls import has_control
from shardpy.errors import ShardpyError
from shardpy.record import Record, field
from shardpy.vault.manifest import VAULT_MANIFEST, ContentRules, vault_content_rules

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any

    from shardpy.notes.visibility import Rule

DEFAULT_REFRESH_SECONDS = 60.0
MAX_NOTE_BYTES = 4 * 1024 * 1024
MAX_PATTERNS = 200  # per list: a vault names a few folders
MAX_PATTERN_CHARS = 256
MAX_REFRESH_SECONDS = 365 * 24 * 3600.0


def _class(seg: str, i: int) -> tuple[str, int]:
    """The regex of the bracket expression opening at ``seg[i]`` and the index after it
    (``\\[`` and the index after the ``[`` when it never closes)."""
    j = i + 1
    negate = j < len(seg) and seg[j] in "!^"
    j += negate
    end = seg.find("]", j + 1 if j < len(seg) and seg[j] == "]" else j)
    if end == -1:
        return re.escape("["), i + 1
    chars = seg[j:end].replace("\\", "")
    # Every character escaped (no nested-set or set-operation syntax), ranges kept.
    body = "".join(
        "-" if c == "-" and 0 < k < len(chars) - 1 and chars[k - 1] != "-" else re.escape(c)
        for k, c in enumerate(chars)
    )
    return "[" + ("^" if negate else "") + body + "]", end + 1


def _segment(seg: str) -> re.Pattern[str]:
    """One path segment's glob (``*``, ``?``, ``[...]``, ``\\x``) as a regex without backtracking
    blow-up: every ``*`` but the last finds its following literal at the first place it fits and keeps
    it (atomic), which is exact for fixed-length pieces (what fnmatch does since Python 3.9)."""
    pieces = [""]
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            pieces.append("")
            i += 1
            continue
        if c == "[":
            piece, i = _class(seg, i)
        else:
            if c == "\\" and i + 1 < len(seg):
                i += 1
            piece = "." if seg[i] == "?" and c != "\\" else re.escape(seg[i])
            i += 1
        pieces[-1] += piece
    if len(pieces) == 1:
        return re.compile("(?s:" + pieces[0] + ")")
    head, *middle, tail = pieces
    return re.compile("(?s:" + head + "".join(f"(?>.*?{m})" for m in middle if m) + ".*" + tail + ")")


class Glob:
    """One gitignore pattern anchored at the vault root, matched segment by segment.

    ``**`` as a whole segment is any number of folders (at the end: at least one
    segment, everything inside); elsewhere ``*`` stays within a segment. A
    pattern ending in ``/`` matches folders only. Like gitignore, a pattern that
    matches a folder matches everything under it. The cost is segments × path
    segments × one linear regex each: no input makes it exponential."""

    __slots__ = ("dir_only", "negated", "segments")

    def __init__(self, pattern: str) -> None:
        text = pattern.strip()
        self.negated = text.startswith("!")
        text = text.removeprefix("!")
        if text.startswith("**") and "/" not in text.rstrip("/"):
            text = "**/" + text  # gitignore: no inner slash, any depth (patterns start at the root else)
        self.dir_only = text.endswith("/")
        parts = [p for p in text.strip("/").split("/") if p]
        segments: list[re.Pattern[str] | None] = []
        for part in parts:
            if part == "**":
                if not segments or segments[-1] is not None:
                    segments.append(None)
            else:
                segments.append(_segment(part))
        self.segments = segments

    def matches(self, parts: Sequence[str], is_dir: bool) -> bool:
        """Whether the pattern matches the path ``parts`` (a folder when ``is_dir``) or a folder above it."""
        n = len(parts)
        reach = {0}  # how many leading path segments the pattern's first segments can match
        last = len(self.segments) - 1
        for k, seg in enumerate(self.segments):
            if seg is None:
                reach = set(range(min(reach) + (k == last), n + 1))
            else:
                reach = {j + 1 for j in reach if j < n and seg.fullmatch(parts[j])}
            if not reach:
                return False
        return any(j > 0 and (j < n or is_dir or not self.dir_only) for j in reach)


class Globs:
    """A list of patterns: the last one matching decides (a ``!`` pattern re-includes)."""

    __slots__ = ("globs",)

    def __init__(self, patterns: Sequence[str]) -> None:
        self.globs = [Glob(p) for p in patterns if p.strip()]

    def match_file(self, rel: str) -> bool:
        """``rel``: a vault path, a folder's with a trailing ``/``."""
        parts = rel.strip("/").split("/")
        is_dir = rel.endswith("/")
        matched = False
        for glob in self.globs:
            if glob.matches(parts, is_dir):
                matched = not glob.negated
        return matched


def _invalid(key: str, problem: str, hint: str) -> ShardpyError:
    return ShardpyError("SEARCH_CONFIG_INVALID", f"search.{key} {problem}", hint, path=VAULT_MANIFEST)


_PATTERN_HINT = 'Write gitignore patterns relative to the vault root, e.g. "brain/" or "work/archive/".'


def _pattern_problem(pattern: str) -> str | None:
    if len(pattern) > MAX_PATTERN_CHARS:
        return f"is {len(pattern):,} characters long (at most {MAX_PATTERN_CHARS})"
    if has_control(pattern):
        return "holds a control character"
    text = pattern.strip().removeprefix("!")
    if text.startswith(("/", "~")):
        return f"is {pattern!r}: an absolute path (patterns are relative to the vault root)"
    if ".." in text.replace("\\", "/").split("/"):
        return f"is {pattern!r}: '..' leads outside the vault"
    return None


def _patterns(search: dict[str, Any], key: str) -> list[str]:
    """The ``search.include`` / ``search.exclude`` list, checked (typed error naming the key)."""
    value = search.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _invalid(key, "is not a list of strings", _PATTERN_HINT)
    if len(value) > MAX_PATTERNS:
        raise _invalid(key, f"holds {len(value):,} patterns (at most {MAX_PATTERNS})", _PATTERN_HINT)
    for n, pattern in enumerate(value):
        problem = _pattern_problem(pattern)
        if problem is not None:
            raise _invalid(f"{key}[{n}]", problem, _PATTERN_HINT)
        try:
            Glob(pattern)
        except re.error as exc:
            raise _invalid(
                f"{key}[{n}]", f"is {pattern!r}: not a valid pattern ({exc})", _PATTERN_HINT
            ) from None
    return [v for v in value if v.strip()]


def _refresh_seconds(search: dict[str, Any]) -> float:
    """The manifest's ``refresh_seconds`` (always checked), unless the environment overrides it (the
    user's own setting: one out of range is ignored)."""
    raw = search.get("refresh_seconds", DEFAULT_REFRESH_SECONDS)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 <= raw <= MAX_REFRESH_SECONDS:
        raise _invalid(
            "refresh_seconds",
            f"is {raw!r}: not a number of seconds from 0 to {MAX_REFRESH_SECONDS:,.0f}",
            "Give how old (in seconds) an index may be before a search refreshes it, e.g. 60.",
        )
    try:
        env = float(os.environ.get("SHARDPY_SEARCH_REFRESH_SECONDS", "nan"))
    except ValueError:
        env = math.nan
    # NaN and infinity fail the range checks.
    return env if 0 <= env <= MAX_REFRESH_SECONDS else float(raw)


class IndexConfig(Record):
    """What the index admits and how fresh a search wants it (the vault's search settings)."""

    include: list[str] = field(default_factory=list)
    exclude: list[str] = field(default_factory=list)
    never_expose: list[str] = field(default_factory=list)
    type_paths: dict[str, str] = field(default_factory=dict)
    refresh_seconds: float = DEFAULT_REFRESH_SECONDS
    memory_root: str | None = None
    _types: list[tuple[str, Globs]] = field(default_factory=list)

    @functools.cached_property
    def rule(self) -> Rule:
        """The one admission rule, with this config's patterns. Made when first asked: a search
        that does not refresh never walks, and the rule's module loads the note parser (issue 29)."""
        from shardpy.notes.visibility import Rule

        return Rule.of(
            self.never_expose,
            self.memory_root,
            include=Globs(self.include) if self.include else None,
            exclude=Globs(self.exclude) if self.exclude else None,
        )

    @classmethod
    def from_rules(cls, rules: ContentRules) -> IndexConfig:
        search = rules.search
        return cls(
            include=_patterns(search, "include"),
            exclude=_patterns(search, "exclude"),
            never_expose=list(rules.never_expose),
            type_paths=dict(rules.type_paths),
            refresh_seconds=_refresh_seconds(search),
            memory_root=rules.memory_root,
        )

    @classmethod
    def for_vault(cls, vault: Path) -> IndexConfig:
        return cls.from_rules(vault_content_rules(vault))

    def fingerprint(self) -> str:
        """Changes when a rule that decides a stored field (the note type) changes."""
        return _fingerprint(sorted(self.type_paths.items()))

    def rules_fingerprint(self) -> str:
        """Changes when a rule that decides which notes the index holds, or their type, changes: a
        search that finds it unchanged may stat the indexed notes instead of walking the vault."""
        return _fingerprint(
            [self.include, self.exclude, self.never_expose, self.memory_root, sorted(self.type_paths.items())]
        )

    def type_of(self, rel: str) -> str | None:
        """The note type the manifest's folder conventions give a path (first match wins)."""
        if self.type_paths and not self._types:
            self._types = [(name, _type_glob(glob)) for name, glob in self.type_paths.items()]
        for name, spec in self._types:
            if spec.match_file(rel):
                return name
        return None


def _type_glob(pattern: str) -> Globs:
    """A note type's ``path_match`` (the manifest's, untrusted like the search section): one that
    cannot be compiled, or is too long, matches nothing rather than stopping the index."""
    if _pattern_problem(pattern.removeprefix("/")) is not None:
        return Globs([])
    try:
        return Globs([pattern.removeprefix("/")])
    except re.error:
        return Globs([])


def _fingerprint(rules: object) -> str:
    """A short digest of rules (JSON-encodable): the same rules, the same fingerprint."""
    from shardpy.fsutil import sha1_hex  # CPython's own SHA-1 for a short text: no OpenSSL module

    return sha1_hex(json.dumps(rules).encode())[:16]
