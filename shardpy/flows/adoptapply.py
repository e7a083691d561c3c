"""What both adopt flows (a shard's, a copier project's) check and do last: a folder that is
already managed is refused, then the plan's operations run in the write session.

Its own module so that ``flows/copieradopt.py`` never imports ``flows/adopt.py`` (issue 27: no
cycle between the adopt flows; tests/test_spine.py).
"""

from __future__ import annotations

from pathlib import Path

from shardpy.apply.session import session
from shardpy.apply.transaction import Op
from shardpy.errors import ShardpyError
from shardpy.ui import UI
from shardpy.vault import layout


def refuse_managed(vault: Path) -> None:
    """Adopt starts only where no shardpy state (nor a stray values file) is."""
    if (vault / layout.STATE).exists():
        raise ShardpyError(
            "ADOPT_ALREADY_MANAGED",
            f"{vault} is already a shardpy vault",
            "Run `shardpy update` to upgrade it.",
        )
    if (vault / layout.VALUES_FILE).exists():
        raise ShardpyError(
            "ADOPT_STRAY_VALUES",
            f"{layout.VALUES_FILE} exists but there is no .shardmind/state.json",
            "This vault was managed before and lost its sidecar. Restore .shardmind/ from a backup "
            f"or version control, or move {layout.VALUES_FILE} away (pass it with --values) to adopt afresh.",
        )


def apply_adopt(vault: Path, ops: list[Op], ui: UI) -> None:
    """Run adopt's operations; checked again under the lock (another adopt may have won)."""
    with session(vault, "adopt") as s:
        if s.recovery is not None:
            # Another command died here after this adopt was planned (recover_first settled what
            # was there before): the plan may be stale, so start again rather than guess, as
            # install does (INSTALL_RETRY; tests/adopt/test_adopt_retry.py).
            raise ShardpyError(
                "ADOPT_RETRY",
                "An interrupted shardpy command in this vault was just rolled back",
                "Nothing was adopted; run the same adopt again.",
            )
        refuse_managed(vault)
        s.run(ops, label="adopt", progress=ui.progress("Adopting", len(ops)))
