"""Which hooks run when, their context, consent, and the re-hash that
follows every hook (CONTRACT §6 invariants 2 and 3, §8)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.fsutil import safe_target, sha256_file
from shardpy.hooks.runner import HookResult, run_hook
from shardpy.shard.manifest import Manifest
from shardpy.vault.state import State


@dataclass(frozen=True)
class Slot:
    name: str
    script: str
    fingerprint: str | None = None


def install_slots(manifest: Manifest, *, values_are_defaults: bool) -> list[Slot]:
    """bootstrap, then personalize (never on all-defaults: Invariant 2,
    enforced here), then the legacy post-install."""
    hooks = manifest.hooks
    slots: list[Slot] = []
    if hooks.bootstrap is not None:
        slots.append(Slot("bootstrap", hooks.bootstrap.script, hooks.bootstrap.fingerprint))
    if hooks.personalize is not None and not values_are_defaults:
        slots.append(Slot("personalize", hooks.personalize))
    if hooks.post_install is not None:
        slots.append(Slot("post-install", hooks.post_install))
    return slots


def update_slots(manifest: Manifest, *, changed: bool, recorded_fingerprint: str | None) -> list[Slot]:
    hooks = manifest.hooks
    slots: list[Slot] = []
    if changed and hooks.post_update is not None:
        slots.append(Slot("post-update", hooks.post_update))
    bootstrap = hooks.bootstrap
    if bootstrap is not None and bootstrap.fingerprint and bootstrap.fingerprint != recorded_fingerprint:
        slots.append(Slot("bootstrap", bootstrap.script, bootstrap.fingerprint))
    return slots


def stale_personalisation(manifest: Manifest, changed: Iterable[str]) -> str | None:
    """Update never runs an install-time hook again (it would rewrite notes
    the user has since edited, which post-update may not do: Invariant 3).
    So when values changed and the shard writes values into notes through
    `personalize` or a legacy `post-install` hook, the notes that hook wrote
    keep the old values: say so instead of a silent "unchanged" (docs/UPDATE.md,
    tests/hardening/test_repersonalise.py)."""
    keys = sorted(changed)
    hooks = manifest.hooks
    slots = [
        name
        for name, script in (("personalize", hooks.personalize), ("post-install", hooks.post_install))
        if script
    ]
    if not keys or not slots:
        return None
    return (
        f"values changed ({', '.join(keys)}), but this shard writes values into notes through its "
        f"{' and '.join(slots)} hook, which runs only at install: the notes it wrote keep the old "
        "values (edit them by hand; files rendered from templates were re-rendered)"
    )


def context(
    slot: Slot,
    *,
    vault_root: Path,
    state: State,
    values_are_defaults: bool,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    ctx: dict[str, Any] = {
        "slot": slot.name,
        "vault_root": str(vault_root),
        "values": state.values,
        "modules": dict(state.modules),
        "shard": {"namespace": state.namespace, "name": state.name, "version": state.version},
        "values_are_defaults": values_are_defaults,
    }
    if slot.fingerprint is not None:
        ctx["fingerprint"] = slot.fingerprint
    ctx.update(extra or {})
    return ctx


def produced_snapshot(vault_root: Path, state: State, skip: set[str]) -> dict[str, bytes]:
    """The bytes, before a post-update hook, of every file the shard produced
    that the vault holds as a regular file — unedited (managed) or edited by
    the user (modified): Invariant 3 exists for the user's edits
    (tests/hardening/test_invariant3_edits.py). ``skip`` is what this update
    added (the hook may change those); volatile files change by themselves.
    One read per file, nothing hashed: on the flagship vault (101 files,
    150 KB) 8 ms, against 11 ms for the managed-only snapshot it replaces,
    which hashed every file and then read the managed ones again."""
    out: dict[str, bytes] = {}
    for path, rec in state.files.items():
        if path in skip or rec.volatile:
            continue
        data = _regular_bytes(vault_root, path)
        if data is not None:
            out[path] = data
    return out


def _regular_bytes(vault_root: Path, path: str) -> bytes | None:
    """A regular file's bytes, never read through a link (None otherwise)."""
    try:
        target = safe_target(vault_root, path)
        if target.is_symlink() or not target.is_file():
            return None
        return target.read_bytes()
    except (OSError, ShardpyError):
        return None


def enforce_additive(vault_root: Path, before: dict[str, bytes]) -> tuple[list[str], list[str]]:
    """Invariant 3: put back, through the one writer (one transaction,
    ``hook-guard``), every file of ``before`` a post-update hook changed or
    deleted. Returns the paths restored, and those the hook turned into a
    symbolic link (or put one on their way): shardpy never writes through a
    link, so those are reported, not restored."""
    from shardpy.apply.followup import restore_files

    changed = {path: data for path, data in before.items() if _regular_bytes(vault_root, path) != data}
    linked = sorted(path for path in changed if _through_link(vault_root, path))
    restorable = {path: data for path, data in changed.items() if path not in linked}
    return restore_files(vault_root, "hook-guard", restorable), linked


def _through_link(vault_root: Path, path: str) -> bool:
    try:
        return safe_target(vault_root, path).is_symlink()
    except ShardpyError:  # a link on the way
        return True


def rehash(vault_root: Path, state: State) -> bool:
    """Record bytes a hook left in managed files; True when state changed."""
    changed = False
    for path, rec in state.files.items():
        if rec.volatile:
            continue
        disk = sha256_file(vault_root / path)
        if disk is None or rec.holds(disk):
            continue
        if rec.ownership == "managed":
            rec.installed_hash = disk
            changed = True
    return changed


@dataclass
class HookRun:
    results: list[HookResult]
    restored: list[str]
    linked: list[str] = field(default_factory=list)

    def guard_warnings(self) -> list[str]:
        """What the Invariant 3 guard did, one line per file."""
        restored = [
            f"post-update hook changed {path}, which this update did not add: restored (Invariant 3)"
            for path in self.restored
        ]
        linked = [
            f"post-update hook replaced {path} with a symbolic link: not restored (shardpy never "
            "writes through a link); remove the link, then run `shardpy update --restore-missing`"
            for path in self.linked
        ]
        return restored + linked


def run_slots(
    slots: list[Slot],
    *,
    shard_root: Path,
    vault_root: Path,
    state: State,
    values_are_defaults: bool,
    timeout_ms: int,
    extra: Mapping[str, Any] | None = None,
    additive_new_files: set[str] | None = None,
) -> HookRun:
    """Run each slot in order; with ``additive_new_files`` set, the
    post-update invariant is enforced around that slot."""
    results: list[HookResult] = []
    restored: list[str] = []
    linked: list[str] = []
    for slot in slots:
        guard = additive_new_files is not None and slot.name == "post-update"
        before = produced_snapshot(vault_root, state, additive_new_files or set()) if guard else {}
        ctx = context(
            slot, vault_root=vault_root, state=state, values_are_defaults=values_are_defaults, extra=extra
        )
        results.append(
            run_hook(slot.name, shard_root / slot.script, slot.script, ctx, vault_root, timeout_ms)
        )
        if guard:
            done, refused = enforce_additive(vault_root, before)
            restored.extend(done)
            linked.extend(refused)
        rehash(vault_root, state)
    return HookRun(results, restored, linked)
