"""Wikilink resolution against this import and the vault, and rewriting for Obsidian.

Obsidian resolves ``[[X]]`` by file name (case-insensitively), never by a
note's title or aliases. Imported notes often get a file name that differs
from the text their sources link with (a sanitised title, a permalink, a
kebab slug), so a resolved link whose vault name differs from the written
text is rewritten to ``[[vault name|original text]]``. Ambiguous and
missing targets keep their text (an unresolved link in Obsidian) and are
reported, never dropped.
"""

from __future__ import annotations

import itertools
import os
import posixpath
import urllib.parse
from collections.abc import Callable, Container, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.fsutil import open_regular, utf8_name
from shardpy.notes.blocks import InlineBlock
from shardpy.notes.note import is_note_name, without_ext
from shardpy.notes.note import stem as note_stem
from shardpy.notes.wikilinks import find_md_links, find_wikilinks, split_inner

# Folders of a vault that never hold notes to link to.
SKIP_DIRS = frozenset({".shardmind", ".obsidian", ".git", ".trash"})


Paths = str | list[str]  # one vault path, or several sharing a key (most keys have one)


def _put(table: dict[str, Paths], key: str, rel: str) -> None:
    cur = table.get(key)
    if cur is None:
        table[key] = rel
    elif isinstance(cur, str):
        table[key] = [cur, rel]
    else:
        cur.append(rel)


def _paths(value: Paths | None) -> list[str]:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


def _fold(text: str) -> str:
    """``text.casefold()``, sharing ``text`` itself when folding changes nothing (saves a copy)."""
    folded = text.casefold()
    return text if folded == text else folded


@dataclass(slots=True)
class VaultIndex:
    """Names of the files already in the vault (walked, never read unless needed).

    Each table maps a casefolded key to one path (a ``str``) or a list of
    paths; a vault of 100,000 notes costs three small dict entries per file.
    """

    root: Path
    folded: dict[str, Paths] = field(default_factory=dict)  # casefolded path -> path(s)
    by_stem: dict[str, Paths] = field(default_factory=dict)  # casefolded note stem -> path(s)
    by_name: dict[str, Paths] = field(default_factory=dict)  # casefolded attachment name -> path(s)
    _titles: dict[str, list[str]] | None = None

    @classmethod
    def walk(cls, root: Path, skip: Container[str] = ()) -> VaultIndex:
        """Index the vault's files, except ``skip`` (paths this import owns and will plan anyway)."""
        index = cls(root)
        stack = [""]
        while stack:
            rel_dir = stack.pop()
            try:
                it = os.scandir(root / rel_dir if rel_dir else root)
            except OSError:
                continue
            with it:
                for entry in it:
                    name = entry.name
                    if not utf8_name(name):  # never a link's target: no note can name it
                        continue
                    rel = f"{rel_dir}/{name}" if rel_dir else name
                    try:
                        is_dir = entry.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    if is_dir:
                        if not name.startswith(".") and name not in SKIP_DIRS:
                            stack.append(rel)
                        continue
                    if name.startswith(".shardpy-tmp-") or rel in skip:
                        continue
                    index.add(rel)
        return index

    def __contains__(self, rel: str) -> bool:
        cur = self.folded.get(_fold(rel))
        return cur is not None and (cur == rel if isinstance(cur, str) else rel in cur)

    def add(self, rel: str) -> None:
        if rel in self:
            return
        _put(self.folded, _fold(rel), rel)
        base = rel.rsplit("/", 1)[-1]
        if is_note_name(base):
            _put(self.by_stem, _fold(note_stem(base)), rel)
        else:
            _put(self.by_name, _fold(base), rel)

    def files(self) -> Iterator[str]:
        """Every vault-relative path in the index."""
        for value in self.folded.values():
            if isinstance(value, str):
                yield value
            else:
                yield from value

    def with_path(self, folded_path: str) -> list[str]:
        """Paths whose casefolded form is ``folded_path``."""
        return _paths(self.folded.get(folded_path))

    def with_stem(self, folded_stem: str) -> list[str]:
        return _paths(self.by_stem.get(folded_stem))

    def with_name(self, folded_name: str) -> list[str]:
        return _paths(self.by_name.get(folded_name))

    def titles(self, skip: Callable[[str], bool]) -> dict[str, list[str]]:
        """Casefolded frontmatter ``title`` and ``aliases`` → notes, read from the head of each note.

        Built once, on the first link that neither this import nor a file name
        resolves; notes for which ``skip`` is true (this import's own) are not read.
        """
        if self._titles is not None:
            return self._titles
        from shardpy.notes.frontmatter import as_list, as_text, split_frontmatter

        titles: dict[str, list[str]] = {}
        for rel in sorted(self.files()):
            if not is_note_name(rel) or skip(rel):
                continue
            head = _read_head(self.root / rel)
            if head is None or not head.startswith("---"):
                continue
            split = split_frontmatter(head)
            if split.state != "present":
                continue
            names = set(as_list(split.data.get("aliases")))
            title = as_text(split.data.get("title"))
            if title:
                names.add(title)
            for name in names:
                titles.setdefault(name.strip().casefold(), []).append(rel)
        self._titles = titles
        return titles


