"""A stand-in for ``qmd mcp``: a real MCP stdio server (the SDK's low-level ``Server``) with QMD's
``query`` and ``status`` tools and QMD's result shape (``structuredContent.results`` of
``{docid, file, title, score, context, snippet}``).

Driven by files beside it, so a test can change its behaviour between calls:
``FAKE_QMD_DIR/results.json`` (the results every query returns), ``FAKE_QMD_DIR/mode``
(``ok`` | ``crash`` | ``text-only`` | ``slow`` | ``error``); every call is appended to
``FAKE_QMD_DIR/calls.jsonl`` and every start to ``FAKE_QMD_DIR/starts``.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

HERE = Path(os.environ["FAKE_QMD_DIR"])


def mode() -> str:
    try:
        return (HERE / "mode").read_text().strip()
    except OSError:
        return "ok"


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    schema = {"type": "object", "properties": {}, "additionalProperties": True}
    return types.ListToolsResult(tools=[types.Tool(name=n, input_schema=schema) for n in ("query", "status")])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    with (HERE / "calls.jsonl").open("a") as log:
        log.write(json.dumps({"tool": params.name, "args": params.arguments}) + "\n")
    how = mode()
    if how == "crash":
        os._exit(3)
    if how == "slow":
        await anyio.sleep(30)
    if how == "error":
        return types.CallToolResult(
            content=[types.TextContent(type="text", text="index locked")], is_error=True
        )
    if params.name == "status":
        data: dict[str, Any] = {"totalDocuments": 7, "needsEmbedding": 0, "hasVectorIndex": True}
    else:
        data = {"results": json.loads((HERE / "results.json").read_text())}
    text = json.dumps(data)
    if how == "text-only":
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=data)


async def main() -> None:
    with (HERE / "starts").open("a") as starts:
        starts.write(f"{time.time()}\n")
    server: Server[Any] = Server("qmd", version="9.9.9", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    sys.exit(anyio.run(main))
