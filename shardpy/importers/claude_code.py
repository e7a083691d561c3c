"""Claude Code auto-memory: one note per fact file of each project's ``memory/`` folder.

SOURCE may be a ``projects/`` folder, one ``<encoded-project>/`` folder, or
its ``memory/`` folder. Only ``memory/`` is read, never session transcripts.
``MEMORY.md`` index files are never imported; they are read to report index
lines pointing at missing files and fact files no index lists.
"""

from __future__ import annotations

import os
import posixpath
import re
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_bytes as sha256
from shardpy.fsutil import utf8_name
from shardpy.importers.links import Resolver, rewrite_body
from shardpy.importers.models import Built, Provenance, Record, SourceChanged
from shardpy.importers.names import sanitize_path_part, stem_for
from shardpy.importers.provenance import link_signature, provenance_items
from shardpy.importers.walk import Found, read_text, walk_source
from shardpy.notes.blocks import inline_blocks
from shardpy.notes.frontmatter import as_text, render_block, split_fences, split_frontmatter
from shardpy.notes.note import is_note_name, without_ext
from shardpy.notes.note import stem as note_stem
from shardpy.plan.importplan import Notice, Skipped

FORMAT = "claude-code-memory"
INDEX_NAME = "MEMORY.md"
KNOWN_TYPES = ("user", "feedback", "project", "reference")
_INDEX_LINK = re.compile(r"\[[^\]]*\]\(\s*<?([^)>\s]+)>?\s*\)")
_LENIENT_KEY = re.compile(r"^([A-Za-z_][\w-]*):[ \t]*(.*?)\s*$")


@dataclass(frozen=True, slots=True)
class Project:
    encoded: str
    memory: Path


# Keys the import sets that a fact's own frontmatter may already hold: the fact's values stay.
_THEIRS = frozenset({"scope", "projects", "project", "session_id", "modified"})


@dataclass(frozen=True, slots=True)
class FactLoc:
    path: str
    fm_state: str
    lenient: tuple[tuple[str, str], ...]  # keys read line by line from malformed frontmatter
    data_keys: tuple[tuple[str, Any], ...]  # the source block's keys and values


def find_projects(source: Path) -> list[Project]:
    """The ``memory/`` folders SOURCE stands for (see the module docstring)."""
    if source.name == "memory":
        return [Project(source.resolve().parent.name, source)]
    mem = source / "memory"
    if mem.is_dir() and not mem.is_symlink():
        return [Project(source.resolve().name, mem)]
    projects: list[Project] = []
    try:
        children = sorted(source.iterdir(), key=lambda p: p.name)
    except OSError as exc:
        raise ShardpyError(
            "IMPORT_SOURCE_UNREADABLE",
            f"Cannot list {source}: {exc.strerror or exc}",
            "Check the permissions.",
        ) from exc
    for child in children:
        name = child.name
        if name.startswith(".") or not utf8_name(name) or child.is_symlink() or not child.is_dir():
            continue
        sub = child / "memory"
        if sub.is_dir() and not sub.is_symlink():
            projects.append(Project(child.name, sub))
    if projects:
        return projects
    if any(p.is_file() and is_note_name(p.name) for p in children):
        # An autoMemoryDirectory override can have any name: treat it as a memory folder.
        return [Project(source.resolve().name, source)]
    raise ShardpyError(
        "IMPORT_SOURCE_LAYOUT",
        f"No Claude Code memory folder found in {source}",
        "Point SOURCE at ~/.claude/projects, one <encoded-project> folder in it, or its memory/ folder.",
        path=str(source),
    )


def _lenient(fm_text: str) -> tuple[tuple[str, str], ...]:
    """Top-level ``key: value`` lines of frontmatter YAML could not parse (unquoted ': ' is common)."""
    out: list[tuple[str, str]] = []
    for line in fm_text.splitlines():
        if line[:1].isspace():
            continue
        m = _LENIENT_KEY.match(line)
        if m:
            out.append((m.group(1), m.group(2).strip("'\"")))
    return tuple(out)


def memory_type(data: dict[str, Any]) -> str | None:
    meta = data.get("metadata")
    if isinstance(meta, dict):
        t = as_text(meta.get("type"))
        if t:
            return t
    return as_text(data.get("type")) or None


def project_name(encoded: str) -> str | None:
    """The caller name ``shardpy serve`` gives the repository a Claude Code project folder stands for.

    Claude Code names the folder after the repository's path with ``/`` and ``.`` written as ``-``;
    the path is found again on disk where it still exists (so ``atlas-api`` stays one name), and its
    ``.shardmind-project`` marker wins as it does for a live caller. Otherwise: the last segment.
    """
    from shardpy.serve.identity import project_of_folder, valid_name

    if not encoded.startswith("-"):
        return valid_name(encoded)
    parts = encoded[1:].split("-")
    found = _find_path("/", parts[0], parts[1:])
    if found is not None:
        return project_of_folder(Path(found))
    return valid_name(parts[-1])


