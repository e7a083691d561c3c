"""The tools: argument models (their JSON Schemas are what tools/list publishes) and thin handlers.

A handler takes the served vault, the caller (derived by the server, never
an argument) and validated arguments, and returns a JSON-able dict or raises
:class:`ShardpyError`. Every handler reaches notes only through the two
exposure predicates and memories only through ``Store.visible_to``.
"""

from __future__ import annotations

import datetime as _dt
import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationError

from shardpy.errors import ShardpyError
from shardpy.notes.frontmatter import split_frontmatter, yaml_item
from shardpy.notes.note import stem as note_stem
from shardpy.serve import capture
from shardpy.serve.exposure import Manifest, clean_root, inside, under
from shardpy.serve.graph import Attachments, Names
from shardpy.serve.identity import NAME, Caller
from shardpy.serve.memories import (
    Memory,
    NewMemory,
    memory_path,
    near_duplicates,
    neutralise_links,
    ranked,
    render_memory,
)
from shardpy.serve.qmd import Qmd, QmdAnswer, fuse
from shardpy.serve.toolkit import Args, Served, check_body, check_text, memory_root_of

TITLE_MAX = 120
# A title becomes a file name: "YYYY-MM-DD " + title + ".md" must stay under the 255 bytes a file name
# may have, with room to spare (issue 24, item 16: 120 four-byte characters answered "File name too long").
TITLE_BYTES = 200
NAMES_MAX = 32  # projects or platforms one memory names (200,000 wrote a 1.9 MB memory)
SUPERSEDES_MAX = 20
BODY_MAX = 20_000
GENERAL_BODY_MAX = 2_000  # general reaches every caller: the shortest leash
QUERY_MAX = 1_000
SEARCH_PAGES = 5
_TITLE_FORBIDDEN = set('/\\[]|#^:*?"<>')


Limit = Annotated[int, Field(ge=1, le=50)]


class SearchArgs(Args):
    query: Annotated[str, Field(min_length=1, max_length=QUERY_MAX, description="Words to find.")]
    limit: Limit = 10
    type: str | None = Field(
        None, max_length=200, description="Only notes of this type (frontmatter type or folder convention)."
    )
    path: str | None = Field(None, max_length=1000, description="Only notes under this vault folder.")
    mode: Literal["hybrid", "lexical", "semantic"] | None = Field(
        None,
        description="hybrid (the default once the index has vectors): words and meaning fused; "
        "lexical: words only (BM25); semantic: meaning only.",
    )


class ExpandArgs(Args):
    note: Annotated[str, Field(min_length=1, max_length=1000, description="A vault path or a [[wikilink]].")]


class RecallArgs(Args):
    query: Annotated[str, Field(max_length=QUERY_MAX)] | None = None
    limit: Limit = 10


class RememberArgs(Args):
    title: Annotated[str, Field(min_length=1, max_length=10 * TITLE_MAX)]
    body: Annotated[str, Field(min_length=1)]
    scope: Literal["general", "platform", "project"]
    projects: Annotated[list[str], Field(max_length=NAMES_MAX)] | None = None
    platforms: Annotated[list[str], Field(max_length=NAMES_MAX)] | None = None
    confidence: Literal["verified", "observed", "inferred"] | None = None
    supersedes: Annotated[list[str], Field(max_length=SUPERSEDES_MAX)] | None = Field(
        None, description="Paths or [[names]] of memories this one replaces."
    )
    force: bool = False


class RecordWorkArgs(Args):
    folder: Annotated[str, Field(min_length=1, max_length=500, description="e.g. work/active")]
    title: Annotated[str, Field(min_length=1, max_length=10 * TITLE_MAX)]
    body: Annotated[str, Field(min_length=1)]


class HealthArgs(Args):
    pass


TOOLS: dict[str, tuple[type[Args], str]] = {
    "search": (
        SearchArgs,
        "Search the vault's notes by words and by meaning (local index); results are filtered by the "
        "exposure policy.",
    ),
    "expand": (
        ExpandArgs,
        "One note: frontmatter, body, outgoing links resolved, backlinks among served notes.",
    ),
    "recall": (RecallArgs, "Memories meant for this caller's project, platforms and everyone, ranked."),
    "remember": (RememberArgs, "Record one memory (a lesson with its reach: general, platform or project)."),
    "record_work": (RecordWorkArgs, "File one work note into a folder of the vault's user-content roots."),
    "health": (
        HealthArgs,
        "Index freshness, served/withheld counts, broken links, memories failing validation.",
    ),
}
READ_ONLY = frozenset({"search", "expand", "recall", "health"})


