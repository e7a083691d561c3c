"""The memory layer: notes under the vault's ``memory_root``, each declaring its reach.

Pure: no MCP here. A memory's frontmatter (the flagship's
``templates/Memory.md``) says who may recall it:

- ``scope: general`` reaches every caller;
- a ``projects`` list naming the caller reaches it, whatever the scope;
- ``scope: platform`` reaches a caller sharing one of its ``platforms``;
- otherwise it is not visible (default deny). A caller without a project
  sees ``general`` only.

Ranking: superseded memories sink below live ones, then specificity
(project > platform > general), then the narrower reach (fewer projects, or
fewer platforms, named), then date, then session time, newest first. Seed 000:
"a memory naming only your project outranks one naming five"
(tests/hardening/test_serve_recall_order.py).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from shardpy.fsutil import open_regular
from shardpy.graph.store import GRAPH_FOLDER
from shardpy.index.config import IndexConfig
from shardpy.notes import visibility
from shardpy.notes.frontmatter import as_list, as_text, split_frontmatter, yaml_item
from shardpy.notes.wikilinks import find_wikilinks
from shardpy.serve.identity import NAME, Caller

Scope = Literal["general", "platform", "project"]
SCOPES: tuple[Scope, ...] = ("general", "platform", "project")
CONFIDENCES = ("verified", "observed", "inferred")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
DUPLICATE_AT = 0.6  # token Jaccard over title + body at or above which a live memory is a near-duplicate


@dataclass(frozen=True, slots=True)
class Memory:
    path: str  # vault-relative
    title: str
    body: str
    scope: str
    projects: tuple[str, ...]
    platforms: tuple[str, ...]
    confidence: str
    date: str
    session: str
    origin: str
    superseded_by: str
    supersedes: tuple[str, ...]
    problems: tuple[str, ...]  # validation failures (such a memory is never recalled)
    words: frozenset[str] = field(default_factory=frozenset)

    @property
    def live(self) -> bool:
        return not self.superseded_by

    def specificity(self) -> int:
        return {"project": 2, "platform": 1}.get(self.scope, 0)

    def breadth(self) -> int:
        """How many projects (or, for a platform memory, platforms) its reach names: fewer is narrower,
        so more specific to the caller it reached (0 for a general memory, which names no one)."""
        return {"project": len(self.projects), "platform": len(self.platforms)}.get(self.scope, 0)

    def to_json(self, *, body: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "title": self.title,
            "scope": self.scope,
            "projects": list(self.projects),
            "platforms": list(self.platforms),
            "confidence": self.confidence,
            "date": self.date,
            "session": self.session,
            "origin": self.origin,
            "superseded": not self.live,
            "superseded_by": self.superseded_by or None,
            "supersedes": list(self.supersedes),
        }
        if body:
            out["body"] = self.body
        return out


def words(text: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in _WORD.findall(text) if len(w) > 1)


def _names(value: Any) -> tuple[str, ...]:
    return tuple(v.strip().lower() for v in as_list(value) if v.strip())


def _day(value: Any) -> str:
    text = as_text(value) or ""
    return text[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}.*", text) else ""


def parse_memory(rel: str, text: str) -> Memory:
    split = split_frontmatter(text.removeprefix("\ufeff"))
    problems: list[str] = []
    data = split.data if split.state == "present" else {}
    if split.state != "present":
        problems.append(
            "no closed frontmatter" if split.state == "absent" else f"bad frontmatter: {split.error}"
        )
    body = split.body if split.state == "present" else text
    stem = rel.rsplit("/", 1)[-1][:-3]
    title = stem[11:] if re.match(r"\d{4}-\d{2}-\d{2} ", stem) else stem
    heading = next((ln[2:].strip() for ln in body.splitlines() if ln.startswith("# ")), "")
    scope = (as_text(data.get("scope")) or "").strip().lower()
    projects, platforms = _names(data.get("projects")), _names(data.get("platforms"))
    if scope not in SCOPES:
        problems.append(f"scope {scope!r} is not one of general, platform, project")
    if scope == "project" and not projects:
        problems.append("scope: project with an empty projects list reaches nobody")
    if scope == "platform" and not platforms:
        problems.append("scope: platform with an empty platforms list reaches nobody")
    bad = [n for n in (*projects, *platforms) if not NAME.fullmatch(n)]
    if bad:
        problems.append("invalid project or platform names: " + ", ".join(bad))
    superseded_by = as_text(data.get("superseded_by")) or ""
    text_body = _strip_heading(body).strip()
    return Memory(
        rel,
        heading or title,
        text_body,
        scope,
        projects,
        platforms,
        (as_text(data.get("confidence")) or "").strip().lower(),
        _day(data.get("date")) or (stem[:10] if re.match(r"\d{4}-\d{2}-\d{2}", stem) else ""),
        as_text(data.get("session")) or "",
        as_text(data.get("origin")) or "",
        superseded_by.strip(),
        tuple(as_list(data.get("supersedes"))),
        tuple(problems),
        words(f"{heading or title} {text_body}"),
    )


def _strip_heading(body: str) -> str:
    lines = body.lstrip("\r\n").split("\n")
    if lines and lines[0].startswith("# "):
        lines = lines[1:]
    return "\n".join(lines)


def visible(memory: Memory, caller: Caller) -> bool:
    """The reach rule, in the order that is the design (module docstring)."""
    if memory.problems:
        return False
    if memory.scope == "general":
        return True
    if caller.project is None:
        return False
    if caller.project in memory.projects:
        return True
    return memory.scope == "platform" and bool(set(memory.platforms) & set(caller.platforms))


def declared_order(memories: list[Memory]) -> list[Memory]:
    """Live before superseded, then project > platform > general, then the narrower reach, then newest
    date, then newest session."""
    order = sorted(memories, key=lambda m: (m.date, m.session, m.path), reverse=True)
    order.sort(key=lambda m: (0 if m.live else 1, -m.specificity(), m.breadth()))
    return order


def ranked(memories: list[Memory], query: str | None, *, ordered: bool = False) -> list[Memory]:
    """Declared order; a query reorders inside the live and the superseded groups, never across them,
    and never filters (a memory the query misses keeps its declared place after the matches).
    ``ordered``: ``memories`` is already in declared order."""
    order = memories if ordered else declared_order(memories)
    q = words(query) if query else frozenset()
    if not q:
        return list(order)
    score = {m.path: len(q & m.words) for m in order}
    out: list[Memory] = []
    for live in (True, False):
        group = [m for m in order if m.live is live]
        hits = sorted((m for m in group if score[m.path]), key=lambda m: -score[m.path])
        out += hits + [m for m in group if not score[m.path]]
    return out


def similarity(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def near_duplicates(title: str, body: str, candidates: list[Memory]) -> list[tuple[Memory, float]]:
    """Live memories this new one nearly repeats (same title, or token Jaccard >= DUPLICATE_AT)."""
    mine = words(f"{title} {body}")
    found: list[tuple[Memory, float]] = []
    for m in candidates:
        if not m.live:
            continue
        score = 1.0 if m.title.casefold() == title.casefold() else similarity(mine, m.words)
        if score >= DUPLICATE_AT:
            found.append((m, round(score, 3)))
    return sorted(found, key=lambda p: -p[1])


# -- the store --------------------------------------------------------------------


@dataclass
class Store:
    """The memory root of one vault, parsed once per file version (size, mtime, inode).

    Its files are found by the one walker and rule every reader asks (``shardpy.notes.visibility``:
    no link, no dot folder, no ``credentials``/``transcripts``/... folder, no sync-conflict copy,
    nothing ``mcp_never_expose`` names, nothing the index leaves out), so recall returns only
    notes the index holds. The memory graph's entity notes (``<memory_root>/graph/``) are not
    memories: the graph tools serve them, and ``search`` finds them (issue 28, docs/SERVE.md)."""

    vault: Path  # realpath
    root: str | None
    rule: visibility.Rule | None = None  # None: the vault manifest's, read once when first needed
    # None: a soft-deleted memory file (kept so it is not read again while unchanged)
    _cache: dict[str, tuple[tuple[int, int, int], Memory | None]] = field(default_factory=dict)
    _snapshot: tuple[Memory, ...] = ()
    _views: dict[Caller, tuple[list[Memory], int]] = field(default_factory=dict)

    def _rule(self) -> visibility.Rule:
        if self.rule is None:
            self.rule = IndexConfig.for_vault(self.vault).rule
        return self.rule

    def _found(self) -> list[visibility.Entry]:
        """The memory files: regular ``.md`` files (a link is never a memory, as it is never a note;
        docs/SERVE.md "Exposure") the rule covers below the memory root, outside its graph folder."""
        if self.root is None:
            return []
        rule = self._rule()
        base = self.root.strip("/")
        graph = f"{base}/{GRAPH_FOLDER}".casefold()

        def wanted(rel: str, name: str) -> bool:
            if not name.lower().endswith(".md") or visibility.under(rel.casefold(), graph):
                return False
            return rule.is_note(rel, name)

        return [e for e in visibility.walk(self.vault, rule, wanted, base=base) if e.is_regular]

    def all(self) -> list[Memory]:
        """Every memory file under the root; listed and stat-ed on every call, re-read only when changed."""
        out: list[Memory] = []
        seen: set[str] = set()
        for entry in self._found():
            rel, st = entry.rel, entry.stat
            seen.add(rel)
            key = (st.st_size, st.st_mtime_ns, st.st_ino)
            cached = self._cache.get(rel)
            if cached is None or cached[0] != key:
                text = _read_nofollow(entry.path)
                if text is None:
                    continue
                # issue 30: soft-deleted (``disabled: true``) is no reader's, as in the index
                # (tests/notes/test_visibility_properties.py found recall serving one).
                cached = (key, None if visibility.deleted(text) else parse_memory(rel, text))
                self._cache[rel] = cached
            if cached[1] is not None:
                out.append(cached[1])
        for gone in [k for k in self._cache if k not in seen]:
            del self._cache[gone]
        same = len(out) == len(self._snapshot) and all(
            a is b for a, b in zip(out, self._snapshot, strict=True)
        )
        if not same:
            self._snapshot = tuple(out)
            self._views.clear()  # the store changed: every caller's view is recomputed
        return out

    def visible_to(self, caller: Caller) -> tuple[list[Memory], int]:
        """The one answer to "which memories may this caller recall": (visible in declared order, withheld).

        The store is listed and stat-ed every call; the filtered, ordered view is reused while no
        file changed (identical parsed entries in the same order)."""
        everything = self.all()
        view = self._views.get(caller)
        if view is None:
            shown = declared_order([m for m in everything if visible(m, caller)])
            view = (shown, len(everything) - len(shown))
            self._views[caller] = view
        return view

    def invalidate(self, rel: str) -> None:
        self._cache.pop(rel, None)


def _read_nofollow(path: str) -> str | None:
    """A memory file's text, never through a link swapped in after the listing."""
    try:
        fd = open_regular(path)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8", "replace")


