"""The memory graph over MCP: the nine tools of ``@modelcontextprotocol/server-memory`` with its
names, input schemas and answers, plus ``key`` / ``valid_to`` / ``as_of`` / ``query_graph``
(docs/MEMORY.md).

The answers are the reference server's: the text content is its ``JSON.stringify(result, null,
2)`` and ``structuredContent`` its output schema's object; a failure is a tool result with
``isError: true`` and the failure's text (the code and hint in ``_meta``), as the reference
answers (tests/graph/test_oracle_replay.py compares both servers call by call). Every call is
one audit line and, when it writes, one transaction under the vault lock (``graph.commit``).
A caller sees only the entities its reach admits (the memory model, ``memories.visible``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from json.encoder import encode_basestring
from typing import TYPE_CHECKING, Annotated, Any, Literal

import mcp_types as types
from pydantic import Field

from shardpy.errors import ShardpyError
from shardpy.graph import ops
from shardpy.graph.commit import change
from shardpy.graph.facts import now_ms, parse_as_of
from shardpy.graph.note import Entity
from shardpy.graph.store import GraphStore, Snapshot
from shardpy.graph.traverse import DEPTH_MAX, query_graph
from shardpy.serve.identity import Caller
from shardpy.serve.memories import Memory, visible
from shardpy.serve.toolkit import Args, Served, check_text, memory_root_of

if TYPE_CHECKING:
    from shardpy.serve.server import Ctx, Surface

AsOf = Annotated[
    str | None,
    Field(
        None, max_length=64, description="Only facts valid at this day or instant (ISO 8601); default: now."
    ),
]


class EntityIn(Args):
    name: str = Field(description="The name of the entity")
    entityType: str = Field(description="The type of the entity")
    observations: list[str] = Field(description="An array of observation contents associated with the entity")


class RelationIn(Args):
    from_: str = Field(alias="from", description="The name of the entity where the relation starts")
    to: str = Field(description="The name of the entity where the relation ends")
    relationType: str = Field(description="The type of the relation")


class CreateEntitiesArgs(Args):
    entities: list[EntityIn]
    scope: Literal["general"] | None = Field(
        None, description="shardpy: 'general' makes the entities every caller's (default: this project's)."
    )


class CreateRelationsArgs(Args):
    relations: list[RelationIn]


class ObservationIn(Args):
    entityName: str = Field(description="The name of the entity to add the observations to")
    contents: list[str] = Field(description="An array of observation contents to add")
    key: str | None = Field(
        None, description="shardpy: a fact key; the new content supersedes the live fact with this key."
    )
    valid_to: str | None = Field(
        None, max_length=64, description="shardpy: with key and no contents, retire that fact as of this day."
    )


class AddObservationsArgs(Args):
    observations: list[ObservationIn]


class DeleteEntitiesArgs(Args):
    entityNames: list[str] = Field(description="An array of entity names to delete")


class DeletionIn(Args):
    entityName: str = Field(description="The name of the entity containing the observations")
    observations: list[str] = Field(description="An array of observations to delete")


class DeleteObservationsArgs(Args):
    deletions: list[DeletionIn]


class DeleteRelationsArgs(Args):
    relations: list[RelationIn] = Field(description="An array of relations to delete")


class ReadGraphArgs(Args):
    as_of: AsOf = None


class SearchNodesArgs(Args):
    query: str = Field(
        description="The search query to match against entity names, types, and observation content"
    )
    as_of: AsOf = None


class OpenNodesArgs(Args):
    names: list[str] = Field(description="An array of entity names to retrieve")
    as_of: AsOf = None


class QueryGraphArgs(Args):
    names: list[str] = Field(description="Entities to start from")
    depth: Annotated[int, Field(ge=0, le=DEPTH_MAX)] = 1
    relation_types: list[str] | None = Field(None, description="Walk only relations of these types")
    as_of: AsOf = None


_ENTITY = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The name of the entity"},
        "entityType": {"type": "string", "description": "The type of the entity"},
        "observations": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "entityType", "observations"],
    "additionalProperties": False,
}
_RELATION = {
    "type": "object",
    "properties": {k: {"type": "string"} for k in ("from", "to", "relationType")},
    "required": ["from", "to", "relationType"],
    "additionalProperties": False,
}
_GRAPH = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": _ENTITY},
        "relations": {"type": "array", "items": _RELATION},
    },
    "required": ["entities", "relations"],
    "additionalProperties": False,
}
_DONE = {
    "type": "object",
    "properties": {"success": {"type": "boolean"}, "message": {"type": "string"}},
    "required": ["success", "message"],
    "additionalProperties": False,
}


def _object(name: str, items: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": "array", "items": items}},
        "required": [name],
        "additionalProperties": False,
    }


_RESULTS = {
    "type": "object",
    "properties": {
        "entityName": {"type": "string"},
        "addedObservations": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["entityName", "addedObservations"],
    "additionalProperties": False,
}

# name → (arguments, description, output schema, read-only, destructive, idempotent)
TOOLS: dict[str, tuple[type[Args], str, dict[str, Any] | None, bool, bool, bool]] = {
    "create_entities": (
        CreateEntitiesArgs,
        "Create multiple new entities in the knowledge graph",
        _object("entities", _ENTITY),
        False,
        False,
        False,
    ),
    "create_relations": (
        CreateRelationsArgs,
        "Create multiple new relations between entities in the knowledge "
        "graph. Relations should be in active voice",
        _object("relations", _RELATION),
        False,
        False,
        False,
    ),
    "add_observations": (
        AddObservationsArgs,
        "Add new observations to existing entities in the knowledge graph. "
        "shardpy: a key supersedes the live fact with that key (kept as history); key + "
        "valid_to with no contents retires it",
        _object("results", _RESULTS),
        False,
        False,
        False,
    ),
    "delete_entities": (
        DeleteEntitiesArgs,
        "Delete multiple entities and their associated relations from the knowledge graph",
        _DONE,
        False,
        True,
        True,
    ),
    "delete_observations": (
        DeleteObservationsArgs,
        "Delete specific observations from entities in the knowledge graph",
        _DONE,
        False,
        True,
        True,
    ),
    "delete_relations": (
        DeleteRelationsArgs,
        "Delete multiple relations from the knowledge graph",
        _DONE,
        False,
        True,
        True,
    ),
    "read_graph": (
        ReadGraphArgs,
        "Read the entire knowledge graph (shardpy: as_of reads the facts valid then)",
        _GRAPH,
        True,
        False,
        True,
    ),
    "search_nodes": (
        SearchNodesArgs,
        "Search for nodes in the knowledge graph based on a query",
        _GRAPH,
        True,
        False,
        True,
    ),
    "open_nodes": (
        OpenNodesArgs,
        "Open specific nodes in the knowledge graph by their names",
        _GRAPH,
        True,
        False,
        True,
    ),
    "query_graph": (
        QueryGraphArgs,
        "shardpy: walk relations from named entities (both directions, depth <= 5), "
        "each entity with its distance and its facts' validity",
        None,
        True,
        False,
        True,
    ),
}


def tool_list(schema: Callable[[type[Args]], dict[str, Any]]) -> list[types.Tool]:
    return [
        types.Tool(
            name=name,
            description=description,
            input_schema=schema(model),
            output_schema=output,
            annotations=types.ToolAnnotations(
                read_only_hint=ro, destructive_hint=destructive, idempotent_hint=idem, open_world_hint=False
            ),
        )
        for name, (model, description, output, ro, destructive, idem) in TOOLS.items()
    ]


# -- the graph of one served vault -----------------------------------------------------------

_STORES: dict[tuple[str, str], GraphStore] = {}
_VIEWS: dict[tuple[str, Caller], ops.View] = {}


def store_of(v: Served) -> GraphStore:
    root = memory_root_of(v)
    key = (str(v.root), root)
    got = _STORES.get(key)
    if got is None:
        got = _STORES[key] = GraphStore(v.root, root, persist=True)
        got.watch()  # a server lives long: in-place edits are swept in the background (graph.store)
    return got


def sees(caller: Caller) -> ops.Visible:
    """The memory model's reach rule (``memories.visible``, its one owner) asked of an entity."""

    def check(e: Entity) -> bool:
        reach = Memory(e.path, e.name, "", e.scope, e.projects, e.platforms, "", "", "", "", "", (), ())
        return visible(reach, caller)

    return check


