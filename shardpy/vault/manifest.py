"""The vault manifest (`vault-manifest.json`): its one reader, and infrastructure vs user content
(CONTRACT §5).

It lives in the vault layer, not in ``shard/``, so the runtime readers (``index/``, ``serve/``) import
nothing from ``shard/`` (issue 25; tests/test_runtime_layers.py).

A shard says which of its paths are template machinery and which are the
user's notes. The engine never overwrites a changed file under a user
content root, and never deletes one.

The manifest arrives with a shard or a ``git pull``: it is untrusted input.
Every path it names for the vault's own folders (PATH_KEYS) is checked when it
is read, here, once for every surface: vault-relative, no ``..``, no hidden
segment (``.shardmind``, ``.git/hooks``), no backslash or control character,
and, read from a vault, no link on the way that leads out of the vault or into
a hidden folder. One bad path refuses the manifest as a whole
(``VAULT_MANIFEST_PATH``, naming the key): a server that went on serving the
other roots wrote into ``brain/`` from a manifest that also declared
``../outside`` (issue 24, item 8; tests/security/test_serve_writes.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from shardpy.controls import has_control
from shardpy.errors import ShardpyError
from shardpy.fsutil import open_regular
from shardpy.record import Record, field

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any, Literal

    ContentClass = Literal["infrastructure", "user_content"]

VAULT_MANIFEST = "vault-manifest.json"
_GLOB_CHARS = set("*?[")
MANIFEST_BYTES = 4 * 1024 * 1024  # a manifest is a few KB; more is not a manifest
# The keys naming folders (or files) of the vault that shardpy reads, serves or writes into.
PATH_KEYS = ("user_content_roots", "mcp_exposed_roots", "memory_root", "mcp_inbox")


def _anchored(pattern: str) -> str:
    pattern = pattern.strip()
    return pattern if pattern.startswith(("/", "**")) else "/" + pattern


class ContentRules(Record):
    """The manifest's rules for what is the shard's and what is the user's."""

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
        self._infra_exact = frozenset(
            p.strip().rstrip("/") for p in self.infrastructure if not (_GLOB_CHARS & set(p))
        )

    def classify(self, path: str) -> ContentClass:
        """Explicit infrastructure paths win; then user-content roots; the rest
        (and everything, when the shard declares nothing) is infrastructure."""
        if not self.declared or path in self._infra_exact:
            return "infrastructure"
        if self._user is None:
            # Compiled when first asked: a one-shot search reads the manifest and never
            # classifies, and pathspec's import was a tenth of its process (issue 29).
            import pathspec

            self._user = pathspec.GitIgnoreSpec.from_lines(
                [_anchored(p) for p in self.user_content_roots if p.strip()]
            )
        return "user_content" if self._user.match_file(path) else "infrastructure"


def parse_content_rules(data: bytes | None) -> ContentRules:
    """Rules from the bytes of a shard's vault-manifest.json (None → undeclared)."""
    raw = _json(data)
    if not isinstance(raw, dict):
        return ContentRules()

    def strings(key: str) -> list[str]:
        value = raw.get(key)
        return [str(v) for v in value if isinstance(v, str)] if isinstance(value, list) else []

    for key, value in _declared_paths(raw):
        _check_path(key, value)
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
    """The rules of the vault-manifest.json at a vault's root (undeclared when absent or unreadable).

    Raises ``VAULT_MANIFEST_PATH`` when a declared path is unsafe, on paper or on this disk."""
    data = read_bounded(vault / VAULT_MANIFEST, MANIFEST_BYTES)
    rules = parse_content_rules(data)
    for key, value in _declared_paths(_json(data)):
        _check_on_disk(vault, key, value)
    return rules


def read_bounded(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes, else None (absent, unreadable, a pipe
    or a device, or larger): a pulled link to /dev/zero must not hang whoever reads the vault's own
    configuration (tests/security/test_serve_writes.py)."""
    try:
        fd = open_regular(path, follow=True)
    except OSError:
        return None
    try:
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            size += len(chunk)
        return None
    except OSError:
        return None
    finally:
        os.close(fd)


def _json(data: bytes | None) -> Any:
    """The manifest's JSON value (None when absent or not JSON: then it declares nothing)."""
    if data is None:
        return None
    try:
        return json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return None


def _declared_paths(raw: Any) -> list[tuple[str, str]]:
    """(key, path) for every non-empty path the manifest names under PATH_KEYS."""
    out: list[tuple[str, str]] = []
    for key in PATH_KEYS:
        value = raw.get(key) if isinstance(raw, dict) else None
        values = value if isinstance(value, list) else [value]
        out += [(key, v) for v in values if isinstance(v, str) and v.strip()]
    return out


def _refused(key: str, value: str, why: str) -> ShardpyError:
    shown = value if len(value) <= 100 else value[:100] + "…"
    return ShardpyError(
        "VAULT_MANIFEST_PATH",
        f"{VAULT_MANIFEST}: {key} names {shown!r}, {why}; the manifest is refused as a whole",
        f"Fix {key}: a folder inside the vault, written relative to its root, outside hidden folders.",
        path=VAULT_MANIFEST,
    )


def _check_path(key: str, value: str) -> None:
    """The path on paper: relative, no '..', no hidden segment, no backslash or control character."""
    text = value.strip()
    if text.startswith(("/", "~")) or (len(text) > 1 and text[1] == ":"):
        raise _refused(key, value, "an absolute path")
    if "\\" in text or has_control(text):
        raise _refused(key, value, "which holds a backslash or a control character")
    parts = text.rstrip("/").split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise _refused(key, value, "which is not a plain path inside the vault ('..', '.' or '//')")
    if any(p.startswith(".") for p in parts):
        raise _refused(key, value, "inside a hidden folder (.shardmind, .git, ...)")


def _check_on_disk(vault: Path, key: str, value: str) -> None:
    """The path on this disk: no link on the way leads out of the vault or into a hidden folder.
    Only the part before a glob character is a folder to resolve (``perf/*.md`` → ``perf``)."""
    fixed: list[str] = []
    for part in value.strip().strip("/").split("/"):
        if _GLOB_CHARS & set(part):
            break
        fixed.append(part)
    if not fixed:
        return
    real_vault = os.path.realpath(vault)
    real = os.path.realpath(os.path.join(real_vault, *fixed))
    rel = os.path.relpath(real, real_vault)
    if rel == ".." or rel.startswith(".." + os.sep) or any(p.startswith(".") for p in rel.split(os.sep)):
        raise _refused(
            key, value, "reached through a link that leads out of the vault or into a hidden folder"
        )
