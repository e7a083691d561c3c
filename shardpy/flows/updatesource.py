"""Which vault and which source an update works on.

Kept apart from ``flows/update.py`` (which imports the whole engine) so the
CLI can ask the same question before the engine is loaded, to start fetching
the source early (``sources/prefetch.py``): one function decides the spec for
both.
"""

from __future__ import annotations

from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.sources import SourceSpec, parse_source
from shardpy.vault import layout
from shardpy.vault.state import State


def find_vault(cwd: Path) -> Path:
    vault = layout.find_vault_root(cwd)
    if vault is None:
        raise ShardpyError(
            "VAULT_NOT_FOUND",
            f"{cwd} is not inside a shardpy vault",
            "Run this inside a vault made by `shardpy install` (or `shardpy adopt` an existing clone).",
        )
    return vault


def source_spec(state: State, vault: Path, *, release: str | None, include_prerelease: bool) -> SourceSpec:
    """The recorded source, re-addressed for this update."""
    try:
        spec = _bundled_spec() if state.source_kind == "bundled" else parse_source(state.source, cwd=vault)
    except ShardpyError as exc:
        if exc.code != "SOURCE_NOT_FOUND":
            raise
        raise ShardpyError(
            "UPDATE_SOURCE_GONE",
            f"The source this vault was installed from is gone: {state.source}",
            "Restore it, or point `source` in .shardmind/state.json at where the shard lives now.",
        ) from None
    if state.ref is not None:
        if release or include_prerelease:
            raise ShardpyError(
                "UPDATE_REF_FLAGS",
                f"This vault tracks #{state.ref}; --release and --include-prerelease do not apply",
                "Run `shardpy update` without them to pull the ref's newest commit.",
            )
        return spec.with_version(None, state.ref)
    if release:
        if spec.kind in ("local", "bundled", "tarball"):
            raise ShardpyError(
                "UPDATE_NO_RELEASES",
                f"--release needs a source with releases; this vault came from {_described(spec)}",
                "Update from the directory or archive as it is now: run `shardpy update` without --release.",
            )
        return spec.with_version(release, None)
    return spec.with_version(None, None)


def _bundled_spec() -> SourceSpec:
    from shardpy.flows.resolve import bundled_spec

    return bundled_spec()


def _described(spec: SourceSpec) -> str:
    """A source as a sentence names it (`the folder X`, not `local X`)."""
    if spec.kind == "bundled":
        return "the flagship shard bundled with shardpy"
    return f"the {'archive' if spec.kind == 'tarball' else 'folder'} {spec.display()}"
