"""Writing the engine's own files: state, caches, values file (shared by
install, update and adopt)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shardpy import __version__
from shardpy.apply.followup import commit_writes
from shardpy.apply.transaction import Op
from shardpy.shard.loader import MANIFEST_PATH, SCHEMA_PATH, Shard
from shardpy.shard.values import render_values_file
from shardpy.vault import layout
from shardpy.vault.files import tree_files
from shardpy.vault.state import FileRecord, State, values_hash

if TYPE_CHECKING:
    from shardpy.flows.source import Prepared
    from shardpy.plan.update import FileAction


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def action_ops(vault: Path, actions: list[FileAction]) -> list[Op]:
    """The file operations a decided plan performs, with the pinned merge
    bases it keeps (a skipped conflict) or no longer needs."""
    ops: list[Op] = []
    for a in actions:
        out = a.outcome
        if out.write is not None:
            ops.append(Op.write(a.path, out.write))
        if out.delete:
            ops.append(Op.delete(a.path))
        if out.pin_base is not None:
            ops.append(Op.write(layout.pinned_base_path(a.path), out.pin_base))
        elif (vault / layout.pinned_base_path(a.path)).is_file():
            ops.append(Op.delete(layout.pinned_base_path(a.path)))
        if a.from_path and (vault / layout.pinned_base_path(a.from_path)).is_file():
            ops.append(Op.delete(layout.pinned_base_path(a.from_path)))
    return ops


def cache_ops(shard: Shard, sources: set[str], vault: Path | None = None) -> list[Op]:
    """Cached manifest, schema and the template sources of produced files.

    With ``vault`` given, files whose cached bytes are already right are
    not rewritten (an update touches only what changed).
    """
    schema = shard.root / SCHEMA_PATH
    wanted = {
        layout.CACHED_MANIFEST: (shard.root / MANIFEST_PATH).read_bytes(),
        layout.CACHED_SCHEMA: schema.read_bytes() if schema.is_file() else b"schema_version: 1\n",
    }
    wanted.update((layout.template_cache_path(s), shard.read(s)) for s in sorted(sources))
    return [
        Op.write(path, data)
        for path, data in wanted.items()
        if vault is None or not _same(vault / path, data)
    ]


def _same(path: Path, data: bytes) -> bool:
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def stale_cache_ops(vault_root: Path, keep: set[str]) -> list[Op]:
    """Delete cached template sources no longer producing anything."""
    base = vault_root / layout.TEMPLATES
    if not base.is_dir():
        return []
    return [Op.delete(f"{layout.TEMPLATES}/{rel}") for rel in tree_files(base) if rel not in keep]


def values_file_op(shard: Shard, values: dict[str, Any], existing: str | None) -> Op:
    text = render_values_file(shard.schema, values, identity=shard.manifest.identity, existing=existing)
    return Op.write(layout.VALUES_FILE, text.encode("utf-8"))


def new_state(
    prep: Prepared,
    values: dict[str, Any],
    modules: dict[str, str],
    install_date: str,
    files: dict[str, FileRecord],
) -> State:
    """The state of a vault a first install (or adopt) is about to write."""
    fetched = prep.fetched
    bootstrap = prep.shard.manifest.hooks.bootstrap
    return State(
        shard=prep.shard.manifest.identity,
        version=prep.version,
        source=prep.spec.display(),
        source_kind=prep.spec.kind,
        install_date=install_date,
        installed_at=install_date,
        updated_at=install_date,
        values_hash=values_hash(values),
        values=values,
        modules=modules,
        files=files,
        ref=fetched.resolved.ref,
        resolved_commit=fetched.resolved.commit,
        archive_sha256=prep.archive_sha256,
        hooks={"bootstrap_fingerprint": bootstrap.fingerprint}
        if bootstrap is not None and bootstrap.fingerprint
        else {},
        copier=copier_record(prep),
    )


def copier_record(prep: Prepared) -> dict[str, Any] | None:
    """A copier template's records kept in state (answers file, _src_path, _commit)."""
    return prep.state_record()


def state_op(state: State) -> Op:
    state.engine = f"shardpy {__version__}"
    return Op.write(layout.STATE, state.to_json().encode("utf-8"))


def save_state(vault_root: Path, state: State, *, command: str) -> None:
    """The state after the hooks re-hashed it, saved in a transaction of its own
    (``<command>-hooks``); nothing is written when the bytes did not change."""
    commit_writes(vault_root, f"{command}-hooks", [state_op(state)])