def view_of(v: Served, caller: Caller, snap: Snapshot | None = None) -> ops.View:
    """The caller's view of ``snap`` (default: the store's snapshot after a look at the folder)."""
    snap = snap or store_of(v).snapshot()
    key = (str(v.root), caller)
    view = _VIEWS.get(key)
    if view is None or view.snap is not snap:
        view = _VIEWS[key] = ops.View(snap, sees(caller)).carried(view)
    return view


def health(v: Served, caller: Caller) -> dict[str, Any]:
    """Entity notes that no longer parse are reported (and left untouched): their paths (which
    carry entity names) to the vault's own session only, a count to everyone."""
    if v.manifest.memory_root is None:
        return {"entities": 0, "invalid": [], "invalid_count": 0}
    view = view_of(v, caller)
    invalid = view.snap.invalid
    named = [{"path": i.path, "problem": i.problem} for i in invalid] if caller.is_vault else []
    return {"entities": len(view.entities()), "invalid": named[:50], "invalid_count": len(invalid)}


def _reach(caller: Caller, scope: str | None) -> ops.Reach:
    if scope == "general" or caller.project is None:
        return ops.Reach("general")
    return ops.Reach("project", (caller.project,))


def _texts(value: Any, where: str = "arguments") -> None:
    """Every string argument checked once (UTF-8, no surrogate, no NUL: SERVE_BAD_TEXT)."""
    if isinstance(value, str):
        check_text(where, value, 1 << 40)
    elif isinstance(value, dict):
        for k, x in value.items():
            _texts(x, k)
    elif isinstance(value, list):
        for x in value:
            _texts(x, where)


