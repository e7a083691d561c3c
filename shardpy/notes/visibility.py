"""Which files of a vault a reader sees: one walker and one admission rule (issue 25).

Every reader of a vault's notes asks this module: the search index (``index/walk.py``,
``index/config.py``), and every surface of the MCP server (``serve/exposure.py``: resources/list,
expand, resources/read, search and QMD hits; ``serve/memories.py``: recall; ``serve/graph.py``: the
attachments a link may name). The server adds only its exposed roots on top, so what is withheld
from the index can never reach a caller (tests/notes/test_visibility_properties.py).

The walker (:func:`walk`, :func:`lookup` for one path) examines entries with ``lstat``: a symbolic
link is reported and never entered, read or served, so no link leads out of the vault (or into a
withheld folder inside it). It enters at most :data:`MAX_DEPTH` folders below the vault root, and
never a folder :meth:`Rule.skip_dir` refuses.

The rule, in three layers:

- **on paper** (:meth:`Rule.skip_dir`, :meth:`Rule.skip_file`: no reader covers the path): a dot
  segment (``.obsidian/``, ``.git/``, dotfiles); a folder named ``transcripts``, ``session-logs``,
  ``node_modules`` or ``credentials`` (raw session dumps are staging data, not memory); a
  sync-conflict copy; anything ``mcp_never_expose`` names, by file name, vault path or folder, on
  whole segments, compared case-insensitively; a file that is not a note; the manifest's
  ``search`` include/exclude patterns (given by the index as :class:`Matcher`);
- **in the note** (:func:`deleted`: no reader covers it): a note soft-deleted by ``shardpy rm``
  (``disabled: true``, :mod:`shardpy.vault.disabled`; issue 30);
- **served** (:meth:`Rule.in_memory`, :func:`head_withheld`: the index holds it, the server withholds
  it from every surface but recall): a path under the memory root; a note tagged ``private`` (or
  ``private: true``), or whose frontmatter cannot be fully inspected in its first
  :data:`HEAD_BYTES` bytes.
"""

from __future__ import annotations

import operator
import os
import re
import stat
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple, Protocol

from shardpy.fsutil import open_regular, printable, utf8_name
from shardpy.notes import frontmatter, note
from shardpy.notes.note import is_note_name
from shardpy.vault.disabled import DISABLED, is_disabled

SKIPPED_FOLDERS = frozenset({"transcripts", "session-logs", "node_modules", "credentials"})
MAX_DEPTH = 32  # folders below the vault root a walk enters (and a path may name)
HEAD_BYTES = 4096  # frontmatter must close inside this window or the note is withheld from callers
LINK_REASON = "symbolic link (not followed)"
# A name whose bytes are not UTF-8 (os gives it back with surrogate escapes): no reader can store,
# serve or print it (tests/hardening/test_odd_names.py); reported under a printable name.
NAME_REASON = "name is not UTF-8 (rename it to be indexed and served)"
DELETED_REASON = "soft-deleted (disabled: true)"
_CONFLICT = re.compile(r"\.sync-conflict-|conflicted copy|\(conflict", re.IGNORECASE)

_NAME = operator.attrgetter("name")
Want = Callable[[str, str], bool]  # (vault path, file name) -> whether the walk yields the file


class Matcher(Protocol):
    """A set of gitignore-style patterns (``index.config.Globs``): a folder's path ends in ``/``."""

    def match_file(self, rel: str) -> bool: ...


def is_sync_conflict(name: str) -> bool:
    """A copy a sync tool left beside a note (Syncthing, Dropbox, Obsidian Sync)."""
    return _CONFLICT.search(name) is not None


def under(path: str, root: str) -> bool:
    """``path`` is ``root`` or inside it, on whole segments (work/active never admits work/active-x)."""
    return root == "" or path == root or path.startswith(root + "/")


def _clean(entry: str) -> str:
    return entry.strip().strip("/").casefold()


