"""Which notes the server serves: two questions, one function each, one admission rule.

``Exposure.notes()`` answers "which notes exist for this caller" (expand's
links and backlinks, the resource listing and health are built from it).
``Exposure.may_read(path)`` answers "may this one path be read" (each search
hit, expand, resources/read). Every reference a caller sends (a
``vault://note/`` URI, an expand argument) is first reduced to ONE clean
vault path (:func:`uri_path`, :func:`is_clean_relpath`) and that path alone is
asked ``may_read``. Both questions end in :meth:`Exposure._admit`.

The rule (docs/SERVE.md "Exposure", docs/SECURITY.md "The MCP caller"):

- roots by :func:`resolve_roots` (seed 000's resolveExposure): ``mcp_exposed_roots``
  when declared (source ``manifest``), else the ``user_content_roots`` present
  on disk at their declared granularity (``derived``), else ``brain/`` and
  ``reference/`` (``fallback``); the memory root stripped always;
- everything else is the one admission rule of every reader, ``shardpy.notes.visibility``: the
  index's walker and paper checks (no dot segment, no ``transcripts``/``credentials``/... folder,
  no sync-conflict copy, nothing ``mcp_never_expose`` names, nothing the index's own
  include/exclude or depth bound leaves out), the memory root (served by recall only), and what
  the note says (private, soft-deleted, frontmatter that cannot be fully inspected in the first
  4,096 bytes); the server adds only the roots on top, so it serves nothing the index does not
  hold (tests/notes/test_visibility_properties.py);
- **no symbolic link is ever served**, as a note or as a folder on the way
  (the index never follows one either): a link's target is not the note the
  caller asked for, and containing it would need the full rule re-applied to
  the target (tests/security/test_serve_exposure.py::test_links_are_never_served).
"""

from __future__ import annotations

import fnmatch
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import unquote

from shardpy.controls import has_control
from shardpy.fsutil import open_regular
from shardpy.index.config import IndexConfig
from shardpy.notes import visibility
from shardpy.notes.visibility import Entry, under
from shardpy.vault.manifest import ContentRules, vault_content_rules

__all__ = ["URI_PREFIX", "Exposure", "Manifest", "Note", "clean_root", "inside", "under", "uri_path"]

ROOT_TTL = 1.0  # seconds the resolved roots are reused
URI_PREFIX = "vault://note/"
FALLBACK_ROOTS = ("brain", "reference")
_GLOB = set("*?[")
Source = Literal["manifest", "derived", "fallback"]


@dataclass(frozen=True, slots=True)
class Note:
    path: str  # vault-relative POSIX path
    title: str
    description: str
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Manifest:
    """The parts of vault-manifest.json the server reads."""

    exposed_roots: tuple[str, ...]
    memory_root: str | None
    user_content_roots: tuple[str, ...]
    context: str
    rules: ContentRules = field(default_factory=ContentRules, compare=False)

    @staticmethod
    def read(vault: Path) -> Manifest:
        """From the vault's manifest, read by the one reader every surface shares."""
        rules = vault_content_rules(vault)
        return Manifest(
            exposed_roots=tuple(clean_root(r) for r in rules.exposed_roots if r.strip()),
            memory_root=clean_root(rules.memory_root) if rules.memory_root else None,
            user_content_roots=tuple(clean_root(r) for r in rules.user_content_roots if r.strip()),
            context=rules.qmd_context,
            rules=rules,
        )


def clean_root(root: str) -> str:
    """A declared root as a vault path without slashes at either end ("" is the vault)."""
    return root.strip().strip("/")


def inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def is_clean_relpath(rel: str) -> bool:
    """A vault-relative POSIX path with no empty, '.', '..' segment and no NUL, backslash or control."""
    if not rel or rel.startswith("/") or "\\" in rel or has_control(rel):
        return False
    return all(p and p not in (".", "..") for p in rel.split("/"))


def uri_path(uri: str) -> str | None:
    """The one vault path a ``vault://note/`` URI names (percent-decoded once), or None.

    A query or fragment part, bytes that do not decode as UTF-8, and any path that is not
    clean after the single decoding (``..``, ``%2e%2e``, ``%00``, a backslash, ``//``) name
    nothing; ``%252e`` decodes to the literal ``%2e`` (tests/security/test_serve_exposure.py)."""
    if not uri.startswith(URI_PREFIX):
        return None
    raw = uri[len(URI_PREFIX) :]
    if "?" in raw or "#" in raw:
        return None
    try:
        path = unquote(raw, errors="strict")
    except UnicodeDecodeError:
        return None
    return path if is_clean_relpath(path) else None


