"""Which notes the server serves: two questions, one function each.

``Exposure.notes()`` answers "which notes exist for this caller" (search
filters nothing with it — search asks the second question per hit — but
expand's backlinks, the resource listing and health are built from it).
``Exposure.may_read(path)`` answers "may this one path be read" (search
hits, expand, resources/read). Both end in the same admission rule
(:meth:`Exposure._admit`), so no surface can apply a different one.

Rules (docs/SERVE.md): roots from ``mcp_exposed_roots`` (empty: the whole
vault), the memory root always stripped, dot-folders never entered,
``mcp_never_expose`` matched case-insensitively against the file name and
the vault path, notes tagged ``private`` (or ``private: true``) withheld,
frontmatter that does not close inside the head window withheld. Entries are
examined with lstat; a symlink is contained against the realpath of the
declared root it was found under before anything follows it, and symlinked
folders are never entered.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from shardpy.shard.content import vault_content_rules

HEAD_BYTES = 4096  # frontmatter must close inside this window or the note is private
MAX_DEPTH = 16
ROOT_TTL = 1.0  # seconds a declared root's realpath is reused


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
        )


def clean_root(root: str) -> str:
    """A declared root as a vault path without slashes at either end ("" is the vault)."""
    return root.strip().strip("/")


def under(path: str, root: str) -> bool:
    """``path`` is ``root`` or inside it, on whole segments (work/active never admits work/active-x)."""
    return root == "" or path == root or path.startswith(root + "/")


def inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip("/") + "/")


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
    return "private" in tags or split.data.get("private") is True


def _read_head(path: str) -> str | None:
    try:
        with open(path, "rb") as fh:
            raw = fh.read(HEAD_BYTES)
    except OSError:
        return None
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
    _cache: dict[str, tuple[tuple[int, int, int], Note | None]] = field(default_factory=dict)
    _roots: dict[str, tuple[float, str | None]] = field(default_factory=dict)

    @staticmethod
    def load(vault: Path) -> Exposure:
        real = Path(os.path.realpath(vault))
        return Exposure(real, Manifest.read(real))

    # -- the declared roots ----------------------------------------------------

    def roots(self) -> list[str]:
        """Served roots; the memory root and anything inside it are stripped, always."""
        declared = list(self.manifest.exposed_roots) or [""]
        mem = self.manifest.memory_root
        return [r for r in declared if mem is None or not under(r, mem)]

    def matched_root(self, rel: str) -> str | None:
        """The most specific declared root ``rel`` lies under (roots are prefixes, matched on segments)."""
        best: str | None = None
        for root in self.roots():
            if under(rel, root) and (best is None or len(root) > len(best)):
                best = root
        return best

    def _withheld_path(self, rel: str) -> bool:
        mem = self.manifest.memory_root
        if mem is not None and under(rel, mem):
            return True
        if any(part.startswith(".") for part in rel.split("/")):
            return True
        never = self.manifest.never_expose
        return rel.casefold() in never or rel.rsplit("/", 1)[-1].casefold() in never

    # -- the one admission rule -------------------------------------------------

    def _admit(self, rel: str, full: str, st: os.stat_result, real_root: str) -> Note | None:
        """The decision for the entry found (by lstat) at ``full`` under a root of realpath ``real_root``."""
        if not rel.lower().endswith(".md") or self._withheld_path(rel):
            return None
        if stat.S_ISLNK(st.st_mode):
            real = os.path.realpath(full)
            if not inside(real, real_root) or not os.path.isfile(real):
                return None  # a link out of its root, or a broken one: never served
            st = os.stat(real)
        elif not stat.S_ISREG(st.st_mode):
            return None
        key = (st.st_size, st.st_mtime_ns, st.st_ino)
        cached = self._cache.get(rel)
        if cached is not None and cached[0] == key:
            return cached[1]
        head = _read_head(full)
        note = None if head is None or head_private(head) else _note_of(rel, head)
        self._cache[rel] = (key, note)
        return note

    def _real_root(self, root: str) -> str | None:
        """The realpath of a declared root, when it exists inside the vault (re-resolved after ROOT_TTL:
        a search checks dozens of hits against the same few roots)."""
        now = time.monotonic()
        hit = self._roots.get(root)
        if hit is not None and now - hit[0] < ROOT_TTL:
            return hit[1]
        real = os.path.realpath(self.vault / root) if root else str(self.vault)
        found = real if inside(real, str(self.vault)) and os.path.exists(real) else None
        self._roots[root] = (now, found)
        return found

    # -- question 1: which notes exist for this caller ---------------------------

    def notes(self) -> dict[str, Note]:
        found: dict[str, Note] = {}
        for root in self.roots():
            real_root = self._real_root(root)
            if real_root is None:
                continue
            full = str(self.vault / root) if root else str(self.vault)
            try:
                st = os.lstat(full)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                for rel, path, entry_st in self._walk(full, root, 0):
                    note = self._admit(rel, path, entry_st, real_root)
                    if note is not None:
                        found[rel] = note
            else:  # a root naming one file (work/Index.md): contained in its declared folder
                note = self._admit(root, full, st, os.path.realpath(os.path.dirname(full)))
                if note is not None:
                    found[root] = note
        live = set(found)
        for stale in [k for k in self._cache if k not in live]:
            self._cache.pop(stale, None)
        return found

    def _walk(self, folder: str, rel: str, depth: int) -> Iterator[tuple[str, str, os.stat_result]]:
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
                if depth < MAX_DEPTH:
                    yield from self._walk(entry.path, child, depth + 1)
            else:
                yield child, entry.path, st

    # -- question 2: may this path be read ----------------------------------------

    def may_read(self, rel: str) -> Note | None:
        """The served note at vault path ``rel``, or None: outside every root, withheld, or not a note."""
        if not is_clean_relpath(rel):
            return None
        root = self.matched_root(rel)
        if root is None:
            return None
        real_root = self._real_root(root)
        if real_root is None:
            return None
        # The walk never enters a symlinked or hidden folder, so neither may a read.
        parts = rel.split("/")
        start = len(root.split("/")) if root else 0
        current = str(self.vault / root) if root else str(self.vault)
        for part in parts[start:-1]:
            current = os.path.join(current, part)
            try:
                if not stat.S_ISDIR(os.lstat(current).st_mode):
                    return None
            except OSError:
                return None
        full = str(self.vault / rel)
        try:
            st = os.lstat(full)
        except OSError:
            return None
        if root == rel:  # a root naming one file: contained in its declared folder
            real_root = os.path.realpath(os.path.dirname(full))
        return self._admit(rel, full, st, real_root)

    def read_text(self, rel: str) -> str | None:
        """The text of a served note (None when the policy withholds it)."""
        if self.may_read(rel) is None:
            return None
        try:
            return (self.vault / rel).read_bytes().decode("utf-8", "replace").removeprefix("\ufeff")
        except OSError:
            return None


def is_clean_relpath(rel: str) -> bool:
    """A vault-relative POSIX path with no empty, '.', '..' or hidden segment and no NUL/backslash."""
    if not rel or rel.startswith("/") or "\\" in rel or "\x00" in rel:
        return False
    return all(p and p not in (".", "..") for p in rel.split("/"))