@dataclass(frozen=True)
class Rule:
    """The admission rule of one vault's manifest (the path layers; see the module docstring)."""

    never_expose: frozenset[str] = frozenset()  # casefolded names or vault paths, no slash at the ends
    memory_root: str | None = None  # casefolded vault path
    include: Matcher | None = None
    exclude: Matcher | None = None
    never_dirs: tuple[str, ...] = ()  # never_expose entries as folder prefixes ("secret/")

    @staticmethod
    def of(
        never_expose: Iterable[str] = (),
        memory_root: str | None = None,
        include: Matcher | None = None,
        exclude: Matcher | None = None,
    ) -> Rule:
        names = frozenset(n for n in (_clean(e) for e in never_expose) if n)
        memory = _clean(memory_root) if memory_root else None
        return Rule(names, memory or None, include, exclude, tuple(n + "/" for n in sorted(names)))

    def without_search(self) -> Rule:
        """The rule without the manifest's ``search`` patterns: for the files that are not notes (the
        flagship excludes ``bases/`` from the index because a ``.base`` is not a note, and those are
        exactly the files a note embeds; tests/hardening/test_serve_health_embeds.py)."""
        return replace(self, include=None, exclude=None)

    def never_exposed(self, rel: str, name: str) -> bool:
        """``mcp_never_expose`` names this file or folder, or a folder above it (any case)."""
        if not self.never_expose:
            return False
        folded = rel.casefold()
        if name.casefold() in self.never_expose or folded in self.never_expose:
            return True
        return folded.startswith(self.never_dirs)

    def skip_dir(self, rel: str, name: str) -> bool:
        """A folder no reader enters (its parents already passed)."""
        if name.startswith(".") or name.casefold() in SKIPPED_FOLDERS or self.never_exposed(rel, name):
            return True
        return self.exclude is not None and self.exclude.match_file(rel + "/")

    def skip_file(self, rel: str, name: str) -> bool:
        """A file that is not a note any reader covers (its folders already passed :meth:`skip_dir`)."""
        if name.startswith(".") or not is_note_name(name) or is_sync_conflict(name):
            return True
        if self.never_exposed(rel, name):
            return True
        if self.exclude is not None and self.exclude.match_file(rel):
            return True
        return self.include is not None and not self.include.match_file(rel)

    def is_note(self, rel: str, name: str) -> bool:
        """A note the rule covers (the walk's ``want`` for notes)."""
        return not self.skip_file(rel, name)

    def covers(self, rel: str) -> bool:
        """The paper check of a whole vault path: no bad segment, within the depth bound, every
        folder on the way entered and the file itself a note (the disk is :func:`lookup`'s)."""
        parts = rel.split("/")
        if any(p in ("", ".", "..") for p in parts) or len(parts) - 1 > MAX_DEPTH:
            return False
        if any(self.skip_dir("/".join(parts[: k + 1]), p) for k, p in enumerate(parts[:-1])):
            return False
        return not self.skip_file(rel, parts[-1])

    def in_memory(self, rel: str) -> bool:
        """Under the memory root (any case: a case-insensitive disk opens MEMORIES/x.md as memories/x.md)."""
        return self.memory_root is not None and under(rel.casefold(), self.memory_root)


# -- the walker -------------------------------------------------------------------


class Entry(NamedTuple):
    """A file found by the walk, with its ``lstat`` (a link is reported, never followed)."""

    rel: str  # vault path
    path: str  # on this disk
    stat: os.stat_result

    @property
    def is_link(self) -> bool:
        return stat.S_ISLNK(self.stat.st_mode)

    @property
    def is_regular(self) -> bool:
        return stat.S_ISREG(self.stat.st_mode)


def walk(
    root: Path | str,
    rule: Rule,
    want: Want,
    *,
    base: str = "",
    levels: int = MAX_DEPTH,
    folders: list[str] | None = None,
    problems: list[tuple[str, str]] | None = None,
) -> Iterator[Entry]:
    """Every file ``want`` asks for, in the folders ``rule`` enters, from the folder ``base`` (a vault
    path, itself checked by :func:`real_folder`) down at most ``levels`` folders, in name order (a
    folder's files, then its folders).

    ``folders`` receives each folder walked ("" for the root), ``problems`` (path, reason) for what
    could not be read. A folder is entered by ``lstat`` only, so a linked folder is never entered;
    ``want`` is asked before the file is stat-ed (a walk over 20,000 notes stats only notes)."""
    if not real_folder(root, base, rule):
        return
    # A stack, not recursion: a generator per folder level costs a frame per yielded file and level.
    stack = [(os.path.join(str(root), base) if base else str(root), base, levels)]
    while stack:
        folder, rel, left = stack.pop()
        if folders is not None:
            folders.append(rel)
        entries = _listing(folder, rel, problems)
        enter = left > 0 and (rel.count("/") + 1 if rel else 0) < MAX_DEPTH
        below: list[tuple[str, str, int]] = []
        for entry in entries:
            name = entry.name
            if name.startswith("."):
                continue  # dot-folders and dotfiles: skipped before any other test
            child = f"{rel}/{name}" if rel else name
            if _not_utf8(child, name, problems):
                continue
            try:
                if entry.is_dir(follow_symlinks=False):
                    if enter and not rule.skip_dir(child, name):
                        below.append((entry.path, child, left - 1))
                    continue
                if not want(child, name):
                    continue
                st = entry.stat(follow_symlinks=False)
            except OSError as exc:
                if problems is not None:
                    problems.append((child, f"not readable: {exc.strerror or exc}"))
                continue
            yield Entry(child, entry.path, st)
        stack += reversed(below)  # folders in name order, each after the files beside it