def _find_path(folder: str, name: str, rest: list[str]) -> str | None:
    """The existing folder whose path, with ``/`` and ``.`` as ``-``, is ``folder/name-rest...``."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    if not any(e.startswith(name) for e in entries):
        return None  # no entry here begins this way: prune
    here = os.path.join(folder, name)
    if not rest:
        return here if name in entries and os.path.isdir(here) else None
    head, tail = rest[0], rest[1:]
    if name in entries and os.path.isdir(here) and not os.path.islink(here):
        deeper = _find_path(here, head, tail)
        if deeper is not None:
            return deeper
    for joined in (f"{name}-{head}", f"{name}.{head}"):
        found = _find_path(folder, joined, tail)
        if found is not None:
            return found
    return None


def project_scope(target: str, source_path: str) -> str:
    """The vault folder (with a trailing slash) holding the notes of ``source_path``'s project."""
    rel = source_path.split("/", 2)[2] if source_path.count("/") >= 2 else source_path
    depth = rel.count("/") + 1
    return "/".join(target.split("/")[:-depth]) + "/"


class ClaudeCodeAdapter:
    format = FORMAT

    def __init__(self, source: Path, *, strict: bool = False) -> None:
        self.source = source
        self.strict = strict
        self.projects = find_projects(source)

    def scan(self) -> Iterator[Record | Skipped | Notice]:
        for project in self.projects:
            yield from self._scan_project(project)

    def _scan_project(self, project: Project) -> Iterator[Record | Skipped | Notice]:
        prefix = f"{project.encoded}/memory/"
        facts: list[str] = []
        indexes: list[str] = []
        for item in walk_source(project.memory, prefix=prefix):
            if isinstance(item, Skipped):
                yield item
                continue
            rel = item.rel
            if rel.rsplit("/", 1)[-1] == INDEX_NAME:
                indexes.append(rel)
                yield Skipped(
                    prefix + rel, "index file (not imported; checked for missing and unlisted files)"
                )
                continue
            if not is_note_name(rel):
                yield Skipped(prefix + rel, "not a Markdown file")
                continue
            record = self._fact(project, item)
            if isinstance(record, Record):
                facts.append(rel)
            yield record
        yield from self._check_indexes(project, prefix, indexes, facts)

    def _fact(self, project: Project, item: Found) -> Record | Skipped:
        prefix = f"{project.encoded}/memory/"
        source_path = prefix + item.rel
        raw, text, reason = read_text(item.path)
        if text is None:
            return Skipped(source_path, reason or "unreadable")
        split = split_frontmatter(text)
        warnings: tuple[str, ...] = ()
        lenient: tuple[tuple[str, str], ...] = ()
        data: dict[str, Any] = split.data
        if split.state == "malformed":
            msg = f"malformed frontmatter ({split.error})"
            if self.strict:
                return Skipped(source_path, f"{msg} (--strict)")
            warnings = (f"{msg}: imported with the whole text as body",)
            lenient = _lenient(split.fm_text)
            data = dict(lenient)
        src_stem = note_stem(item.rel)
        name = (as_text(data.get("name")) or "").strip() or src_stem
        mtype = memory_type(data)
        if mtype is not None and mtype not in KNOWN_TYPES:
            warnings = (*warnings, f"unknown memory type {mtype!r} kept as it is")
        stem, renamed = stem_for(name)
        folder_parts = [project.encoded, *item.rel.split("/")[:-1]]
        folder = "/".join(sanitize_path_part(p) for p in folder_parts)
        # Every key of the source block with its value: one this import sets and the block already
        # has is replaced or kept, never written a second time (a duplicate key made the whole
        # frontmatter unreadable: tests/importers/test_claude_code_keys.py).
        data_keys = tuple((k, v) for k, v in data.items() if isinstance(k, str))
        return Record(
            source_path,
            "note",
            mtype,
            name,
            stem,
            folder,
            sha256(raw),
            FactLoc(item.path, split.state, lenient, data_keys),
            names=(name,),
            keys=(src_stem, without_ext(item.rel), src_stem.replace("_", "-")),
            warnings=warnings,
            renamed=renamed,
        )

    def _check_indexes(
        self, project: Project, prefix: str, indexes: list[str], facts: list[str]
    ) -> Iterator[Notice]:
        listed: set[str] = set()
        for index_rel in indexes:
            _, text, _ = read_text(project.memory / index_rel)
            if text is None:
                continue
            folder = index_rel.rsplit("/", 1)[0] if "/" in index_rel else ""
            for lineno, line in enumerate(text.splitlines(), 1):
                for m in _INDEX_LINK.finditer(line):
                    url = m.group(1)
                    if "://" in url or url.startswith(("#", "mailto:")):
                        continue
                    path = urllib.parse.unquote(url.split("#", 1)[0])
                    rel = (
                        posixpath.normpath(posixpath.join(folder, path))
                        if folder
                        else posixpath.normpath(path)
                    )
                    listed.add(rel)
                    if not (project.memory / rel).is_file():
                        yield Notice(prefix + index_rel, f"line {lineno} points to a missing file: {path}")
        if not indexes and facts:
            yield Notice(prefix, f"no {INDEX_NAME} index in this memory folder")
            return
        for rel in facts:
            if rel not in listed:
                yield Notice(prefix + rel, f"not listed in any {INDEX_NAME}")

    def build(self, record: Record, resolver: Resolver, prov: Provenance) -> Built:
        loc: FactLoc = record.locator
        raw, text, reason = read_text(loc.path)
        if text is None or sha256(raw) != record.source_hash:
            raise SourceChanged(reason or record.source_path)
        fences = split_fences(text) if loc.fm_state == "present" else None
        body = fences[1] if fences is not None else text
        newline = fences[2] if fences is not None else ("\r\n" if "\r\n" in text[:2000] else "\n")
        blocks = inline_blocks(body)
        # Memories link within their project: a name shared across projects resolves to this one's.
        scope = project_scope(record.target, record.source_path)
        new_body, uses = rewrite_body(
            body, blocks, resolver, source_dir="", target=record.target, resolve_md_links=False, scope=scope
        )
        known = dict(loc.data_keys)
        updates: list[tuple[str, str | list[str]]] = []
        if loc.fm_state != "present":
            # The source block (if any) stays in the body; the new one carries what could be read.
            lenient = dict(loc.lenient)
            updates.append(("name", record.name))
            if lenient.get("description"):
                updates.append(("description", lenient["description"]))
            known = {}
        if record.type is not None:
            top = as_text(known.get("type"))
            if top is not None and top != record.type:
                # metadata.type wins; the differing top-level value is kept beside it.
                updates.append(("top_level_type", top))
            updates.append(("type", record.type))
        meta = self._metadata(text) if loc.fm_state == "present" else {}
        updates += _reach_items(record, meta, known)
        # The user's own reach and session keys are theirs (as the basic-memory import keeps them).
        updates = [(k, v) for k, v in updates if k not in _THEIRS or k not in known]
        updates.extend(provenance_items(prov, record.source_path, record.source_hash, source_keys=known))
        if fences is not None:
            block = render_block(fences[0], known, updates, newline)
        else:
            block = render_block("", {}, updates, newline)
            if not body.startswith(("\n", "\r\n")):
                block += newline
        data = (block + new_body).encode("utf-8")
        return Built(data, ["fact"], uses, link_signature(uses))

    @staticmethod
    def _metadata(text: str) -> dict[str, Any]:
        split = split_frontmatter(text)
        meta = split.data.get("metadata")
        return meta if isinstance(meta, dict) else {}

    def observations_of(self, data: bytes) -> list[str]:
        # A fact file is one fact: re-importing a changed file adds none.
        return ["fact"]


