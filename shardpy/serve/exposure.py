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
- at least as strict as the search index (``shardpy.index.config``: the same
  ``IndexConfig`` predicates, and ``check_one`` for a single path): no dot
  segment, no ``transcripts``/``credentials``/... folder, no sync-conflict
  copy, nothing ``mcp_never_expose`` names (file or folder, any case), nothing
  the index's own include/exclude leaves out;
- **no symbolic link is ever served**, as a note or as a folder on the way
  (the index never follows one either): a link's target is not the note the
  caller asked for, and containing it would need the full rule re-applied to
  the target (tests/security/test_serve_exposure.py::test_links_are_never_served);
- notes tagged ``private`` (or ``private: true``), and notes whose frontmatter
  cannot be fully inspected in the first 4,096 bytes, are withheld.
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

from shardpy.index.config import IndexConfig
from shardpy.index.walk import check_one
from shardpy.vault.manifest import ContentRules, vault_content_rules

HEAD_BYTES = 4096  # frontmatter must close inside this window or the note is private
MAX_DEPTH = 16
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
    never_expose: frozenset[str]  # casefolded names or vault paths
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
            never_expose=frozenset(n.strip().strip("/").casefold() for n in rules.never_expose if n.strip()),
            memory_root=clean_root(rules.memory_root) if rules.memory_root else None,
            user_content_roots=tuple(clean_root(r) for r in rules.user_content_roots if r.strip()),
            context=rules.qmd_context,
            rules=rules,
        )


def clean_root(root: str) -> str:
    """A declared root as a vault path without slashes at either end ("" is the vault)."""
    return root.strip().strip("/")


def under(path: str, root: str) -> bool:
    """``path`` is ``root`` or inside it, on whole segments (work/active never admits work/active-x)."""
    return root == "" or path == root or path.startswith(root + "/")


def inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


def is_clean_relpath(rel: str) -> bool:
    """A vault-relative POSIX path with no empty, '.', '..' segment and no NUL, backslash or control."""
    if not rel or rel.startswith("/") or "\\" in rel or any(ord(c) < 32 or c == "\x7f" for c in rel):
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


def head_private(head: str) -> bool:
    """Tagged private, or frontmatter that cannot be fully inspected (unclosed in the window, malformed)."""
    if not head.startswith("---"):
        return False
    # Here, not at the top: the frontmatter module (YAML) is not needed to answer initialize.
    from shardpy.frontmatter import as_list, split_frontmatter

    split = split_frontmatter(head)
    if split.state != "present":
        return True
    tags = [t.casefold().lstrip("#") for t in as_list(split.data.get("tags"))]
    from shardpy.vault.disabled import is_disabled  # soft-deleted by `shardpy rm` (issue 30)

    return "private" in tags or split.data.get("private") is True or is_disabled(split.data)


def _read_head(path: str) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        raw = os.read(fd, HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return raw.decode("utf-8", "replace")


def _note_of(rel: str, head: str) -> Note:
    from shardpy.frontmatter import as_list, split_frontmatter

    split = split_frontmatter(head)
    data = split.data if split.state == "present" else {}
    stem = rel.rsplit("/", 1)[-1][:-3]
    title = data.get("title")
    description = data.get("description")
    return Note(
        rel,
        title if isinstance(title, str) and title.strip() else stem,
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

    def _withheld_path(self, rel: str) -> bool:
        """The path-only part of the rule. Withholding compares case-insensitively (a case-insensitive
        file system opens MEMORIES/x.md as memories/x.md); admitting by a root compares exactly."""
        if not rel.casefold().endswith(".md"):
            return True
        mem = self.manifest.memory_root
        if mem is not None and under(rel.casefold(), mem.casefold()):
            return True
        if any(part.startswith(".") for part in rel.split("/")):
            return True
        never = self.manifest.never_expose
        return rel.casefold() in never or rel.rsplit("/", 1)[-1].casefold() in never

    # -- the one admission rule -------------------------------------------------

    def _admit(self, rel: str, full: str, st: os.stat_result) -> Note | None:
        """The decision for the entry found (by lstat, never followed) at ``full``, vault path ``rel``,
        whose folders are real folders the index enters (the walk and may_read both make sure)."""
        if self._withheld_path(rel) or self.matched_root(rel) is None:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None  # a symbolic link (to anything), a folder, a device: never a served note
        name = rel.rsplit("/", 1)[-1]
        if self.index.skip_file(rel, name):
            return None  # the index does not cover it: neither does the server
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        cached = self._cache.get(rel)
        if cached is not None and cached[0] == key:
            return cached[1]
        head = _read_head(full)
        note = None if head is None or head_private(head) else _note_of(rel, head)
        self._cache[rel] = (key, note)
        return note

    def _real_folder(self, rel: str) -> bool:
        """Every folder from the vault down to ``rel`` is a real folder (no link) the index enters."""
        current = str(self.vault)
        parts = rel.split("/") if rel else []
        for k, part in enumerate(parts):
            current = os.path.join(current, part)
            if self.index.skip_dir("/".join(parts[: k + 1]), part):
                return False
            try:
                if not stat.S_ISDIR(os.lstat(current).st_mode):
                    return False
            except OSError:
                return False
        return True

    # -- question 1: which notes exist for this caller ---------------------------

    def notes(self) -> dict[str, Note]:
        found: dict[str, Note] = {}
        for rel, full, st in self._candidates():
            if rel not in found:
                note = self._admit(rel, full, st)
                if note is not None:
                    found[rel] = note
        live = set(found)
        for stale in [k for k in self._cache if k not in live]:
            self._cache.pop(stale, None)
        return found

    def _candidates(self) -> Iterator[tuple[str, str, os.stat_result]]:
        for root in self.declared:
            base = _static_prefix(root) if is_glob(root) else root
            depth = MAX_DEPTH if not is_glob(root) else root.count("/") - (base.count("/") + 1 if base else 0)
            full = str(self.vault / base) if base else str(self.vault)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if self._real_folder(base):
                    yield from self._walk(full, base, depth)
            elif base and self._real_folder(base.rsplit("/", 1)[0] if "/" in base else ""):
                yield base, full, st  # a root naming one file (work/Index.md)

    def _walk(self, folder: str, rel: str, depth: int) -> Iterator[tuple[str, str, os.stat_result]]:
        """The index's walk (shardpy/index/walk.py) below one root: lstat only, links never entered."""
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            return
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{rel}/{entry.name}" if rel else entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if depth > 0 and not self.index.skip_dir(child, entry.name):
                    yield from self._walk(entry.path, child, depth - 1)
            else:
                yield child, entry.path, st

    # -- question 2: may this path be read ----------------------------------------

    def may_read(self, rel: str) -> Note | None:
        """The served note at vault path ``rel``, or None: not a clean vault path, outside every
        root, withheld, reached through a link, or not a note the index covers."""
        if not is_clean_relpath(rel) or self._withheld_path(rel) or self.matched_root(rel) is None:
            return None
        covered, _reason = check_one(self.vault, rel, self.index)  # the index's own predicate
        if covered is None:
            return None
        full = str(self.vault / rel)
        try:
            st = os.lstat(full)
        except OSError:
            return None
        return self._admit(rel, full, st)

    def read_text(self, rel: str) -> str | None:
        """The text of a served note (None when the policy withholds it). Opened without following
        a link, so a file swapped for one after the check is not read through it."""
        if self.may_read(rel) is None:
            return None
        try:
            fd = os.open(self.vault / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            return None
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
        return data.decode("utf-8", "replace").removeprefix("\ufeff")
