"""Shared helpers for the vault's agent hook scripts (Python stdlib only).

The scripts in .claude/scripts/ are run by Claude Code, Codex CLI and Gemini
CLI hooks. Each agent sends its own JSON on stdin; everything an agent-neutral
script needs to know about those differences lives in hookio. Everything a
script needs to know about the vault — where it is, which modules are
installed, what the manifest says — lives in vault.
"""

SCRIPTS_VERSION = "1.0.0"