Items = list[tuple[str, str | list[str]]]


def _reach_items(record: Record, meta: dict[str, Any], known: dict[str, Any]) -> Items:
    """The fact's session, project, reach and aliases as frontmatter items (before the fact's own
    keys are preferred: :data:`_THEIRS`)."""
    encoded = record.source_path.split("/", 1)[0]
    updates: list[tuple[str, str | list[str]]] = []
    session = as_text(meta.get("originSessionId"))
    if session:
        updates.append(("session_id", session))
    modified = as_text(meta.get("modified"))
    if modified:
        updates.append(("modified", modified))
    updates.append(("project", encoded))
    # The reach `shardpy serve` recalls it by: a fact about the user reaches every repository,
    # any other fact the project it was learnt in (docs/SERVE.md, "Import").
    if record.type == "user":
        updates.append(("scope", "general"))
    else:
        name = project_name(encoded)
        updates += [("scope", "project"), ("projects", [name] if name else [])]
    if note_stem(record.target) != record.name:
        mine = known.get("aliases")
        if mine is None:
            updates.append(("aliases", [record.name]))
        elif isinstance(mine, list) and all(isinstance(a, str) for a in mine) and record.name not in mine:
            updates.append(("aliases", [*mine, record.name]))  # the fact's own aliases kept
    return updates
