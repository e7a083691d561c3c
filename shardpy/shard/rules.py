"""Frontmatter rules from the schema: which keys each note type requires.

`path_match` globs: `*` stays inside one path segment, `**` crosses
segments (CONTRACT §2).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from shardpy.shard.schema import Schema

_FM_RE = re.compile(r"^\ufeff?---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.S)


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


def note_type(path: str, schema: Schema) -> str | None:
    """The first declared note type whose `path_match` matches ``path``."""
    for name, rule in schema.frontmatter.items():
        if name != "global" and rule.path_match and glob_regex(rule.path_match).match(path):
            return name
    return None


def required_keys(path: str, schema: Schema) -> tuple[str | None, list[str]]:
    kind = note_type(path, schema)
    keys: list[str] = []
    glob = schema.frontmatter.get("global")
    if glob is not None:
        keys.extend(glob.required)
    if kind is not None:
        keys.extend(k for k in schema.frontmatter[kind].required if k not in keys)
    return kind, keys


def parse_frontmatter(text: str) -> dict[str, Any] | None:
    """The note's YAML frontmatter mapping; None when it has none or it is broken."""
    match = _FM_RE.match(text)
    if not match:
        return None
    from ruamel.yaml import YAML
    from ruamel.yaml.error import YAMLError

    from shardpy.yamlsafe import load

    try:
        data = load(match.group(1), YAML(typ="safe", pure=True))
    except (YAMLError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def frontmatter_keys(text: str) -> list[Any]:
    """The keys of the note's frontmatter mapping ([] when it has none or it is
    broken): read without YAML when the block is simple, as most notes' are."""
    match = _FM_RE.match(text)
    if not match:
        return []
    from shardpy.frontmatter import simple_keys

    keys = simple_keys(match.group(1))
    if keys is not None:
        return list(keys)
    return list(parse_frontmatter(text) or {})


def missing_keys(path: str, text: str, schema: Schema) -> tuple[str | None, list[str]]:
    """(note type, required keys absent from the note's frontmatter)."""
    kind, keys = required_keys(path, schema)
    if not keys:
        return kind, []
    present = frontmatter_keys(text)
    return kind, [k for k in keys if k not in present]
