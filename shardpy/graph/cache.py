"""The derived index on disk: each note's stat key and what it parsed to, so a new server (every
MCP session starts one) stats the notes instead of parsing all of them again (issue 28, "Speed":
a first call parsed 20,000 entity notes, tens of seconds on a loaded machine).

It lives in the user's cache folder (``<cache>/graph/<vault name>-<digest>.json``, keyed by the
vault's real path and the memory root, like the search index: ``index.store.index_path``), never
in the vault, so git never syncs it. It is derived: a note whose size, mtime or inode differs from
its entry is read again, a file that is missing, damaged, for another vault or written by another
version of the parser is ignored (and replaced at the next save), and deleting it is always safe.
JSON, never pickle: loading it builds plain values, nothing else. The frontmatter is kept as its
text (``Entity.fm_text``; ``note.frontmatter_data`` reads it again for a write).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from shardpy.graph.facts import Fact
from shardpy.graph.note import Entity, Invalid

FORMAT = 1
_PARSERS = ("note.py", "foreign.py", "facts.py")  # a change to any of them changes what a note parses to

FileKey = tuple[int, int, int]
Files = dict[str, tuple[FileKey, Entity | Invalid]]


def cache_path(vault: Path, memory_root: str) -> Path:
    from shardpy.cachedir import cache_dir

    real = os.path.realpath(vault)
    digest = hashlib.sha256(f"{real}\0{memory_root}".encode("utf-8", "surrogateescape")).hexdigest()[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(real).name).strip("-.")[:40] or "vault"
    return cache_dir() / "graph" / f"{name}-{digest}.json"


def _parser_digest() -> str:
    here = Path(__file__).parent
    h = hashlib.sha256()
    for name in _PARSERS:
        h.update((here / name).read_bytes())
    return h.hexdigest()[:16]


def _header(vault: Path, memory_root: str) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "parser": _parser_digest(),
        "vault": os.path.realpath(vault),
        "root": memory_root,
    }


def load(vault: Path, memory_root: str) -> Files:
    """The entries saved for this vault, or none when the file is absent, damaged or not this one's."""
    try:
        raw = json.loads(cache_path(vault, memory_root).read_bytes())
        if not isinstance(raw, dict) or raw.get("header") != _header(vault, memory_root):
            return {}
        return {rel: (_file_key(key), _decode(item)) for rel, key, item in raw["files"]}
    except (OSError, ValueError, TypeError, KeyError, IndexError):
        return {}  # derived data: read the notes instead


def save(vault: Path, memory_root: str, files: Files) -> None:
    """Write the entries (atomically; a failure leaves the old file, or none)."""
    from shardpy.fsutil import atomic_write

    path = cache_path(vault, memory_root)
    body = {
        "header": _header(vault, memory_root),
        "files": [[rel, list(key), _encode(item)] for rel, (key, item) in files.items()],
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogatepass")
    atomic_write(path.parent, path.name, data, durable=False)


def _file_key(raw: Any) -> FileKey:
    size, mtime, ino = raw
    if not all(isinstance(x, int) for x in (size, mtime, ino)):
        raise TypeError("a stat key holds integers")
    return (size, mtime, ino)


def _encode(item: Entity | Invalid) -> list[Any]:
    if isinstance(item, Invalid):
        return ["invalid", item.path, item.problem]
    e = item
    facts = [[f.text, f.key, f.valid_from, f.valid_to] for f in e.facts]
    return [
        "entity",
        e.name,
        e.entity_type,
        e.status,
        e.scope,
        list(e.projects),
        list(e.platforms),
        facts,
        [list(r) for r in e.relations],
        e.path,
        e.fm_text,
        e.preamble,
        e.others,
        e.loose,
        e.links,
        e.foreign,
    ]


def _decode(raw: list[Any]) -> Entity | Invalid:
    if raw[0] == "invalid":
        return Invalid(_str(raw[1]), _str(raw[2]))
    if raw[0] != "entity" or len(raw) != 16:
        raise ValueError("not an entry")
    _, name, etype, status, scope, projects, platforms, facts, relations, path, fm_text = raw[:11]
    preamble, others, loose, links, foreign = raw[11:]
    return Entity(
        name=_str(name),
        entity_type=_str(etype),
        status=_str(status),
        scope=_str(scope),
        projects=tuple(_str(p) for p in projects),
        platforms=tuple(_str(p) for p in platforms),
        facts=[_fact(f) for f in facts],
        relations=[(_str(t), _str(to)) for t, to in relations],
        path=_str(path),
        fm_text=_str(fm_text),
        fm_data=None,  # read from fm_text when a write renders the note
        preamble=_str(preamble),
        others=_str(others),
        loose={_str(k): _str(v) for k, v in loose.items()},
        links={_str(k): _str(v) for k, v in links.items()},
        foreign=bool(foreign),
    )


def _fact(raw: list[Any]) -> Fact:
    text, key, start, end = raw
    for instant in (start, end):
        if instant is not None and not isinstance(instant, int):
            raise TypeError("an instant is an integer")
    return Fact(_str(text), None if key is None else _str(key), start, end)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("a text field holds a string")
    return value