def _as_of(raw: str | None) -> int | None:
    return None if raw is None else parse_as_of(raw)


# -- handlers: (served, caller, args) → (text, structured) ----------------------------------------


def _write(v: Served, caller: Caller, label: str, fn: Callable[[ops.Work], Any]) -> Any:
    return change(store_of(v), label, sees(caller), fn)


def create_entities(v: Served, caller: Caller, a: CreateEntitiesArgs) -> tuple[Any, dict[str, Any]]:
    items = [e.model_dump(by_alias=True) for e in a.entities]
    reach, now = _reach(caller, a.scope), now_ms()
    created = _write(v, caller, "create-entities", lambda w: ops.create_entities(w, items, reach, now))
    return created, {"entities": created}


def create_relations(v: Served, caller: Caller, a: CreateRelationsArgs) -> tuple[Any, dict[str, Any]]:
    items = [r.model_dump(by_alias=True) for r in a.relations]
    reach = _reach(caller, None)
    created = _write(v, caller, "create-relations", lambda w: ops.create_relations(w, items, reach))
    return created, {"relations": created}


def add_observations(v: Served, caller: Caller, a: AddObservationsArgs) -> tuple[Any, dict[str, Any]]:
    items = [o.model_dump(by_alias=True) for o in a.observations]
    for item in items:
        item["valid_to"] = _as_of(item["valid_to"]) if item["valid_to"] is not None else None
    now = now_ms()
    results = _write(v, caller, "add-observations", lambda w: ops.add_observations(w, items, now))
    return results, {"results": results}


def _done(message: str) -> tuple[Any, dict[str, Any]]:
    return message, {"success": True, "message": message}


def delete_entities(v: Served, caller: Caller, a: DeleteEntitiesArgs) -> tuple[Any, dict[str, Any]]:
    names = list(a.entityNames)
    _write(v, caller, "delete-entities", lambda w: ops.delete_entities(w, names))
    return _done("Entities deleted successfully")


def delete_observations(v: Served, caller: Caller, a: DeleteObservationsArgs) -> tuple[Any, dict[str, Any]]:
    items = [d.model_dump(by_alias=True) for d in a.deletions]
    _write(v, caller, "delete-observations", lambda w: ops.delete_observations(w, items))
    return _done("Observations deleted successfully")


def delete_relations(v: Served, caller: Caller, a: DeleteRelationsArgs) -> tuple[Any, dict[str, Any]]:
    items = [r.model_dump(by_alias=True) for r in a.relations]
    _write(v, caller, "delete-relations", lambda w: ops.delete_relations(w, items))
    return _done("Relations deleted successfully")


def _fresh_view(v: Served, caller: Caller, names: list[str]) -> ops.View:
    """The caller's view after the notes of ``names`` were stat-ed (an in-place edit of a note a
    call answers from is read at once: tests/graph/test_freshness.py)."""
    return view_of(v, caller, store_of(v).fresh(names))


def read_graph(v: Served, caller: Caller, a: ReadGraphArgs) -> tuple[Any, dict[str, Any]]:
    as_of = _as_of(a.as_of)
    view = view_of(v, caller)
    kept: tuple[str, dict[str, Any]] | None = view.answers.get("read_graph") if as_of is None else None
    if kept is not None:
        return kept  # nothing changed since: the same answer (10 MB at 20k)
    out = ops.read_graph(view, as_of)
    answer = graph_text(out), out
    if as_of is None:
        view.answers["read_graph"] = answer
    return answer