def parse_args(tool: str, raw: dict[str, Any] | None) -> Args:
    if tool not in TOOLS:
        shown = tool if len(tool) <= 64 else tool[:64] + "…"
        raise ShardpyError(
            "SERVE_UNKNOWN_TOOL",
            f"unknown tool {shown!r}",
            "List the tools (tools/list): " + ", ".join(TOOLS) + ".",
        )
    model = TOOLS[tool][0]
    try:
        return model.model_validate(raw or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:8]
        )
        raise ShardpyError(
            "SERVE_BAD_ARGUMENTS",
            f"{tool}: {problems}",
            f"See the {tool} tool's input schema (tools/list).",
        ) from None


def check_title(title: str) -> str:
    check_text("title", title, TITLE_MAX)
    clean = title.strip()
    size = len(clean.encode("utf-8"))
    if size > TITLE_BYTES:
        raise ShardpyError(
            "SERVE_TOO_LONG",
            f"title is {size:,} bytes in UTF-8; a note name holds at most {TITLE_BYTES}",
            "Say it shorter (characters outside ASCII take two to four bytes each).",
        )
    bad = sorted({c for c in clean if c in _TITLE_FORBIDDEN or not c.isprintable()})
    if not clean or bad or clean.startswith(".") or clean.endswith("."):
        shown = ", ".join(repr(c) for c in bad) or "an empty or dot-edged name"
        raise ShardpyError(
            "SERVE_BAD_TITLE",
            f"title cannot be a note name: {shown}",
            'A title is one line without / \\ [ ] | # ^ : * ? " < >, not starting or ending with a dot.',
        )
    return clean


def _names(field_name: str, values: list[str] | None) -> tuple[str, ...]:
    out: list[str] = []
    for v in values or []:
        name = v.strip().lower()
        if not NAME.fullmatch(name):
            shown = v if len(v) <= 64 else v[:64] + "…"  # the answer echoes a bounded name, never 10 MB
            raise ShardpyError(
                "SERVE_BAD_ARGUMENTS",
                f"{field_name}: {shown!r} is not a project/platform name",
                "Names are lowercase letters, digits, '.', '_' or '-', at most 64 characters.",
            )
        out.append(name)
    return tuple(dict.fromkeys(out))


# -- search --------------------------------------------------------------------------


def search(v: Served, caller: Caller, a: SearchArgs) -> dict[str, Any]:
    """The index's hybrid search (shardpy/index/hybrid.py, the CLI's ranking) over the notes
    ``may_read`` admits: the filter is applied to both lists before they are fused, never to the
    query.

    Withheld notes change nothing a caller sees (issue 24 item 6): a withheld note never appears
    and its text never does, whatever the mode; no count of them is answered; ``match`` is decided
    on readable hits only (when no note the caller may read holds every word, the words are ORed,
    exactly as if the withheld notes did not exist), and ranks count readable notes only
    (tests/security/test_serve_exposure.py, tests/serve/test_search_hybrid.py)."""
    index = _index()
    check_text("query", a.query, QUERY_MAX)
    result = index.search(
        v.root,
        a.query,
        top=a.limit,
        type=a.type,
        path=a.path,
        mode=a.mode or "auto",
        keep=lambda rel: v.exposure.may_read(rel) is not None,
    )
    notices = [x for x in result.notices if x.startswith(_QUERY_NOTICES)]
    hits = [hit.to_json() for hit in result.hits]
    out = {"query": a.query, "match": result.match, "mode": result.mode, "hits": hits, "notices": notices}
    if v.qmd is not None:
        _with_qmd(v, v.qmd, a, out)
    return out


# Only what is about the caller's query is relayed: the index's upkeep notices (files skipped,
# notes degraded, a rebuild) describe the whole vault, withheld parts included, and vary with
# when a refresh ran (tests/security/test_serve_exposure.py::test_search_answers_nothing_about_withheld_text).
_QUERY_NOTICES = ("query syntax", "the query ")