def _read_head(path: Path, limit: int = 8192) -> str | None:
    try:
        fd = open_regular(path)
    except OSError:
        return None
    try:
        data = os.read(fd, limit)
    finally:
        os.close(fd)
    return data.decode("utf-8", "replace").lstrip("\ufeff")


@dataclass(frozen=True, slots=True)
class Resolution:
    status: str  # "resolved" | "ambiguous" | "unresolved"
    target: str | None = None  # vault-relative path when resolved
    reason: str = ""


class Resolver:
    """Resolves link targets: this import first, then the vault (file name, then title/aliases).

    Memory matters at 100,000 notes, so the import's names are kept once: per
    record its target and the tuples of names and keys its ``Record`` already
    holds, plus two tables from a *casefolded* name or key to the record
    number(s) (an ``int``, or a list when several records share it). An exact
    lookup takes the casefolded entry's records and keeps those that have the
    exact text, which finds exactly what an exact table would.
    """

    def __init__(self, vault: VaultIndex, owned: Callable[[str], bool]) -> None:
        self.vault = vault
        self._owned = owned
        self._targets: list[str] = []
        self._names: list[tuple[str, ...]] = []  # per record: title/name (first rank)
        self._keys: list[tuple[str, ...]] = []  # per record: permalink, stem, path... (second rank)
        self._names_cf: dict[str, int | list[int]] = {}
        self._keys_cf: dict[str, int | list[int]] = {}
        self._by_source: dict[str, str] = {}  # source path → target
        self._shared_stems: set[str] | None = None

    def add_record(self, target: str, names: Iterable[str], keys: Iterable[str], source_path: str) -> None:
        rid = len(self._targets)
        names = names if isinstance(names, tuple) else tuple(names)
        keys = keys if isinstance(keys, tuple) else tuple(keys)
        self._targets.append(target)
        self._names.append(names)
        self._keys.append(keys)
        self._by_source[source_path] = target
        folded: dict[str, str] = {}  # share one folded string among this record's equal names and keys
        for table, texts in ((self._names_cf, names), (self._keys_cf, keys)):
            for text in texts:
                if not text.strip():  # keys are kept verbatim: MCP names differing by spaces are distinct
                    continue
                cf = text.casefold()  # as _fold(), folding once (100,000s of keys)
                cf = folded.setdefault(cf, text if cf == text else cf)
                # _add() inlined for the usual new key: one dict operation, no call.
                if table.setdefault(cf, rid) is not rid:
                    _add(table, cf, rid)

    def target_of_source(self, source_path: str) -> str | None:
        return self._by_source.get(source_path)

    def _exact(
        self, table: dict[str, int | list[int]], texts: list[tuple[str, ...]], text: str, folded: str
    ) -> list[str]:
        """Targets of the records holding exactly ``text`` (``folded``: its casefolded form)."""
        rids = table.get(folded)
        if isinstance(rids, int):  # the usual single record, without a comprehension
            return [self._targets[rids]] if text in texts[rids] else []
        return [self._targets[r] for r in _rids(rids) if text in texts[r]]

    def _folded(self, table: dict[str, int | list[int]], folded: str) -> list[str]:
        return [self._targets[r] for r in _rids(table.get(folded))]

    def resolve(self, text: str, scope: str = "") -> Resolution:
        """Resolve a link's note part; among several imported notes, one under ``scope`` wins."""
        t = text.strip()
        if not t:
            return Resolution("unresolved", reason="empty link")
        low = t.lower()
        if low.endswith(".md"):
            t = t[:-3]
        folded = t.casefold()
        if t == text:
            found = self._exact(self._names_cf, self._names, t, folded)
        else:
            found = self._exact(self._names_cf, self._names, text, text.casefold())
            if not found:
                found = self._exact(self._names_cf, self._names, t, folded)
        if not found:
            found = self._exact(self._keys_cf, self._keys, t, folded)
        if not found:
            found = self._folded(self._names_cf, folded)
        if not found:
            found = self._folded(self._keys_cf, folded)
        if found:
            return _pick(found, scope)
        return self._resolve_vault(t)

    def _resolve_vault(self, t: str) -> Resolution:
        cf = t.casefold()
        vault = self.vault
        if "/" in t:
            hits = [p for p in vault.with_path(cf + ".md") if not self._owned(p)]
            hits += [p for p in vault.with_path(cf) if not self._owned(p)]
        else:
            hits = [p for p in vault.with_stem(cf) if not self._owned(p)]
            if not hits:
                hits = [p for p in vault.with_name(cf) if not self._owned(p)]
        if not hits:
            hits = [p for p in vault.titles(self._owned).get(cf, [])]
        uniq = sorted(set(hits))
        if len(uniq) == 1:
            return Resolution("resolved", uniq[0])
        if uniq:
            return Resolution(
                "ambiguous", reason=f"{len(uniq)} vault notes answer to this name: " + ", ".join(uniq[:3])
            )
        return Resolution("unresolved", reason="no note with this name in the import or the vault")

    def link_name(self, target: str) -> str:
        """The shortest text Obsidian resolves to ``target``: its stem, or its path if the stem is shared."""
        if self._shared_stems is None:
            self._shared_stems = self._find_shared_stems()
        if target.endswith(".md"):  # every imported note: note_stem() without its suffix search
            stem = target[target.rfind("/") + 1 : -3]
            return stem if stem.casefold() not in self._shared_stems else target[:-3]
        if is_note_name(target):
            stem = note_stem(target)
            return stem if stem.casefold() not in self._shared_stems else without_ext(target)
        name = target.rsplit("/", 1)[-1]
        return name if name.casefold() not in self._shared_stems else target

    def _find_shared_stems(self) -> set[str]:
        """Casefolded stems (notes) and names (attachments) of more than one vault or imported file."""
        seen: set[str] = set()
        shared: set[str] = set()
        vault = self.vault
        for rel in itertools.chain(vault.files(), (t for t in self._targets if t not in vault)):
            key = note_stem(rel).casefold() if is_note_name(rel) else rel.rsplit("/", 1)[-1].casefold()
            if key in seen:
                shared.add(key)
            else:
                seen.add(key)
        return shared


