"""The MCP wiring: the SDK's low-level ``Server`` over stdio, the identity gate, the audit line per call.

Imported only by ``shardpy serve`` (the SDK costs most of the start-up: the smallest low-level
SDK server needs as long to answer ``initialize``; bench/serve_bench.py prints both). The tool
modules, their argument models and the vault's exposure state load on the first request.

Identity (docs/SERVE.md): on a handshake-era connection (2025-06-18,
2025-11-25, ...) whose client declared ``roots``, the server asks
``roots/list`` once the client says ``notifications/initialized`` and every
caller-dependent request waits for the answer, at most ``ROOTS_WAIT``
seconds (then it is served as an anonymous caller, general memories only).
``notifications/roots/list_changed`` closes the gate and asks again. A
2026-07-28 connection (no server-to-client requests), or a client without
roots, is identified by the launch context: ``--project NAME`` or the
server's working folder.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from shardpy import __version__
from shardpy.errors import ShardpyError
from shardpy.serve import prompts
from shardpy.serve.audit import AuditLog
from shardpy.serve.exposure import URI_PREFIX, Manifest, uri_path
from shardpy.serve.identity import ANONYMOUS, Caller, caller_from_roots, launch_caller
from shardpy.serve.qmd import Launcher
from shardpy.serve.redact import unplaced

if TYPE_CHECKING:
    from shardpy.serve.toolkit import Args, Served

ROOTS_WAIT = 2.0
# Requests with an audit line, and whether this one's handler wrote it (see Surface.audit_refused).
_AUDITED_METHODS = frozenset({"tools/call", "resources/list", "resources/read"})
_AUDITED: ContextVar[bool] = ContextVar("shardpy_serve_audited", default=True)
PAGE = 500  # resources per resources/list page

Ctx = ServerRequestContext[Any, Any]


@dataclass
class Identity:
    """The caller of this connection, behind a gate that is closed while a roots answer is awaited."""

    vault: Path
    launch: Caller
    caller: Caller
    ready: anyio.Event = field(default_factory=anyio.Event)
    asked: int = 0  # roots/list requests sent so far

    async def resolve(self, ctx: Ctx) -> None:
        """Ask the client for its roots (after initialized, and again on list_changed)."""
        caps = ctx.session.client_capabilities
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or caps is None or caps.roots is None:
            self.caller = self.launch
            self.ready.set()
            return
        if self.ready.is_set():
            self.ready = anyio.Event()  # a request arriving now waits for the new answer
        gate = self.ready
        self.asked += 1
        mine = self.asked  # a slower answer to an earlier ask must not overwrite a newer one
        try:
            with anyio.fail_after(ROOTS_WAIT * 5), warnings.catch_warnings():
                # Roots are deprecated from 2026-07-28; only the handshake era reaches here.
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                result = await ctx.session.list_roots()
            caller = caller_from_roots([str(r.uri) for r in result.roots], self.vault)
        except Exception:  # no answer or an error answer: the safest reading of "unknown caller"
            caller = ANONYMOUS
        if mine == self.asked:
            self.caller = caller
            gate.set()

    async def current(self, ctx: Ctx) -> Caller:
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return self.launch
        caps = ctx.session.client_capabilities
        if caps is None or caps.roots is None:
            return self.launch
        with anyio.move_on_after(ROOTS_WAIT):
            await self.ready.wait()
        if not self.ready.is_set():
            return Caller(None, (), "timeout", None, "roots")
        return self.caller


def _schema(model: type[Args]) -> dict[str, Any]:
    schema = model.model_json_schema()
    schema.pop("title", None)
    schema["additionalProperties"] = False
    return schema


def _tool_list() -> list[types.Tool]:
    from shardpy.serve import graphtools, tools

    return graphtools.tool_list(_schema) + [
        types.Tool(
            name=name,
            description=description,
            input_schema=_schema(model),
            annotations=types.ToolAnnotations(
                read_only_hint=name in tools.READ_ONLY, destructive_hint=False, open_world_hint=False
            ),
        )
        for name, (model, description) in tools.TOOLS.items()
    ]


def _error(exc: ShardpyError, vault: Path | None = None) -> MCPError:
    """The JSON-RPC error of a typed failure; the vault's own location is never in it (issue 24, item 16:
    the caller is another program, and where the vault lives on this machine is none of its business)."""
    data: dict[str, Any] = {"code": exc.code, "hint": unplaced(exc.hint, vault)}
    if exc.path:
        data["path"] = unplaced(exc.path, vault)
    message = f"[{exc.code}] {unplaced(exc.message, vault)}"
    return MCPError(code=types.INVALID_PARAMS, message=message, data=data)


def _crash(exc: Exception) -> MCPError:
    """A bug or an OS failure: the SDK would answer ``str(exc)``, which names absolute paths."""
    if isinstance(exc, OSError):
        reason = exc.strerror or type(exc).__name__
        return MCPError(
            code=types.INTERNAL_ERROR,
            message=f"[SERVE_IO_ERROR] the vault could not be read or written: {reason}",
            data={"code": "SERVE_IO_ERROR", "hint": "Nothing was written. health shows the vault's state."},
        )
    return MCPError(
        code=types.INTERNAL_ERROR,
        message=f"[SERVE_INTERNAL] the server failed ({type(exc).__name__})",
        data={"code": "SERVE_INTERNAL", "hint": "This is a bug in shardpy; the audit log has the call."},
    )


def _not_found(uri: str) -> ShardpyError:
    return ShardpyError(
        "SERVE_NOTE_NOT_FOUND", f"no served note at {uri}", "List resources to see what is served."
    )


class Surface:
    """The handlers of one connection. The vault is opened, and the tool modules imported, on the
    first request that needs them, so the initialize answer waits for none of it."""

    def __init__(self, vault: Path, launch: Caller, qmd: Launcher | None = None) -> None:
        self.vault = vault
        self.identity = Identity(Path(os.path.realpath(vault)), launch, launch)
        self.qmd = qmd  # the QMD launcher this machine chose (``--qmd``), if any
        # The audit log needs no manifest: a call refused for a hostile manifest is still on record.
        self.audit = AuditLog.of(self.identity.vault)  # a plain folder gets no .shardmind/ (issue 26 item 15)
        self._served: Served | None = None
        self._manifest_seen: tuple[int, int, int] | None = None

    @property
    def served(self) -> Served:
        """The served vault, read again when its manifest changed (a `git pull` while the server
        runs can withhold a note: it was served until a restart; a helper's probe,
        tests/serve/test_manifest_reload.py)."""
        seen = self._manifest_stat()
        if self._served is not None and seen != self._manifest_seen:
            self._served.reload()
        if self._served is None:
            from shardpy.serve.toolkit import Served

            self._served = Served.open(self.vault, audit=self.audit, qmd=self.qmd)
        self._manifest_seen = seen
        return self._served

    def _manifest_stat(self) -> tuple[int, int, int] | None:
        from shardpy.vault.manifest import VAULT_MANIFEST

        try:
            st = os.stat(os.path.join(self.identity.vault, VAULT_MANIFEST))
        except OSError:
            return None
        return st.st_ino, st.st_size, st.st_mtime_ns

    async def guarded(
        self, event: str, ctx: Ctx, fields: dict[str, Any], work: Callable[[Caller], Awaitable[Any]]
    ) -> Any:
        """Run ``work`` for the caller of this connection, with its audit line whatever the outcome."""
        _AUDITED.set(True)
        caller = await self.identity.current(ctx)
        audit = self.audit
        try:
            result = await work(caller)
        except ShardpyError as exc:
            audit.record(event, caller.to_json(), **fields, status="error", error=exc.code)
            raise _error(exc, self.identity.vault) from None
        except Exception as exc:  # a bug: on the record, answered without its text (it may hold paths)
            audit.record(event, caller.to_json(), **fields, status="crash", error=type(exc).__name__)
            raise _crash(exc) from None
        audit.record(event, caller.to_json(), **fields, status="ok", **_summary(result))
        return result

    async def audit_refused(self, ctx: Ctx, call_next: Callable[[Ctx], Awaitable[Any]]) -> Any:
        """Middleware: a call the SDK refuses before a handler runs (``arguments`` that are not an object,
        no tool name) is one audit line too, like every other call (issue 24, item 9)."""
        if ctx.method not in _AUDITED_METHODS:
            return await call_next(ctx)
        _AUDITED.set(False)
        try:
            return await call_next(ctx)
        except Exception:
            if not _AUDITED.get():
                caller = await self.identity.current(ctx)
                params = ctx.params if isinstance(ctx.params, dict) else {}
                name = params.get("name")
                event = f"tool:{name}" if ctx.method == "tools/call" and isinstance(name, str) else ctx.method
                fields = {"args": params.get("arguments"), "uri": params.get("uri")}
                shown = {k: v for k, v in fields.items() if v is not None}
                self.audit.record(
                    event, caller.to_json(), **shown, status="error", error="SERVE_BAD_ARGUMENTS"
                )
            raise

    async def list_tools(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=_tool_list())

    async def call_tool(self, ctx: Ctx, params: types.CallToolRequestParams) -> types.CallToolResult:
        from shardpy.serve import graphtools, tools

        name = params.name
        if name in graphtools.TOOLS:  # the memory graph answers as the reference memory server does
            return await graphtools.call_tool(self, ctx, name, params.arguments)

        async def work(caller: Caller) -> dict[str, Any]:
            # Inside the guard: an unknown tool or bad arguments are one audit line too (issue 24, item 9).
            args = tools.parse_args(name, params.arguments)
            result: dict[str, Any] = tools.HANDLERS[name](self.served, caller, args)
            return result

        result = await self.guarded(f"tool:{name}", ctx, {"args": params.arguments or {}}, work)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False, indent=1))],
            structured_content=result,
            is_error=result.get("recorded") is False,
        )

    async def list_resources(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params else None
        start = int(cursor) if cursor and cursor.isdigit() else 0

        async def work(caller: Caller) -> types.ListResourcesResult:
            notes = self.served.exposure.notes()
            order = sorted(notes)
            page = order[start : start + PAGE]
            return types.ListResourcesResult(
                resources=[
                    types.Resource(
                        uri=URI_PREFIX + quote(p),
                        name=notes[p].title,
                        description=notes[p].description or None,
                        mime_type="text/markdown",
                    )
                    for p in page
                ],
                next_cursor=str(start + PAGE) if start + PAGE < len(order) else None,
            )

        result: types.ListResourcesResult = await self.guarded("resources/list", ctx, {}, work)
        return result

    async def read_resource(
        self, ctx: Ctx, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        uri = str(params.uri)

        async def work(caller: Caller) -> types.ReadResourceResult:
            path = uri_path(uri)  # one clean vault path (or none), and that path alone is asked
            text = self.served.exposure.read_text(path) if path else None
            if text is None:
                raise _not_found(uri)
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
            )

        result: types.ReadResourceResult = await self.guarded("resources/read", ctx, {"uri": uri}, work)
        return result

    async def list_prompts(
        self, ctx: Ctx, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=prompts.PROMPTS)

    async def get_prompt(self, ctx: Ctx, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        try:
            return prompts.render(params.name, params.arguments or {})
        except ShardpyError as exc:
            raise _error(exc) from None

    async def roots_may_have_changed(self, ctx: Ctx, params: types.NotificationParams) -> None:
        """After ``initialized`` and on ``roots/list_changed``: ask the client who it is."""
        await self.identity.resolve(ctx)


def _instructions(vault: Path) -> str:
    try:
        return prompts.instructions(Manifest.read(vault))
    except ShardpyError:  # a refused manifest: the server starts, and every call names the problem
        return prompts.RULES


def build(vault: Path, launch: Caller, qmd: Launcher | None = None) -> Server[Any]:
    surface = Surface(vault, launch, qmd)
    server: Server[Any] = Server(
        "shardpy",
        version=__version__,
        instructions=_instructions(surface.identity.vault),
        on_list_tools=surface.list_tools,
        on_call_tool=surface.call_tool,
        on_list_resources=surface.list_resources,
        on_read_resource=surface.read_resource,
        on_list_prompts=surface.list_prompts,
        on_get_prompt=surface.get_prompt,
    )
    # The default OpenTelemetry span is a no-op here; skip its per-call cost. What remains logs the
    # requests the SDK refuses before any handler runs.
    server.middleware = [surface.audit_refused]
    for method in ("notifications/initialized", "notifications/roots/list_changed"):
        server.add_notification_handler(method, types.NotificationParams, surface.roots_may_have_changed)
    return server


def _summary(result: Any) -> dict[str, Any]:
    """What the audit line keeps of a result: counts and paths, never bodies."""
    if isinstance(result, dict):
        out: dict[str, Any] = {}
        for key in ("path", "recorded", "withheld", "superseded"):
            if key in result:
                out[key] = result[key]
        for key in ("hits", "memories"):
            if isinstance(result.get(key), list):
                out["served"] = [item["path"] for item in result[key]]
        if "backlinks" in result:
            out["backlinks"] = len(result["backlinks"])
        return out
    if isinstance(result, types.ListResourcesResult):
        return {"count": len(result.resources)}
    return {}


async def _run(vault: Path, launch: Caller, qmd: Launcher | None) -> None:
    from shardpy.serve.stdio import stdin_lines

    server = build(vault, launch, qmd)
    with stdin_lines() as lines:  # read in the loop, so Ctrl-C ends the server (issue 26 item 13)
        stdin: Any = lines  # an async iterator of lines is all the SDK reads from it
        async with stdio_server(stdin=stdin) as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def serve(vault: Path, *, cwd: Path, project: str | None, qmd: Launcher | None = None) -> None:
    """Serve ``vault`` over stdio until the client closes the stream (``qmd``: the ``--qmd`` launcher)."""
    anyio.run(_run, vault, launch_caller(vault, cwd, project), qmd)