def _with_qmd(v: Served, qmd: Qmd, a: SearchArgs, out: dict[str, Any]) -> None:
    """Fuse QMD's hits into ``out``, each filtered by ``may_read`` (and the path filter) first.

    A QMD failure degrades this one search and says so in ``qmd`` and ``notices``;
    the index's hits still stand. Like the index's, QMD's withheld hits are not counted."""
    if a.type is not None:  # QMD knows no note types; a hit it cannot check is not served
        out["hits"] = fuse(out["hits"], [], a.limit)
        out["qmd"] = _qmd_block(QmdAnswer("off", reason="not consulted for a type filter"), 0)
        return
    answer = qmd.query(a.query, a.limit)
    if answer.status != "ok":
        out["hits"] = fuse(out["hits"], [], a.limit)
        out["qmd"] = _qmd_block(answer, 0)
        out["notices"].append(f"qmd failed ({answer.reason}); these hits come from the full-text index only")
        return
    served: list[dict[str, Any]] = []
    prefix = a.path.strip("/") + "/" if a.path else ""
    for hit in answer.hits:
        note = v.exposure.may_read(hit.path)
        if note is not None and hit.path.startswith(prefix):
            title = note.title or hit.title
            served.append({"path": hit.path, "title": title, "heading": [], "snippet": hit.snippet,
                           "score": hit.score, "type": None, "line": None})  # fmt: skip
    out["hits"] = fuse(out["hits"], served, a.limit)
    out["qmd"] = _qmd_block(answer, len(served))


def _qmd_block(answer: QmdAnswer, served: int) -> dict[str, Any]:
    block = answer.to_json(served, 0)
    block.pop("withheld", None)  # item 6: nothing about what the caller may not read
    return block


def _index() -> Any:
    import importlib

    try:
        index = importlib.import_module("shardpy.index")
    except ImportError:
        raise ShardpyError(
            "SERVE_SEARCH_UNAVAILABLE",
            "this shardpy has no search index (shardpy.index is missing)",
            "Use expand, recall and the vault://note resources; install a shardpy with search.",
        ) from None
    return index


def refresh_index(v: Served, paths: list[str]) -> list[str]:
    """Make freshly written notes searchable now (an MCP write fires no editor hook).

    Returns warnings, never raises: the write itself is done. A warning names the failure's code or
    type, never its text: that names the index's file in the user's cache (issue 24, item 16)."""
    try:
        index = _index()
        index.refresh(v.root, only=paths)
    except ShardpyError as exc:
        return [f"written, but not yet searchable: the index refresh failed ({exc.code})"]
    except Exception as exc:  # an index bug must not turn a completed write into a reported failure
        return [f"written, but not yet searchable: the index refresh failed ({type(exc).__name__})"]
    return []


# -- expand --------------------------------------------------------------------------


def note_ref(note: str) -> str:
    ref = note.strip()
    if ref.startswith("[[") and ref.endswith("]]"):
        ref = ref[2:-2]
    return ref.split("|", 1)[0].split("#", 1)[0].strip()


def expand(v: Served, caller: Caller, a: ExpandArgs) -> dict[str, Any]:
    check_text("note", a.note, 1000)
    ref = note_ref(a.note)
    notes = v.exposure.notes()
    names = Names.of(notes)
    path = ref if ref.lower().endswith(".md") else None
    if path is None:
        path = names.resolve(ref)
    note = v.exposure.may_read(path) if path else None
    text = v.exposure.read_text(path) if note is not None and path else None
    if note is None or text is None or path is None:
        raise ShardpyError(
            "SERVE_NOTE_NOT_FOUND",
            f"no served note {ref!r}",
            "Search first; pass a vault path (folder/Note.md) or a [[Note]] name.",
        )
    split = split_frontmatter(text)
    links = [{"target": t, "path": names.resolve(t)} for t in v.links.targets(path)]
    return {
        "path": path,
        "title": note.title,
        "frontmatter": _jsonable(split.data if split.state == "present" else {}),
        "body": split.body if split.state == "present" else text,
        "links": links,
        "backlinks": v.links.backlinks(path, notes, names),
    }


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(x) for k, x in value.items()}
    if isinstance(value, list):
        return [_jsonable(x) for x in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, _dt.date | _dt.datetime):
        return value.isoformat()
    return str(value)


# -- recall --------------------------------------------------------------------------


def recall(v: Served, caller: Caller, a: RecallArgs) -> dict[str, Any]:
    if a.query:
        check_text("query", a.query, QUERY_MAX)
    shown, withheld = v.store.visible_to(caller)
    order = ranked(shown, a.query, ordered=True)
    if a.query:
        order = _recall_by_meaning(order, a.query)
    order = order[: a.limit]
    return {
        "caller": caller.answer_json(),
        "memories": [m.to_json() for m in order],
        "visible": len(shown),
        "withheld": withheld,
    }