def search_nodes(v: Served, caller: Caller, a: SearchNodesArgs) -> tuple[Any, dict[str, Any]]:
    as_of = _as_of(a.as_of)
    # The hits are not stat-ed: a search may hold hundreds, each an lstat (a third of the call on a
    # loaded machine); a note edited in place reaches search_nodes by the background sweep.
    view = view_of(v, caller)
    found = ops.search_hits(view, a.query, as_of)
    out = ops.graph_json(found, view.touching({e.name for e in found}), as_of)
    return graph_text(out), out


def open_nodes(v: Served, caller: Caller, a: OpenNodesArgs) -> tuple[Any, dict[str, Any]]:
    ops.check_count("names", len(a.names))
    as_of = _as_of(a.as_of)
    out = ops.open_nodes(_fresh_view(v, caller, list(a.names)), list(a.names), as_of)
    return graph_text(out), out


def query(v: Served, caller: Caller, a: QueryGraphArgs) -> tuple[Any, dict[str, Any]]:
    ops.check_count("names", len(a.names))
    as_of = _as_of(a.as_of)
    view = _fresh_view(v, caller, list(a.names))
    out = query_graph(view, list(a.names), a.depth, a.relation_types, as_of)
    again = _fresh_view(v, caller, [e["name"] for e in out["entities"]])
    if again is not view:
        out = query_graph(again, list(a.names), a.depth, a.relation_types, as_of)
    return out, out


HANDLERS: dict[str, Callable[[Served, Caller, Any], tuple[Any, dict[str, Any]]]] = {
    "create_entities": create_entities,
    "create_relations": create_relations,
    "add_observations": add_observations,
    "delete_entities": delete_entities,
    "delete_observations": delete_observations,
    "delete_relations": delete_relations,
    "read_graph": read_graph,
    "search_nodes": search_nodes,
    "open_nodes": open_nodes,
    "query_graph": query,
}


def parse(name: str, raw: dict[str, Any] | None) -> Args:
    from pydantic import ValidationError

    model = TOOLS[name][0]
    try:
        args = model.model_validate(raw or {})
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:8]
        )
        raise ShardpyError(
            "SERVE_BAD_ARGUMENTS", f"{name}: {problems}", f"See the {name} tool's input schema (tools/list)."
        ) from None
    _texts(raw or {})
    return args


async def call_tool(
    surface: Surface, ctx: Ctx, name: str, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    """One graph tool call: audited by the surface's guard, answered as the reference answers."""
    from mcp.shared.exceptions import MCPError

    async def work(caller: Caller) -> tuple[Any, dict[str, Any]]:
        return HANDLERS[name](surface.served, caller, parse(name, arguments))

    try:
        text, structured = await surface.guarded(f"tool:{name}", ctx, {"args": arguments or {}}, work)
    except MCPError as exc:
        return _failure(exc)
    body = text if isinstance(text, str) else json.dumps(text, ensure_ascii=False, indent=2)
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=body)], structured_content=structured, is_error=False
    )


def graph_text(graph: dict[str, Any]) -> str:
    """``json.dumps(graph, ensure_ascii=False, indent=2)`` for a graph answer (entities with name,
    entityType, observations; relations with from, to, relationType), each string by json's C
    encoder: json indents in Python, a tenth of a 20,000-entity answer's time (issue 28,
    "Speed"; tests/graph/test_freshness.py checks it equals json.dumps)."""
    q = encode_basestring
    ents = [
        f'    {{\n      "name": {q(e["name"])},\n      "entityType": {q(e["entityType"])},\n'
        f'      "observations": {_strings(e["observations"])}\n    }}'
        for e in graph["entities"]
    ]
    rels = [
        f'    {{\n      "from": {q(r["from"])},\n      "to": {q(r["to"])},\n'
        f'      "relationType": {q(r["relationType"])}\n    }}'
        for r in graph["relations"]
    ]
    return f'{{\n  "entities": {_items(ents)},\n  "relations": {_items(rels)}\n}}'


def _strings(values: list[str]) -> str:
    if not values:
        return "[]"
    inner = ",\n        ".join(encode_basestring(x) for x in values)
    return f"[\n        {inner}\n      ]"


def _items(items: list[str]) -> str:
    return "[\n" + ",\n".join(items) + "\n  ]" if items else "[]"


def _failure(exc: Any) -> types.CallToolResult:
    data = exc.error.data if isinstance(exc.error.data, dict) else {}
    code = str(data.get("code", ""))
    message = exc.error.message
    if code == "GRAPH_ENTITY_NOT_FOUND":
        message = message.removeprefix(f"[{code}] ")  # the reference server's words, exactly
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=message)],
        is_error=True,
        meta={"shardpy/error": data} if data else None,
    )