def _add(table: dict[str, int | list[int]], key: str, rid: int) -> None:
    cur = table.get(key)
    if cur is None:
        table[key] = rid
    elif isinstance(cur, int):
        if cur != rid:
            table[key] = [cur, rid]
    elif cur[-1] != rid:  # a record adds all its keys at once, so a repeat is always the last one
        cur.append(rid)


def _rids(value: int | list[int] | None) -> list[int] | tuple[int, ...]:
    if value is None:
        return ()
    return (value,) if isinstance(value, int) else value


@dataclass(frozen=True, slots=True)
class LinkUse:
    text: str  # the link as written, e.g. "[[Target|alias]]"
    target_text: str  # the note part
    status: str
    target: str | None
    reason: str
    replacement: str | None  # new text when rewritten


def _rewrite_parts(inner: str, parts: tuple[str, str, str, str], embed: bool, name: str) -> str | None:
    """``[[inner]]`` (split as ``parts``) pointing at a note Obsidian knows as ``name``; None when
    no rewrite is needed."""
    target, heading, sep, alias = parts
    if target.casefold() == name.casefold() or (
        target.lower().endswith(".md") and target[:-3].casefold() == name.casefold()
    ):
        return None
    bang = "!" if embed else ""
    if sep:
        return f"{bang}[[{name}{heading}{sep}{alias}]]"
    if embed:
        return f"{bang}[[{name}{heading}]]"
    display = inner.strip()
    if any(s in display for s in ("[[", "]]", "|")):
        return f"[[{name}{heading}]]"
    return f"[[{name}{heading}|{display}]]"