def _recall_by_meaning(order: list[Memory], query: str) -> list[Memory]:
    """The query's order fused with meaning inside the live and the superseded groups, never across
    them, never filtering (issue 29); unchanged without a model."""
    from shardpy.index import hybrid

    out: list[Memory] = []
    for live in (True, False):
        group = [m for m in order if m.live is live]
        out += hybrid.order_by_meaning(group, lambda m: f"{m.title}\n{m.body}", query) or group
    return out


# -- remember ------------------------------------------------------------------------


def remember(v: Served, caller: Caller, a: RememberArgs, now: _dt.datetime | None = None) -> dict[str, Any]:
    if caller.is_vault:
        raise ShardpyError(
            "SERVE_VAULT_CALLER",
            "the vault itself may not write memories: a memory scoped to the vault reaches only "
            "sessions that already read every note",
            "Write the lesson into a brain/ note instead.",
        )
    root = memory_root_of(v)
    title = check_title(a.title)
    limit = GENERAL_BODY_MAX if a.scope == "general" else BODY_MAX
    body = check_body(a.body, limit)
    projects, platforms = _reach(caller, a)
    confidence = a.confidence or "observed"
    if "[[" in title or "[[" in body:  # the names walk the vault: only for a memory with links
        exists = _link_names(v)
        title, body = neutralise_links(title, exists), neutralise_links(body, exists)
    shown, _ = v.store.visible_to(caller)
    # Named twice (a path and its stem): superseded once, listed once.
    old = list({m.path: m for m in (_find_memory(shown, ref) for ref in a.supersedes or [])}.values())
    replaced = {m.path for m in old}
    if not a.force:
        dupes = [(m, s) for m, s in near_duplicates(title, body, shown) if m.path not in replaced]
        if dupes:
            return {
                "recorded": False,
                "duplicates": [{"path": m.path, "title": m.title, "similarity": s} for m, s in dupes[:5]],
                "suggestion": "This repeats a live memory: pass supersedes: [its path] to replace it, "
                "or force: true to record it anyway.",
            }
    moment = now or _dt.datetime.now(_dt.UTC)
    day = moment.astimezone().date()
    path = memory_path(root, day, title)
    new = NewMemory(
        title,
        body,
        a.scope,
        projects,
        platforms,
        confidence,
        caller.project or "",
        moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z",
        day,
        tuple(note_stem(m.path) for m in old),
    )
    rewrites = tuple(
        capture.mark_superseded(m.path, (v.root / m.path).read_bytes(), note_stem(path)) for m in old
    )
    capture.apply_plan(v.root, capture.WritePlan("remember", path, render_memory(new), rewrites))
    for m in old:
        v.store.invalidate(m.path)
    warnings = refresh_index(v, [path, *replaced])
    return {
        "recorded": True,
        "path": path,
        "scope": a.scope,
        "projects": list(projects),
        "platforms": list(platforms),
        "superseded": sorted(replaced),
        "warnings": warnings,
    }


def _reach(caller: Caller, a: RememberArgs) -> tuple[tuple[str, ...], tuple[str, ...]]:
    projects = _names("projects", a.projects)
    platforms = _names("platforms", a.platforms)
    if a.scope == "general":
        if projects or platforms:
            raise ShardpyError(
                "SERVE_BAD_SCOPE",
                "scope: general reaches every caller; it takes no projects or platforms",
                "Use scope: project (with projects) or scope: platform (with platforms).",
            )
        if a.confidence is None:
            raise ShardpyError(
                "SERVE_BAD_SCOPE",
                "scope: general needs an explicit confidence (verified, observed or inferred)",
                "A lesson every repository will read must say how sure it is.",
            )
    if a.scope == "project" and not projects:
        if caller.project is None:
            raise ShardpyError(
                "SERVE_BAD_SCOPE",
                "scope: project, but this caller has no project name and no projects were given",
                "Pass projects: [name], or add a .shardmind-project file to the repository.",
            )
        projects = (caller.project,)
    if a.scope == "platform" and not platforms:
        platforms = caller.platforms
        if not platforms:
            raise ShardpyError(
                "SERVE_BAD_SCOPE",
                "scope: platform needs platforms: [ios, ...]",
                "Name the platforms it applies to.",
            )
    return projects, platforms