def is_glob(root: str) -> bool:
    return bool(_GLOB & set(root))


def glob_match(rel: str, pattern: str) -> bool:
    """Segment by segment (``*`` never crosses a ``/``; ``**`` is not a root: see resolve_roots)."""
    parts, pats = rel.split("/"), pattern.split("/")
    return len(parts) == len(pats) and all(
        fnmatch.fnmatchcase(p, q) for p, q in zip(parts, pats, strict=True)
    )


def _static_prefix(root: str) -> str:
    """The folders of a glob root before its first wildcard segment (``perf/*.md`` → ``perf``)."""
    parts = root.split("/")
    fixed = []
    for part in parts:
        if is_glob(part):
            break
        fixed.append(part)
    return "/".join(fixed)


def _usable(root: str, mem: str | None) -> bool:
    """A declared root the server may serve from: clean, no dot segment, no ``**``, not the memory root."""
    if root and (not is_clean_relpath(root) or any(p.startswith(".") for p in root.split("/"))):
        return False
    if "**" in root:
        return False  # conservative: a recursive glob would admit folders nobody named
    if mem is not None:
        folded, memf = root.casefold(), mem.casefold()
        if under(folded, memf) or (is_glob(root) and under(_static_prefix(folded), memf)):
            return False
    return True


def _present(vault: Path, root: str) -> bool:
    base = _static_prefix(root) if is_glob(root) else root
    full = vault / base if base else vault
    try:
        st = os.lstat(full)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) or (stat.S_ISREG(st.st_mode) and not is_glob(root))


def resolve_roots(manifest: Manifest, vault: Path) -> tuple[Source, tuple[str, ...]]:
    """The served roots and which source decided them (seed 000's resolveExposure; health reports it).

    ``mcp_exposed_roots`` declared → those; else the ``user_content_roots`` present on disk, as
    declared (``work/active``, a file, or a one-level glob such as ``perf/*.md``); else ``brain``
    and ``reference``. The memory root is stripped from each list (and again per path)."""
    mem = manifest.memory_root
    if manifest.exposed_roots:
        return "manifest", tuple(r for r in manifest.exposed_roots if _usable(r, mem))
    derived = tuple(r for r in manifest.user_content_roots if _usable(r, mem) and r and _present(vault, r))
    if derived:
        return "derived", derived
    return "fallback", FALLBACK_ROOTS


def _note_of(rel: str, head: str) -> Note:
    # Here, not at the top: the frontmatter module (YAML) is not needed to answer initialize.
    from shardpy.notes.frontmatter import as_list, split_frontmatter
    from shardpy.notes.note import first_heading, stem, title

    split = split_frontmatter(head)
    data = split.data if split.state == "present" else {}
    description = data.get("description")
    # The one title rule (notes/note.title: frontmatter, first heading, stem), as search shows it:
    # expand and the resource list named a note by its file name where search used its heading
    # (a helper's probe; tests/serve/test_units.py).
    body = split.body if split.state == "present" else head
    return Note(
        rel,
        title(data, first_heading(body), stem(rel)),
        description if isinstance(description, str) else "",
        tuple(as_list(data.get("tags"))),
    )


