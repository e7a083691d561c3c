"""basic-memory projects: one vault note per source note, body kept verbatim.

The frontmatter keeps every source key byte for byte; provenance (and the
title in ``aliases`` when the file name had to differ from it) is added.
Non-Markdown files are copied beside their notes. See docs/IMPORT.md.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from shardpy.fsutil import sha256_bytes as sha256
from shardpy.fsutil import sha256_stream
from shardpy.importers.bm_grammar import observation_count, observation_texts
from shardpy.importers.links import Resolver, apply_recipe, link_recipe, rewrite_body, splice
from shardpy.importers.models import Built, Provenance, Record, SourceChanged
from shardpy.importers.names import sanitize_path_part, stem_for
from shardpy.importers.pool import read_all
from shardpy.importers.provenance import PROVENANCE_KEYS, link_signature, provenance_items
from shardpy.importers.walk import Found, read_text, walk_source
from shardpy.notes.blocks import inline_blocks
from shardpy.notes.frontmatter import as_list, as_text, render_block, split_fences, split_frontmatter
from shardpy.notes.note import is_note_name, without_ext
from shardpy.notes.note import stem as note_stem
from shardpy.plan.importplan import Notice, Skipped

FORMAT = "basic-memory"

# basic-memory's default .bmignore (dot files are refused by the walk already).
DEFAULT_IGNORE = [
    "*.db",
    "*.db-*",
    "*.db.*",
    "config.json",
    "node_modules/",
    "build/",
    "dist/",
    "venv/",
    "env/",
    "__pycache__/",
    "*.tmp",
    "*.swp",
    "*~",
    "Thumbs.db",
    "Desktop.ini",
]


class NoteLoc(NamedTuple):
    """What ``build`` needs to know about a note besides its bytes (read again from the source path).

    A named tuple rather than a frozen dataclass: one is made in a reading worker and
    unpickled in the planning process per note, ~3x faster each way.
    """

    fm_state: str  # present | absent | malformed
    fm_error: str
    aliases: tuple[str, ...]  # the source's own aliases (when it has the key)
    has_aliases_key: bool
    clashing_keys: bool  # the source already uses one of our provenance keys


def spec_matcher(lines: list[str]) -> Callable[[str], bool]:
    """``pathspec`` gitignore matching for ``lines``, as one regex when that is the same thing.

    With only including patterns a path is ignored when any pattern matches,
    so their regexes can be tried in one alternation (C speed instead of a
    Python loop over patterns); negations keep pathspec's own ordered loop.
    """
    import pathspec

    spec = pathspec.PathSpec.from_lines("gitignore", lines)
    patterns = [p for p in spec.patterns if p.include is not None]
    regexes = [getattr(p, "regex", None) for p in patterns]
    if (
        not patterns
        or not all(p.include for p in patterns)
        or not all(isinstance(r, re.Pattern) and not r.groupindex for r in regexes)
    ):
        return lambda rel: bool(spec.match_file(rel))
    combined = re.compile("|".join(f"(?:{r.pattern})" for r in regexes if r is not None))
    return lambda rel: combined.match(rel) is not None


def _ignore_matcher(root: Path) -> Callable[[str, bool], bool]:
    base = spec_matcher(DEFAULT_IGNORE)
    gitignore = root / ".gitignore"
    extra = None
    if gitignore.is_file() and not gitignore.is_symlink():
        try:
            extra = spec_matcher(gitignore.read_text("utf-8", "replace").splitlines())
        except Exception:  # a broken .gitignore never stops an import
            extra = None

    def ignore(rel: str, is_dir: bool) -> bool:
        probe = rel + "/" if is_dir else rel
        return base(probe) or (extra is not None and extra(probe))

    return ignore


class BasicMemoryAdapter:
    format = FORMAT

    def __init__(self, root: Path, *, strict: bool = False) -> None:
        self.root = root
        self.strict = strict
        self._folders: dict[str, str] = {}  # source folder → vault folder
        self._prefix = str(root) + os.sep

    def scan(self) -> Iterator[Record | Skipped | Notice]:
        return read_all(self.read_found, self.walk())

    def walk(self) -> Iterator[Found | Skipped]:
        """The cheap half of ``scan``: which files there are (``read_found`` reads each)."""
        return walk_source(self.root, ignore=_ignore_matcher(self.root))

    def read_found(self, item: Found) -> list[Record | Skipped | Notice]:
        """The record (or the reason to skip) of one walked file; independent per file."""
        rel = item.rel
        source_folder = rel.rpartition("/")[0]
        folder = self._folders.get(source_folder)
        if folder is None:  # once per folder: every note of it shares the string
            folder = (
                "/".join(sanitize_path_part(p) for p in source_folder.split("/")) if source_folder else ""
            )
            self._folders[source_folder] = folder
        if not is_note_name(rel):
            try:
                with open(item.path, "rb") as fh:
                    digest = sha256_stream(fh)
            except OSError as exc:
                return [Skipped(rel, f"unreadable: {exc.strerror or exc}")]
            name = rel.rsplit("/", 1)[-1]
            if item.size == 0:
                return [Skipped(rel, "empty file")]
            safe = sanitize_path_part(name)
            return [
                Record(
                    rel,
                    "attachment",
                    "file",
                    name,
                    safe,
                    folder,
                    digest,
                    None,
                    names=(name,),
                    keys=(rel,),
                    renamed=safe != name,
                    prepared=(0, "[]"),
                )
            ]
        raw, text, reason = read_text(item.path)
        if text is None:
            return [Skipped(rel, reason or "unreadable")]
        return list(self._note_record(rel, folder, raw, text))

    def _note_record(
        self, rel: str, folder: str, raw: bytes, text: str
    ) -> Iterator[Record | Skipped | Notice]:
        split = split_frontmatter(text)
        warnings: tuple[str, ...] = ()
        if split.state == "malformed":
            msg = f"malformed frontmatter ({split.error})"
            if self.strict:
                yield Skipped(rel, f"{msg} (--strict)")
                return
            warnings = (f"{msg}: imported with the whole text as body",)
        data = split.data
        src_stem = note_stem(rel)
        title = (as_text(data.get("title")) or "").strip() or src_stem
        if title == src_stem:
            src_stem = title  # one string for both (100,000 records are kept until the end)
        note_type = sys.intern(as_text(data.get("type")) or "note")
        permalink = as_text(data.get("permalink")) or ""
        own_aliases = tuple(as_list(data.get("aliases")))
        stem, renamed = stem_for(title)
        keys = [without_ext(rel), src_stem, *own_aliases]
        if permalink:
            keys.append(permalink)
            if "/" in permalink:
                # Project-prefixed (0.19+) and bare legacy permalinks both appear in links.
                keys.append(permalink.split("/", 1)[1])
                keys.append(permalink.rsplit("/", 1)[1])
        loc = NoteLoc(
            split.state,
            split.error,
            own_aliases,
            "aliases" in data,
            any(k in data for k in PROVENANCE_KEYS),
        )
        # The body's observations and links are found now, while the text is at hand (and, for a
        # large import, in a worker process); the second pass only resolves and renders.
        body = split.body if split.state == "present" else text
        blocks = inline_blocks(body)
        prepared = (observation_count(blocks), _encode_recipe(link_recipe(body, blocks, md_links=True)))
        yield Record(
            rel,
            "note",
            note_type,
            title,
            stem,
            folder,
            sha256(raw),
            loc,
            names=(title,),
            keys=tuple(keys),
            warnings=warnings,
            renamed=renamed,
            prepared=prepared,
        )

    def build(self, record: Record, resolver: Resolver, prov: Provenance) -> Built:
        if record.kind == "attachment":
            return Built(self._attachment(record), [], [], "")
        loc: NoteLoc = record.locator
        text, fences, body = self._source(record)
        blocks = inline_blocks(body)
        found = observation_texts(blocks)
        new_body, uses = rewrite_body(
            body,
            blocks,
            resolver,
            source_dir=_folder_of(record.source_path),
            target=record.target,
            resolve_md_links=True,
        )
        data = self._render(record, loc, text, fences, body, new_body, prov)
        return Built(data, found, uses, link_signature(uses))

    def prepare(self, record: Record, resolver: Resolver, prov: Provenance) -> PreparedNote | None:
        """``build`` from what the first pass found: nothing is read or rendered unless asked for."""
        if record.prepared is None:
            return None
        return PreparedNote(self, record, resolver, prov)

    def _attachment(self, record: Record) -> bytes:
        with open(self._prefix + record.source_path, "rb") as fh:
            data = fh.read()
        if sha256(data) != record.source_hash:
            raise SourceChanged(record.source_path)
        return data

    def _source(self, record: Record) -> tuple[str, tuple[str, str, str] | None, str]:
        """(text, fences, body) of a note as the first pass saw it, else SourceChanged."""
        loc: NoteLoc = record.locator
        raw, text, reason = read_text(self._prefix + record.source_path)
        if text is None or sha256(raw) != record.source_hash:
            raise SourceChanged(reason or record.source_path)
        fences = split_fences(text) if loc.fm_state == "present" else None
        if loc.fm_state == "present" and fences is None:
            raise SourceChanged(record.source_path)
        body = fences[1] if fences is not None else text
        return text, fences, body

    def _render(
        self,
        record: Record,
        loc: NoteLoc,
        text: str,
        fences: tuple[str, str, str] | None,
        body: str,
        new_body: str,
        prov: Provenance,
    ) -> bytes:
        newline = fences[2] if fences is not None else _newline(text)
        updates: list[tuple[str, str | list[str]]] = []
        if _file_stem(record.target) != record.name and _aliases_plain(fences, loc):
            aliases = list(loc.aliases)
            if record.name not in aliases:
                aliases.append(record.name)
                updates.append(("aliases", aliases))
        theirs = PROVENANCE_KEYS if loc.clashing_keys else ()
        updates.extend(provenance_items(prov, record.source_path, record.source_hash, source_keys=theirs))
        if fences is None or _SCOPE_KEY.search(fences[0]) is None:
            # A basic-memory project is the user's own knowledge base: it reaches every caller of
            # `shardpy serve`, as an MCP memory graph does (docs/SERVE.md, "Import"); a note's
            # own `scope` is kept (tests/hardening/test_basic_memory_reach.py).
            updates.append(("scope", "general"))
        if fences is not None:
            if loc.clashing_keys:
                known = split_frontmatter(text).data
            else:
                known = {"aliases": list(loc.aliases)} if loc.has_aliases_key else {}
            block = render_block(fences[0], known, updates, newline)
        else:
            block = render_block("", {}, updates, newline)
        if fences is None and not body.startswith(("\n", "\r\n")):
            block += newline
        return (block + new_body).encode("utf-8")

    def observations_of(self, data: bytes) -> list[str]:
        text = data.decode("utf-8", "replace").lstrip("\ufeff")
        split = split_frontmatter(text)
        body = split.body if split.state == "present" else text
        return observation_texts(inline_blocks(body))


class PreparedNote:
    """What ``build`` gives, from the first pass's findings: rendered only when ``data`` is asked for.

    The links are resolved at once (the plan needs every decision); the note
    is read again, checked against the first pass's hash and rendered only
    for a write or a comparison, and its observations are listed only for an
    update's count. A dry run of new notes never reads a note twice.
    """

    def __init__(self, adapter: BasicMemoryAdapter, record: Record, resolver: Resolver, prov: Provenance):
        count, recipe = record.prepared
        self._adapter = adapter
        self._record = record
        self._prov = prov
        self.observation_count: int = count
        self.links, self._edits = apply_recipe(
            json.loads(recipe), resolver, source_dir=_folder_of(record.source_path), target=record.target
        )
        self._link_sig: str | None = None
        self._data: bytes | None = None
        self._observations: list[str] | None = None
        self._read: tuple[str, tuple[str, str, str] | None, str] | None = None

    @property
    def link_sig(self) -> str:
        # Only a render key needs it, and a dry run of new notes computes none.
        if self._link_sig is None:
            self._link_sig = link_signature(self.links)
        return self._link_sig

    def _source(self) -> tuple[str, tuple[str, str, str] | None, str]:
        # An update asks for both the observations and the bytes: the note is read (and its
        # hash checked) once.
        if self._read is None:
            self._read = self._adapter._source(self._record)
        return self._read

    @property
    def data(self) -> bytes:
        if self._data is None:
            record = self._record
            if record.kind == "attachment":
                self._data = self._adapter._attachment(record)
            else:
                text, fences, body = self._source()
                self._data = self._adapter._render(
                    record, record.locator, text, fences, body, splice(body, self._edits), self._prov
                )
        return self._data

    @property
    def observations(self) -> list[str]:
        if self._observations is None:
            if self._record.kind == "attachment":
                self._observations = []
            else:
                body = self._source()[2]
                self._observations = observation_texts(inline_blocks(body))
        return self._observations


# One encoder for every note: ``json.dumps`` with options builds a new one per call (~2 us).
_ENCODE = json.JSONEncoder(ensure_ascii=False).encode


def _encode_recipe(items: list[list[Any]]) -> str:
    """The link recipe as the JSON text the second pass decodes ("[]" for a note without links)."""
    return _ENCODE(items) if items else "[]"


_SCOPE_KEY = re.compile(r"(?m)^scope[ \t]*:")


def _folder_of(source_path: str) -> str:
    return source_path.rsplit("/", 1)[0] if "/" in source_path else ""


def _file_stem(target: str) -> str:
    return note_stem(target)


def _newline(text: str) -> str:
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def _aliases_plain(fences: tuple[str, str, str] | None, loc: NoteLoc) -> bool:
    """The note's ``aliases`` may take the title: absent, or plain lines. Lines with an anchor
    (another key may alias them), an alias, a comment or a mapping stay the user's as written:
    rewritten, the anchor vanished and the key that used it made the YAML unreadable
    (tests/importers/test_alias_lines.py)."""
    if fences is None or not loc.has_aliases_key:
        return True
    from shardpy.notes.keylines import key_lines

    written = "".join(key_lines(fences[0].replace("\r\n", "\n"), "aliases"))
    return bool(written) and not any(c in written for c in "&*#{")