def rewrite_body(
    body: str,
    blocks: list[InlineBlock],
    resolver: Resolver,
    *,
    source_dir: str,
    target: str,
    resolve_md_links: bool,
    scope: str = "",
) -> tuple[str, list[LinkUse]]:
    """Resolve and rewrite every wikilink (and local markdown link) outside code in ``body``."""
    items = link_recipe(body, blocks, md_links=resolve_md_links)
    uses, edits = apply_recipe(items, resolver, source_dir=source_dir, target=target, scope=scope)
    return splice(body, edits), uses


def link_recipe(body: str, blocks: list[InlineBlock], *, md_links: bool) -> list[list[Any]]:
    """Every link outside code in ``body``, in order, as plain data (no resolving yet).

    ``["w", raw, start, end]`` for a wikilink (its inner text and embed flag
    are read back from ``raw``, see ``wikilink_parts``: 100,000s of recipes
    travel between processes and stay in memory), ``["m", url, start, end]``
    for a markdown link to a local note; offsets are in ``body``.
    ``apply_recipe`` resolves them: together the two are ``rewrite_body``,
    split so that the finding can happen while the source is read and the
    resolving once every note is known.
    """
    items: list[list[Any]] = []
    for block in blocks:
        if "[" not in block.content:
            continue  # no "[[" and no "](" in the block (markers and indentation hold no "[")
        segment = body[block.start : block.end]
        if "[[" in segment:
            for link in find_wikilinks(segment):
                items.append(
                    ["w", segment[link.start : link.end], block.start + link.start, block.start + link.end]
                )
        if md_links and "](" in segment:
            from shardpy.importers.bm_grammar import is_local_note_url

            for md in find_md_links(segment):
                if is_local_note_url(md.url.strip("<>")):
                    items.append(["m", md.url, block.start + md.url_start, block.start + md.url_end])
    return items


def wikilink_parts(raw: str) -> tuple[str, bool]:
    """(inner text, embed) of a wikilink's text as ``find_wikilinks`` spans it.

    That text is ``[[inner]]``, or ``![[inner]]`` for an embed.
    """
    embed = raw[0] == "!"
    return raw[3 if embed else 2 : -2], embed