@dataclass
class Exposure:
    """The exposure policy of one vault, with a parse cache keyed on (size, mtime, inode)."""

    vault: Path  # the realpath of the vault
    manifest: Manifest
    index: IndexConfig = field(default_factory=IndexConfig)
    _cache: dict[str, tuple[tuple[int, int, int], Note | None]] = field(default_factory=dict)
    _resolved: tuple[float, Source, tuple[str, ...]] | None = None

    @staticmethod
    def load(vault: Path) -> Exposure:
        real = Path(os.path.realpath(vault))
        manifest = Manifest.read(real)
        return Exposure(real, manifest, IndexConfig.from_rules(manifest.rules))

    # -- the roots ---------------------------------------------------------------

    def _resolve(self) -> tuple[Source, tuple[str, ...]]:
        """resolve_roots, re-asked after ROOT_TTL: a user-content folder created while the server
        runs is served without a restart (a search asks dozens of hits against the same roots)."""
        now = time.monotonic()
        if self._resolved is None or now - self._resolved[0] >= ROOT_TTL:
            self._resolved = (now, *resolve_roots(self.manifest, self.vault))
        return self._resolved[1], self._resolved[2]

    @property
    def source(self) -> Source:
        return self._resolve()[0]

    @property
    def declared(self) -> tuple[str, ...]:
        return self._resolve()[1]

    def roots(self) -> list[str]:
        """Served roots (resolve_roots: the memory root already stripped)."""
        return list(self.declared)

    def matched_root(self, rel: str) -> str | None:
        """The most specific root ``rel`` lies under (roots are prefixes on whole segments; a glob
        root admits the files it matches, segment by segment)."""
        best: str | None = None
        for root in self.declared:
            hit = glob_match(rel, root) if is_glob(root) else under(rel, root)
            if hit and (best is None or len(root) > len(best)):
                best = root
        return best

    @property
    def rule(self) -> visibility.Rule:
        """The one admission rule every reader asks (the index's, with its search patterns)."""
        return self.index.rule

    def _served_path(self, rel: str) -> bool:
        """What the server adds to the rule the walker and ``visibility.lookup`` already applied (the
        index's coverage: dot segments, skipped folders, sync-conflict copies, ``mcp_never_expose``,
        search patterns, depth): not under the memory root, under a served root, and an ``.md`` note
        (a ``vault://note/`` URI and expand name notes by it). Withholding compares
        case-insensitively (a case-insensitive file system opens MEMORIES/x.md as memories/x.md);
        admitting by a root compares exactly."""
        if not rel.casefold().endswith(".md") or self.rule.in_memory(rel):
            return False
        return self.matched_root(rel) is not None

    # -- the one admission rule -------------------------------------------------

    def _admit(self, entry: Entry) -> Note | None:
        """The decision for a file the walker found (by lstat, never followed): a note the rule covers,
        whose folders are real folders the rule enters (the walk and ``visibility.lookup`` both make
        sure)."""
        if not entry.is_regular or not is_clean_relpath(entry.rel) or not self._served_path(entry.rel):
            # A symbolic link (to anything), a device: never a served note. Nor a name holding a
            # control character, which no reference can name (listed but unreadable before;
            # tests/serve/test_exposure_names.py).
            return None
        st = entry.stat
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        cached = self._cache.get(entry.rel)
        if cached is not None and cached[0] == key:
            return cached[1]
        head = visibility.read_head(entry.path)
        note = None if head is None or visibility.head_withheld(head) else _note_of(entry.rel, head)
        self._cache[entry.rel] = (key, note)
        return note

    # -- question 1: which notes exist for this caller ---------------------------

    def notes(self) -> dict[str, Note]:
        found: dict[str, Note] = {}
        for entry in self._candidates():
            if entry.rel not in found:
                note = self._admit(entry)
                if note is not None:
                    found[entry.rel] = note
        live = set(found)
        for stale in [k for k in self._cache if k not in live]:
            self._cache.pop(stale, None)
        return found

    def _candidates(self) -> Iterator[Entry]:
        """The notes the one walker finds below each root (a glob root: only as deep as it reaches)."""
        rule = self.rule
        for root in self.declared:
            base = _static_prefix(root) if is_glob(root) else root
            st, _reason = visibility.lookup(self.vault, base, rule) if base else (None, None)
            if st is not None:
                yield Entry(base, os.path.join(self.vault, base), st)  # a root naming one file
                continue
            levels = root.count("/") - (base.count("/") + 1 if base else 0)
            yield from visibility.walk(
                self.vault,
                rule,
                rule.is_note,
                base=base,
                levels=levels if is_glob(root) else visibility.MAX_DEPTH,
            )

    # -- question 2: may this path be read ----------------------------------------

    def may_read(self, rel: str) -> Note | None:
        """The served note at vault path ``rel``, or None: not a clean vault path, outside every
        root, withheld, reached through a link, or not a note the index covers."""
        if not is_clean_relpath(rel) or not self._served_path(rel):
            return None
        st, _reason = visibility.lookup(self.vault, rel, self.rule)  # the index's own answer
        return None if st is None else self._admit(Entry(rel, os.path.join(self.vault, rel), st))

    def read_text(self, rel: str) -> str | None:
        """The text of a served note (None when the policy withholds it). Opened without following
        a link, so a file swapped for one after the check is not read through it."""
        if self.may_read(rel) is None:
            return None
        try:
            fd = open_regular(self.vault / rel)
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
        return data.decode("utf-8", "replace").removeprefix("\ufeff")
