"""``shardpy serve``: the vault as an MCP server (docs/SERVE.md).

Small pure modules (identity, exposure, memories, graph, audit, capture,
tools, prompts) and one that wires them to the MCP SDK (server). Only
``server`` and ``prompts`` import ``mcp``.
"""
