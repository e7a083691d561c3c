"""Infrastructure vs user content (CONTRACT §5), from `vault-manifest.json`.

A shard says which of its paths are template machinery and which are the
user's notes. The engine never overwrites a changed file under a user
content root, and never deletes one.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

VAULT_MANIFEST = "vault-manifest.json"
ContentClass = Literal["infrastructure", "user_content"]
_GLOB_CHARS = set("*?[")


def _anchored(pattern: str) -> str:
    pattern = pattern.strip()
    return pattern if pattern.startswith(("/", "**")) else "/" + pattern


@dataclass
class ContentRules:
    declared: bool = False
    infrastructure: list[str] = field(default_factory=list)
    user_content_roots: list[str] = field(default_factory=list)
    scaffold: dict[str, str] = field(default_factory=dict)
    memory_root: str | None = None
    # File names (or vault paths) no surface may serve, matched case-insensitively.
    never_expose: list[str] = field(default_factory=list)
    # The folders the MCP server serves (`mcp_exposed_roots`; empty: the whole vault).
    exposed_roots: list[str] = field(default_factory=list)
    qmd_context: str = ""  # the vault's description for search tools
    # Note type -> the glob its notes live under (`frontmatter_required.<type>.path_match`).
    type_paths: dict[str, str] = field(default_factory=dict)
    # The `search` section (include / exclude / refresh_seconds), read by shardpy.index.
    search: dict[str, Any] = field(default_factory=dict)
    _user: Any = None
    _infra_exact: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        import pathspec

        self._user = pathspec.GitIgnoreSpec.from_lines(
            [_anchored(p) for p in self.user_content_roots if p.strip()]
        )
        self._infra_exact = frozenset(
            p.strip().rstrip("/") for p in self.infrastructure if not (_GLOB_CHARS & set(p))
        )

    def classify(self, path: str) -> ContentClass:
        """Explicit infrastructure paths win; then user-content roots; the rest
        (and everything, when the shard declares nothing) is infrastructure."""
        if not self.declared or path in self._infra_exact:
            return "infrastructure"
        return "user_content" if self._user.match_file(path) else "infrastructure"


def parse_content_rules(data: bytes | None) -> ContentRules:
    """Rules from the bytes of a shard's vault-manifest.json (None → undeclared)."""
    if data is None:
        return ContentRules()
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return ContentRules()
    if not isinstance(raw, dict):
        return ContentRules()

    def strings(key: str) -> list[str]:
        value = raw.get(key)
        return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []

    scaffold = raw.get("scaffold")
    memory_root = raw.get("memory_root")
    search = raw.get("search")
    context = raw.get("qmd_context")
    return ContentRules(
        declared="user_content_roots" in raw or "infrastructure" in raw,
        infrastructure=strings("infrastructure"),
        user_content_roots=strings("user_content_roots"),
        scaffold={str(k): str(v) for k, v in scaffold.items()} if isinstance(scaffold, dict) else {},
        memory_root=memory_root if isinstance(memory_root, str) and memory_root else None,
        never_expose=strings("mcp_never_expose"),
        exposed_roots=strings("mcp_exposed_roots"),
        qmd_context=context if isinstance(context, str) else "",
        type_paths=_type_paths(raw.get("frontmatter_required")),
        search=dict(search) if isinstance(search, dict) else {},
    )


def _type_paths(required: Any) -> dict[str, str]:
    """The folder convention of each note type: `{"incident": {"path_match": "work/incidents/**"}}`."""
    if not isinstance(required, dict):
        return {}
    out: dict[str, str] = {}
    for name, spec in required.items():
        match = spec.get("path_match") if isinstance(spec, dict) else None
        if isinstance(match, str) and match.strip():
            out[str(name)] = match.strip()
    return out


def vault_content_rules(vault: Path) -> ContentRules:
    """The rules of the vault-manifest.json at a vault's root (undeclared when absent or unreadable)."""
    try:
        data = (vault / VAULT_MANIFEST).read_bytes()
    except OSError:
        data = None
    return parse_content_rules(data)
