"""Hooks as the writing commands run them: consent for remote shards, the
first-install slots (install and adopt), and saving the re-hashed state."""

from __future__ import annotations

from pathlib import Path

from shardpy.flows.source import Prepared
from shardpy.flows.vaultfiles import save_state
from shardpy.hooks.lifecycle import Slot, install_slots, rehash, run_slots
from shardpy.hooks.runner import HookResult
from shardpy.ui import UI
from shardpy.vault.state import State


def hooks_allowed(
    prep: Prepared, slots: list[Slot], *, no_hooks: bool, trust: bool, ui: UI, warnings: list[str]
) -> bool:
    """Local sources are trusted; a remote shard's hooks need --trust or a yes."""
    if no_hooks or not slots:
        return False
    if not prep.remote or trust:
        return True
    names = ", ".join(s.script for s in slots)
    if ui.interactive and ui.confirm(f"Run hook scripts from the remote shard ({names})?", default=False):
        return True
    warnings.append(f"Hooks from a remote source were not run ({names}); pass --trust to run them.")
    return False


def run_first_hooks(
    prep: Prepared,
    vault: Path,
    state: State,
    *,
    values_are_defaults: bool,
    no_hooks: bool,
    trust: bool,
    ui: UI,
    warnings: list[str],
    command: str = "install",
) -> list[HookResult]:
    """bootstrap, personalize (never on defaults), legacy post-install; then
    the state is saved with whatever the hooks changed re-hashed."""
    slots = install_slots(prep.shard.manifest, values_are_defaults=values_are_defaults)
    if not hooks_allowed(prep, slots, no_hooks=no_hooks, trust=trust, ui=ui, warnings=warnings):
        return []
    try:
        run = run_slots(
            slots,
            shard_root=prep.shard.root,
            vault_root=vault,
            state=state,
            values_are_defaults=values_are_defaults,
            timeout_ms=prep.shard.manifest.hooks.timeout_ms,
        )
    except KeyboardInterrupt:
        # The files are written and the state committed: keep them, record
        # what the stopped hook changed, and say so.
        rehash(vault, state)
        save_state(vault, state, command=command)
        raise KeyboardInterrupt(
            f"Interrupted while a hook ran; the hook was stopped. The {command} itself is "
            "complete (run `shardpy status`)."
        ) from None
    save_state(vault, state, command=command)
    return run.results