def apply_recipe(
    items: list[list[Any]], resolver: Resolver, *, source_dir: str, target: str, scope: str = ""
) -> tuple[list[LinkUse], list[tuple[int, int, str]]]:
    """(link uses, body edits) for the links of ``link_recipe``: resolved, rewritten where needed."""
    uses: list[LinkUse] = []
    edits: list[tuple[int, int, str]] = []
    for item in items:
        if item[0] == "w":
            inner, embed = wikilink_parts(item[1])
            use = _wiki_use(item[1], inner, embed, resolver, scope)
        else:
            md = _md_link(item[1], resolver, source_dir, target)
            if md is None:
                continue
            use = md
        if use.replacement is not None:
            edits.append((item[-2], item[-1], use.replacement))
        uses.append(use)
    return uses, edits


def splice(body: str, edits: list[tuple[int, int, str]]) -> str:
    """``body`` with each (start, end) range replaced by its text."""
    if not edits:
        return body
    edits = sorted(edits)
    parts: list[str] = []
    last = 0
    for s, e, text in edits:
        parts.append(body[last:s])
        parts.append(_in_table_row(body, s, text))
        last = e
    parts.append(body[last:])
    return "".join(parts)


def _in_table_row(body: str, at: int, link: str) -> str:
    """``link`` as a table cell holds it: its alias separator escaped (``\\|``) when the line at
    ``at`` is a table row (it starts with ``|``). A rewritten ``[[Q3- Plan|Q3: Plan?]]`` split the
    cell in two (a helper's probe; tests/importers/test_links.py)."""
    if "|" not in link or "\\|" in link or not link.endswith("]]"):
        return link
    start = body.rfind("\n", 0, at) + 1
    if not body[start:at].lstrip().startswith("|"):
        return link
    return link.replace("|", "\\|", 1)


def _wiki_use(raw: str, inner: str, embed: bool, resolver: Resolver, scope: str) -> LinkUse:
    parts = split_inner(inner)
    tgt = parts[0]
    if "::" in tgt:
        return LinkUse(raw, tgt, "unresolved", None, "reference into another project", None)
    res = resolver.resolve(tgt, scope)
    replacement = None
    if res.status == "resolved" and res.target is not None:
        replacement = _rewrite_parts(inner, parts, embed, resolver.link_name(res.target))
    return LinkUse(raw, tgt, res.status, res.target, res.reason, replacement)


def _md_link(url: str, resolver: Resolver, source_dir: str, target: str) -> LinkUse | None:
    from shardpy.importers.bm_grammar import is_local_note_url

    bare = url.strip("<>")
    if not is_local_note_url(bare):
        return None
    path, _, fragment = bare.partition("#")
    decoded = urllib.parse.unquote(path)
    joined = (
        posixpath.normpath(posixpath.join(source_dir, decoded)) if source_dir else posixpath.normpath(decoded)
    )
    if joined.startswith("../") or joined == "..":
        return LinkUse(url, decoded, "unresolved", None, "climbs out of the source folder", None)
    dest = resolver.target_of_source(joined)
    if dest is None:
        return LinkUse(url, decoded, "unresolved", None, "no imported note at this path", None)
    rel = posixpath.relpath(dest, posixpath.dirname(target) or ".")
    new_url = urllib.parse.quote(rel, safe="/()-_.~") + (f"#{fragment}" if fragment else "")
    if bare.startswith("<"):
        new_url = f"<{rel}{'#' + fragment if fragment else ''}>"
    replacement = None if new_url == url else new_url
    return LinkUse(url, decoded, "resolved", dest, "", replacement)


def _pick(found: list[str], scope: str) -> Resolution:
    """The one imported note among ``found`` (the only one under ``scope`` wins), or ambiguous."""
    if len(found) == 1:
        return Resolution("resolved", found[0])
    uniq = sorted(set(found))
    if len(uniq) > 1 and scope:
        scoped = [h for h in uniq if h.startswith(scope)]
        if len(scoped) == 1:
            uniq = scoped
    if len(uniq) == 1:
        return Resolution("resolved", uniq[0])
    return Resolution(
        "ambiguous",
        reason=f"{len(uniq)} imported notes answer to this name: " + ", ".join(uniq[:3]),
    )