def _not_utf8(child: str, name: str, problems: list[tuple[str, str]] | None) -> bool:
    """``name`` held bytes that are not UTF-8: said in ``problems``."""
    if utf8_name(name):
        return False
    if problems is not None:
        problems.append((printable(child), NAME_REASON))
    return True


def _listing(folder: str, rel: str, problems: list[tuple[str, str]] | None) -> list[os.DirEntry[str]]:
    """A folder's entries in name order (none, and a problem said, when it cannot be read)."""
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=_NAME)
    except OSError as exc:
        if problems is not None:
            problems.append((rel or ".", f"folder not readable: {exc.strerror or exc}"))
        return []


def real_folder(root: Path | str, rel: str, rule: Rule) -> bool:
    """Every folder from the vault down to ``rel`` ("" is the vault) is a real folder (no link) the
    rule enters, within the depth bound."""
    parts = rel.split("/") if rel else []
    if len(parts) > MAX_DEPTH:
        return False
    current = str(root)
    for k, part in enumerate(parts):
        current = os.path.join(current, part)
        if part in ("", ".", "..") or rule.skip_dir("/".join(parts[: k + 1]), part):
            return False
        try:
            if not stat.S_ISDIR(os.lstat(current).st_mode):
                return False
        except OSError:
            return False
    return True


def lookup(root: Path | str, rel: str, rule: Rule) -> tuple[os.stat_result | None, str | None]:
    """The walk's answer for one vault path: (lstat, None) when it is a note the walk would yield as
    a regular file; (None, :data:`LINK_REASON`) for a link the walk would report; (None, None)
    otherwise (not covered, absent, a folder on the way that is a link)."""
    if not rule.covers(rel):
        return None, None
    folder, _, _name = rel.rpartition("/")
    if not real_folder(root, folder, rule):
        return None, None
    try:
        st = os.lstat(os.path.join(str(root), rel))
    except OSError:
        return None, None
    if stat.S_ISLNK(st.st_mode):
        return None, LINK_REASON
    return (st, None) if stat.S_ISREG(st.st_mode) else (None, None)


# -- what the note says -------------------------------------------------------------


def deleted(text: str) -> bool:
    """Soft-deleted by ``shardpy rm`` (``disabled: true``): no reader covers it (issue 30). The
    frontmatter is parsed only when its block holds the word (a refresh reads every changed note)."""
    block = frontmatter.fenced_block(text)
    if block is None or DISABLED not in block:
        return False
    split = frontmatter.split_frontmatter(text)
    return split.state == "present" and is_disabled(split.data)


def head_withheld(head: str) -> bool:
    """A note the server withholds for what its first :data:`HEAD_BYTES` say: tagged private (the tags
    as :func:`shardpy.notes.note.tags` reads them), ``private: true``, soft-deleted, or frontmatter
    that does not close in the window or does not parse. A byte-order mark is not the note's first
    character (the splitter's contract): a private note saved with one is withheld too."""
    if not head.removeprefix("\ufeff").startswith("---"):
        return False
    split = frontmatter.split_frontmatter(head)
    if split.state != "present":
        return True
    data = split.data
    private = "private" in {t.casefold() for t in note.tags(data)} or data.get("private") is True
    return private or is_disabled(data)


def read_head(path: str) -> str | None:
    """The first :data:`HEAD_BYTES` of a file, opened without following a link."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        raw = os.read(fd, HEAD_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    return raw.decode("utf-8", "replace")
