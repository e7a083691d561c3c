"""`.shardmind/state.json`: what the shard produced and how it was produced.

It is shared between machines (tracked in git), so it holds no fact about
one machine: ``updated_at`` is written by install and adopt only; an update
records its wall-clock time in the machine-local ``.shardmind/local.json``
instead (see :func:`local_updated_at`), so two machines that ran the same
update write identical bytes.

``rendered_hash`` is always the hash of what the *shard* rendered for a
file (never the user's bytes), so a user's edit stays visible as drift on
every later update. ``installed_hash`` records the bytes a lifecycle hook
left behind when a hook changed a file after rendering.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

from shardpy.errors import ShardpyError

STATE_SCHEMA_VERSION = 1
Ownership = Literal["managed", "modified", "volatile"]


@dataclass
class FileRecord:
    template: str
    rendered_hash: str
    ownership: Ownership = "managed"
    volatile: bool = False
    iterator_key: str | None = None
    module: str | None = None
    content_class: str = "infrastructure"
    installed_hash: str | None = None
    # A symbolic link (a copier template's): ``rendered_hash`` is the sha256 of its link text, the
    # text being its content; omitted from state.json when false (tests/hardening/test_copier_links.py).
    link: bool = False

    def holds(self, disk_hash: str | None) -> bool:
        """The one managed-hash rule: the file on disk is what shardpy wrote
        (the rendered bytes, or what a post-install hook left there)."""
        return disk_hash is not None and (
            disk_hash == self.rendered_hash
            or (self.installed_hash is not None and disk_hash == self.installed_hash)
        )

    def to_json(self) -> dict[str, Any]:
        # Every field is a str, a bool or None: read directly, not through asdict's deep copy
        # (a state write turns every record of the vault into JSON).
        out = {name: getattr(self, name) for name in _RECORD_FIELDS}
        return {
            k: v for k, v in out.items() if v is not None and not (k in ("volatile", "link") and v is False)
        }


_RECORD_FIELDS = tuple(f.name for f in fields(FileRecord))


@dataclass
class State:
    shard: str
    version: str
    source: str
    source_kind: str
    install_date: str
    installed_at: str
    updated_at: str
    values_hash: str
    values: dict[str, Any]
    modules: dict[str, str]
    files: dict[str, FileRecord]
    ref: str | None = None
    resolved_commit: str | None = None
    archive_sha256: str | None = None
    hooks: dict[str, str] = field(default_factory=dict)
    schema_version: int = STATE_SCHEMA_VERSION
    engine: str = ""
    # A copier template's own records: answers_file, _src_path, _commit (docs/COPIER.md).
    copier: dict[str, Any] | None = None

    @property
    def namespace(self) -> str:
        return self.shard.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.shard.split("/", 1)[-1]

    def included_modules(self) -> list[str]:
        return [m for m, v in self.modules.items() if v == "included"]

    def to_json(self) -> str:
        """Deterministic text: sorted keys at every level, two-space indent, one final newline.

        Two machines holding the same state write the same bytes, so git
        sees nothing to merge (docs/GIT.md).
        """
        data = {
            "schema_version": self.schema_version,
            "engine": self.engine,
            "shard": self.shard,
            "version": self.version,
            "source": self.source,
            "source_kind": self.source_kind,
            "ref": self.ref,
            "resolved_commit": self.resolved_commit,
            "archive_sha256": self.archive_sha256,
            "installed_at": self.installed_at,
            "updated_at": self.updated_at,
            "install_date": self.install_date,
            "values_hash": self.values_hash,
            "values": self.values,
            "modules": dict(sorted(self.modules.items())),
            "hooks": self.hooks,
            "files": {p: self.files[p].to_json() for p in sorted(self.files)},
        }
        if self.copier is not None:
            data["copier"] = self.copier
        return json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


def values_hash(values: dict[str, Any]) -> str:
    from shardpy.fsutil import sha256_bytes

    return sha256_bytes(json.dumps(values, sort_keys=True, ensure_ascii=False).encode())


_REQUIRED = ("shard", "version", "source", "install_date", "modules", "files")


def parse_state(text: str, *, display: str = ".shardmind/state.json") -> State:
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ShardpyError(
            "STATE_CORRUPT",
            f"{display} is not valid JSON (line {exc.lineno}: {exc.msg})",
            "Restore it from version control or a backup; or delete .shardmind/ and run `shardpy adopt`.",
            path=display,
            line=exc.lineno,
        ) from None
    if not isinstance(raw, dict) or any(k not in raw for k in _REQUIRED):
        missing = [k for k in _REQUIRED if not isinstance(raw, dict) or k not in raw]
        raise ShardpyError(
            "STATE_CORRUPT",
            f"{display} is missing {', '.join(missing)}",
            "Restore it from version control or a backup; or delete .shardmind/ and run `shardpy adopt`.",
            path=display,
        )
    version = raw.get("schema_version", 1)
    if not isinstance(version, int) or version > STATE_SCHEMA_VERSION:
        raise ShardpyError(
            "STATE_UNSUPPORTED",
            f"{display} was written by a newer shardpy (state schema {version})",
            "Upgrade shardpy: pip install -U shardpy.",
            path=display,
        )
    try:
        files = {str(p): FileRecord(**rec) for p, rec in dict(raw["files"]).items()}
        return State(
            shard=str(raw["shard"]),
            version=str(raw["version"]),
            source=str(raw["source"]),
            source_kind=str(raw.get("source_kind", "local")),
            install_date=str(raw["install_date"]),
            installed_at=str(raw.get("installed_at", raw["install_date"])),
            updated_at=str(raw.get("updated_at", raw.get("installed_at", raw["install_date"]))),
            values_hash=str(raw.get("values_hash", "")),
            values=dict(raw.get("values") or {}),
            modules={str(k): str(v) for k, v in dict(raw["modules"]).items()},
            files=files,
            ref=raw.get("ref"),
            resolved_commit=raw.get("resolved_commit"),
            archive_sha256=raw.get("archive_sha256"),
            hooks=dict(raw.get("hooks") or {}),
            schema_version=version,
            engine=str(raw.get("engine", "")),
            copier=dict(raw["copier"]) if isinstance(raw.get("copier"), dict) else None,
        )
    except (TypeError, ValueError) as exc:
        raise ShardpyError(
            "STATE_CORRUPT",
            f"{display} has an unexpected shape ({exc})",
            "Restore it from version control or a backup; or delete .shardmind/ and run `shardpy adopt`.",
            path=display,
        ) from None


def local_updated_at(vault_root: Path, state: State) -> str:
    """When this machine last updated the vault to ``state.version`` (local.json), else the state's."""
    from shardpy.vault.layout import LOCAL

    try:
        data = json.loads((vault_root / LOCAL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return state.updated_at
    if (
        isinstance(data, dict)
        and data.get("version") == state.version
        and isinstance(data.get("updated_at"), str)
    ):
        return str(data["updated_at"])
    return state.updated_at


def local_record(version: str, now: str) -> bytes:
    """The bytes of ``.shardmind/local.json`` after an update to ``version`` at ``now``."""
    return (json.dumps({"updated_at": now, "version": version}, indent=2, sort_keys=True) + "\n").encode()


def load_state(vault_root: Path) -> State:
    from shardpy.vault.layout import STATE

    try:
        text = (vault_root / STATE).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ShardpyError(
            "STATE_MISSING",
            f"No shardpy state in {vault_root}",
            "Run `shardpy install` to create a vault, or `shardpy adopt SOURCE` for an existing clone.",
        ) from None
    except UnicodeDecodeError:
        raise ShardpyError(
            "STATE_CORRUPT", "state.json is not UTF-8 text", "Restore it from a backup."
        ) from None
    return parse_state(text)