def _link_names(v: Served) -> set[str]:
    """What a memory's ``[[link]]`` may name and stay a link: served notes and memories, the graph's
    entity notes (open_nodes serves them) and the vault's attachments (health already counts an
    embed of one as working). An embed of an existing image or base, or a link to an entity,
    was turned into plain text (a helper's probe; tests/serve/test_supersede_bytes.py); a note the
    vault withholds still is, so the answer says nothing of it."""
    from shardpy.graph.store import GRAPH_FOLDER
    from shardpy.serve.graph import Attachments

    names = {note_stem(p).casefold() for p in v.exposure.notes()}
    names |= {note_stem(m.path).casefold() for m in v.store.all()}
    root = v.exposure.manifest.memory_root
    graph = v.root / (root or "").strip("/") / GRAPH_FOLDER
    try:
        with os.scandir(graph) as found:
            names |= {
                e.name[:-3].casefold()
                for e in found
                if e.name.endswith(".md") and e.is_file(follow_symlinks=False)
            }
    except OSError:
        pass  # no graph yet
    attachments = Attachments.of(v.root, v.exposure.index)
    return names | attachments.names | attachments.paths


def _find_memory(shown: list[Memory], ref: str) -> Memory:
    """The memory ``ref`` names: its path or file stem (any case, ``.md`` or ``.MD``), else its
    title as recall shows it when exactly one memory has it (a helper's probe: the title recall
    returned, and a path ending ``.MD``, named nothing; tests/serve/test_supersede_bytes.py)."""
    key = _without_md(note_ref(ref)).casefold()
    by_name = [m for m in shown if key in (_without_md(m.path).casefold(), note_stem(m.path).casefold())]
    titled = [m for m in shown if m.title.strip().casefold() == ref.strip().casefold()]
    live = [m for m in titled if m.live]  # a title a superseded memory shares is its successor's
    found = by_name or live or titled[:1]
    if len(found) > 1 and not by_name:
        raise ShardpyError(
            "SERVE_SUPERSEDES_INVALID",
            f"supersedes: {len(found)} memories are titled {ref!r}",
            "Pass the memory's path (recall shows it).",
        )
    if not found:
        raise ShardpyError(
            "SERVE_SUPERSEDES_INVALID",
            f"supersedes: no memory {ref!r} visible to this caller",
            "Recall first and pass a memory's path.",
        )
    m = found[0]
    if not m.live:
        raise ShardpyError(
            "SERVE_SUPERSEDES_INVALID",
            f"{m.path} is already superseded by {m.superseded_by}",
            "Supersede the memory that replaced it.",
        )
    return m


def _without_md(path: str) -> str:
    return path[:-3] if path.lower().endswith(".md") else path


# -- record_work -----------------------------------------------------------------------


def work_roots(manifest: Manifest) -> list[str]:
    """The folder roots among the user-content roots (a file or glob root cannot take a new note)."""
    mem = manifest.memory_root
    return [
        r
        for r in manifest.user_content_roots
        if r and not set("*?[") & set(r) and not r.lower().endswith(".md") and not (mem and under(r, mem))
    ]


def record_work(
    v: Served, caller: Caller, a: RecordWorkArgs, now: _dt.datetime | None = None
) -> dict[str, Any]:
    title = check_title(a.title)
    body = check_body(a.body, BODY_MAX)
    folder = _work_folder(v, check_text("folder", a.folder, 500))
    moment = now or _dt.datetime.now(_dt.UTC)
    day = moment.astimezone().date()
    path = f"{folder}/{title}.md"
    nl = "\n"
    items: list[tuple[str, str | list[str]]] = [
        ("date", day.isoformat()),
        ("description", body.split("\n", 1)[0][:160]),
        ("tags", ["work"]),
        ("status", "active"),
        ("quarter", f"{day.year}-Q{(day.month - 1) // 3 + 1}"),
        ("origin", caller.project or ""),
    ]
    data = ("---" + nl + "".join(yaml_item(k, x, nl) for k, x in items) + "---" + nl).encode()
    data += f"# {title}{nl}{nl}{body}{nl}".encode()
    capture.apply_plan(v.root, capture.WritePlan("record-work", path, data))
    return {"recorded": True, "path": path, "warnings": refresh_index(v, [path])}


