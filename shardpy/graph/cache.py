"""The derived index on disk: each note's stat key and what it parsed to, so a new server (every
MCP session starts one) stats the notes instead of parsing all of them again (issue 28, "Speed":
a first call parsed 20,000 entity notes, minutes on a loaded machine).

It lives in the user's cache folder (``<cache>/graph/<vault name>-<digest>.sqlite3``, keyed by the
vault's real path and the memory root, like the search index: ``index.store.index_path``), never
in the vault, so git never syncs it. It is derived: a note whose size, mtime or inode differs from
its row is read again, a file that is missing, damaged, for another vault or written by another
version of the parser is ignored (and rewritten whole at the next save), and deleting it is always
safe. Each row is one note: a save writes the rows of the notes that changed since the last one
(a write changes one note; rewriting 20,000 held the interpreter for seconds in the middle of
calls), and a row pairs a stat key with what that very file parsed to, so two servers saving at
once never make a wrong pair. The item is JSON, never pickle: loading it builds plain values.
The frontmatter is kept as its text (``Entity.fm_text``; ``note.frontmatter_data`` reads it again
for a write).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from shardpy.fsutil import sha256_bytes
from shardpy.graph.facts import Fact
from shardpy.graph.note import Entity, Invalid

FORMAT = 2
_PARSERS = ("note.py", "foreign.py", "facts.py")  # a change to any of them changes what a note parses to
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS notes (
    path TEXT PRIMARY KEY, size INTEGER NOT NULL, mtime INTEGER NOT NULL, ino INTEGER NOT NULL,
    item TEXT NOT NULL
);
"""

FileKey = tuple[int, int, int]
Files = dict[str, tuple[FileKey, Entity | Invalid]]


def cache_path(vault: Path, memory_root: str) -> Path:
    from shardpy.cachedir import cache_dir

    real = os.path.realpath(vault)
    digest = sha256_bytes(f"{real}\0{memory_root}".encode("utf-8", "surrogateescape"))[:16]
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(real).name).strip("-.")[:40] or "vault"
    return cache_dir() / "graph" / f"{name}-{digest}.sqlite3"


def _parser_digest() -> str:
    here = Path(__file__).parent
    return sha256_bytes(b"".join((here / name).read_bytes() for name in _PARSERS))[:16]


def _header(vault: Path, memory_root: str) -> dict[str, str]:
    real = os.path.realpath(vault)
    return {"format": str(FORMAT), "parser": _parser_digest(), "vault": real, "root": memory_root}


def load(vault: Path, memory_root: str) -> Files:
    """The rows saved for this vault, or none when the file is absent, damaged or not this one's."""
    path = cache_path(vault, memory_root)
    if not path.is_file():
        return {}
    try:
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as conn:
            if dict(conn.execute("SELECT key, value FROM meta")) != _header(vault, memory_root):
                return {}
            rows = conn.execute("SELECT path, size, mtime, ino, item FROM notes").fetchall()
        return {rel: (_file_key((a, b, c)), _decode(json.loads(item))) for rel, a, b, c, item in rows}
    except (sqlite3.Error, ValueError, TypeError, KeyError, IndexError):
        return {}  # derived data: read the notes instead


def save(vault: Path, memory_root: str, files: Files, changed: set[str] | None) -> None:
    """Write the rows of ``changed`` (a note gone: its row deleted), or, when None or when the file
    is not this vault's, every row of ``files`` anew (the header last)."""
    path = cache_path(vault, memory_root)
    path.parent.mkdir(parents=True, exist_ok=True)
    header = _header(vault, memory_root)
    with contextlib.closing(sqlite3.connect(path, timeout=5.0, isolation_level=None)) as conn:
        conn.execute("PRAGMA synchronous = OFF")  # a cache: a crash costs a re-read, never a wrong row
        conn.executescript(_SCHEMA)
        conn.execute("BEGIN IMMEDIATE")
        try:
            if changed is None or dict(conn.execute("SELECT key, value FROM meta")) != header:
                conn.execute("DELETE FROM meta")
                conn.execute("DELETE FROM notes")
                changed = set(files)
                conn.executemany("INSERT INTO meta VALUES (?, ?)", header.items())
            gone = [(rel,) for rel in changed if rel not in files]
            conn.executemany("DELETE FROM notes WHERE path = ?", gone)
            conn.executemany("INSERT OR REPLACE INTO notes VALUES (?, ?, ?, ?, ?)", _rows(files, changed))
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise


def _rows(files: Files, rels: set[str]) -> Iterator[tuple[str, int, int, int, str]]:
    """One row a note, encoded as it is inserted (Python between rows: a call can run meanwhile)."""
    for rel in rels:
        got = files.get(rel)
        if got is not None:
            (size, mtime, ino), item = got
            yield rel, size, mtime, ino, json.dumps(_encode(item), ensure_ascii=False, separators=(",", ":"))


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