# -- writing ----------------------------------------------------------------------


def memory_path(root: str, day: _dt.date, title: str) -> str:
    return f"{root}/{day:%Y}/{day:%m}/{day.isoformat()} {title}.md"


def neutralise_links(text: str, exists: set[str]) -> str:
    """``[[X]]`` whose target names no note (``exists``: casefolded stems and paths) becomes plain text,
    so a memory never plants a link that creates an empty note when clicked."""
    links = find_wikilinks(text)
    if not links:
        return text
    out: list[str] = []
    last = 0
    for link in links:
        target = link.target.removesuffix(".md").casefold()
        out.append(text[last : link.start])
        if target in exists or target.rsplit("/", 1)[-1] in exists:
            out.append(text[link.start : link.end])
        else:
            alias = link.inner.split("|", 1)[1] if "|" in link.inner else link.target
            out.append(alias)
        last = link.end
    out.append(text[last:])
    return "".join(out)


@dataclass(frozen=True, slots=True)
class NewMemory:
    title: str
    body: str
    scope: Scope
    projects: tuple[str, ...]
    platforms: tuple[str, ...]
    confidence: str
    origin: str
    session: str  # ISO-8601 UTC instant
    day: _dt.date
    supersedes: tuple[str, ...]  # link names (stems) of the memories it replaces


def render_memory(m: NewMemory) -> bytes:
    """The note, frontmatter in the flagship template's key order (templates/Memory.md)."""
    first = m.body.strip().split("\n", 1)[0]
    description = first if len(first) <= 160 else first[:157].rstrip() + "..."
    nl = "\n"
    items: list[tuple[str, str | list[str]]] = [
        ("date", m.day.isoformat()),
        ("description", description),
        ("tags", ["memory"]),
        ("scope", m.scope),
        ("projects", list(m.projects)),
        ("platforms", list(m.platforms)),
        ("confidence", m.confidence),
        ("origin", m.origin),
        ("session", m.session),
        ("supersedes", [f"[[{s}]]" for s in m.supersedes]),
    ]
    block = "".join(_item(k, v, nl) for k, v in items)
    return f"---{nl}{block}---{nl}# {m.title}{nl}{nl}{m.body.strip()}{nl}".encode()


def _item(key: str, value: str | list[str], nl: str) -> str:
    if isinstance(value, list) and not value:
        return f"{key}: []{nl}"
    return yaml_item(key, value, nl)