def _work_folder(v: Served, raw: str) -> str:
    """The caller's folder, inside the user-content root it names, contained against that root's realpath."""
    folder = clean_root(raw.replace("\\", "/"))
    roots = work_roots(v.manifest)
    root = max((r for r in roots if under(folder, r)), key=len, default=None)
    refused = ShardpyError(
        "SERVE_FOLDER_REFUSED",
        f"{raw!r} is not inside a user-content folder of this vault",
        "Use one of: " + ", ".join(f"{r}/" for r in roots),
    )
    if root is None or folder.startswith("/") or "\x00" in folder:
        raise refused
    real_root = os.path.realpath(v.root / root)
    real = os.path.realpath(v.root / folder)
    if not inside(real_root, str(v.root)) or not inside(real, real_root):
        raise refused
    rel = os.path.relpath(real, v.root).replace(os.sep, "/")
    if any(p.startswith(".") for p in rel.split("/")):
        raise refused
    return rel


# -- health ------------------------------------------------------------------------------


def health(v: Served, caller: Caller, a: HealthArgs) -> dict[str, Any]:
    notes = v.exposure.notes()
    names = Names.of(notes)
    count, broken = v.links.broken(notes, names, Attachments.of(v.root, v.exposure.index))
    every = v.store.all()
    invalid = [m for m in every if m.problems]
    named = [{"path": m.path, "problems": list(m.problems)} for m in invalid if _may_name(caller, m)]
    return {
        "caller": caller.answer_json(),
        "index": _index_health(v),
        "qmd": v.qmd.status() if v.qmd is not None else _qmd_off(v),
        "audit": _audit_health(v),
        "exposure": {"source": v.exposure.source, "roots": v.exposure.roots()},
        "notes": {"served": len(notes), "withheld": _withheld_count(v, len(notes))},
        "broken_links": {"count": count, "sample": broken},
        "memories": {
            "total": len(every),
            "live": sum(1 for m in every if m.live and not m.problems),
            "superseded": sum(1 for m in every if not m.live),
            "invalid": named[:50],
            "invalid_count": len(invalid),
        },
        "graph": _graph_health(v, caller),
    }


def _graph_health(v: Served, caller: Caller) -> dict[str, Any]:
    # Imported here: graphtools loads the SDK's types (mcp_types), which status and install must
    # not (tests/serve/test_units.py); no cycle, graphtools imports serve.toolkit, not this module.
    from shardpy.serve.graphtools import health as graph_health

    return graph_health(v, caller)  # the graph's own report (docs/MEMORY.md)


def _may_name(caller: Caller, memory: Memory) -> bool:
    """An invalid memory is named (a memory's path carries its title) only to the vault's own
    session and to a project its ``projects`` list names; every other caller gets the count
    (issue 24 item 7, tests/security/test_serve_exposure.py::test_health_names_no_foreign_memory)."""
    if caller.is_vault:
        return True
    return caller.project is not None and caller.project in memory.projects


def _qmd_off(v: Served) -> dict[str, Any]:
    out: dict[str, Any] = {"configured": False, "live": False}
    if v.qmd_note:
        out["note"] = v.qmd_note
    return out


def _audit_health(v: Served) -> dict[str, Any]:
    """Whether calls are being logged: a link where the log or its folder should be is refused, never
    written through (issue 24, items 4 and 5), and said here."""
    problem = v.audit.problem()
    return {"ok": False, "problem": problem} if problem else {"ok": True}


def _withheld_count(v: Served, served: int) -> int:
    """Markdown files in the vault (outside dot-folders) the policy does not serve."""
    total = 0
    for _dirpath, dirnames, filenames in os.walk(v.root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        total += sum(1 for f in filenames if f.lower().endswith(".md") and not f.startswith("."))
    return max(total - served, 0)


def _index_health(v: Served) -> dict[str, Any]:
    try:
        index = _index()
    except ShardpyError as exc:
        return {"available": False, "error": exc.message}
    try:
        db = Path(index.index_path(v.root))
        st = db.stat()
    except OSError:
        return {"available": True, "built": False}
    except ShardpyError as exc:
        return {"available": False, "error": exc.message}
    age = max(0.0, _dt.datetime.now().timestamp() - st.st_mtime)
    # No path: an answer to a caller never carries an absolute path (the index lives in the user's cache).
    return {"available": True, "built": True, "age_seconds": round(age, 1)}


HANDLERS: dict[str, Any] = {
    "search": search,
    "expand": expand,
    "recall": recall,
    "remember": remember,
    "record_work": record_work,
    "health": health,
}
