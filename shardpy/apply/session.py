"""The one way a command writes a vault (issue 27): lock, recover whatever is interrupted, run
the plan, release.

Every writing command has the same five stages (docs/ARCHITECTURE.md, "The spine"): resolve,
plan, show, then apply and release through a :class:`Session`. A session holds the vault's
write lock (an advisory ``flock``: one writer per vault), and before anything else it recovers
what a killed command left behind, in both journal kinds:

- a transaction's journal (``.shardmind/journal``): rolled back or finished
  (:func:`shardpy.apply.transaction.recover`);
- an import run (``.shardmind/imports/<run>/``): one killed while it was still planning wrote no
  note and is discarded; one killed while applying is settled only by the user's choice
  (``import --resume`` or ``--abandon``), so every other writing command refuses with
  ``IMPORT_RUN_INTERRUPTED`` as a new import does (issue 27; tests/test_spine_session.py).
  ``status`` reports such a run instead, and the import's own ``--resume``/``--abandon`` act
  on it.

Nothing outside this module takes the vault lock or calls ``recover`` (tests/test_spine.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

from shardpy.apply.transaction import Op, RecoveryReport, Transaction, interrupted, recover
from shardpy.errors import ShardpyError
from shardpy.record import Record
from shardpy.vault.layout import IMPORTS
from shardpy.vault.lock import vault_lock

# What a session does with interrupted import runs: "refuse" (every writing command), "report"
# (status lists them), "own" (import --resume / --abandon settle them themselves).
TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Literal

    ImportRuns = Literal["refuse", "report", "own"]

ProgressFn = Callable[[int, int], None]


class Session(Record):
    """A held vault lock, after recovery: :meth:`run` applies a plan's operations."""

    vault: Path
    command: str
    recovery: RecoveryReport | None = None

    def run(
        self,
        ops: list[Op],
        *,
        label: str,
        progress: ProgressFn | None = None,
        remove_sidecar_on_rollback: bool = False,
    ) -> Transaction:
        """Apply ``ops`` all-or-nothing as one journaled transaction named ``label``."""
        tx = Transaction(self.vault, label, remove_sidecar_on_rollback=remove_sidecar_on_rollback)
        tx.run(ops, progress=progress)
        return tx


@contextlib.contextmanager
def session(
    vault: Path, command: str, *, wait: float = 0.0, imports: ImportRuns = "refuse"
) -> Iterator[Session]:
    """Hold ``vault``'s write lock for the block, after recovering what was interrupted.

    ``VAULT_LOCKED`` when another process writes (after ``wait`` seconds of retrying);
    a recovery that refuses (a journal breaking a rule) raises before the block runs.
    """
    with _held(vault, command, wait):
        yield Session(vault, command, _recover(vault, imports))


def borrowed(vault: Path, command: str) -> Session:
    """A session under the lock the shardpy command running a lifecycle hook holds
    (``SHARDPY_HOOK=1``): that command took the lock and recovered; this one only writes."""
    return Session(vault, command)


def recover_first(vault: Path, command: str, *, imports: ImportRuns = "refuse") -> RecoveryReport | None:
    """Before planning: settle what a killed command left, so the plan sees the vault as the
    user left it. Nothing interrupted (the usual case): no lock is taken, no file written."""
    if not vault.is_dir() or not _pending(vault, imports):
        return None
    with session(vault, command, imports=imports) as s:
        return s.recovery


def needs_recovery(vault: Path, imports: ImportRuns = "refuse") -> bool:
    """Something interrupted waits in ``vault`` that a session would settle (or refuse on)."""
    return _pending(vault, imports)


def writer_running(vault: Path, command: str) -> bool:
    """Another process holds ``vault``'s write lock right now (this one takes and drops it)."""
    try:
        with _held(vault, command, 0.0):
            return False
    except ShardpyError as exc:
        if exc.code != "VAULT_LOCKED":
            raise
        return True


@contextlib.contextmanager
def _held(vault: Path, command: str, wait: float) -> Iterator[None]:
    # The one place the vault lock is taken (tests/test_spine.py).
    with vault_lock(vault, command=command, wait=wait):
        yield


def _pending(vault: Path, imports: ImportRuns) -> bool:
    """Cheap: one journal read attempt, one small scandir, and the import runs' folder only
    when it exists (read-only commands ask this before deciding to take the lock)."""
    if interrupted(vault):
        return True
    return imports == "refuse" and any(state != "planning" for _, state in _import_runs(vault))


def _recover(vault: Path, imports: ImportRuns) -> RecoveryReport | None:
    """Both journal kinds, with the lock held: the transaction first (an install, update or
    adopt killed here), then the import runs per ``imports``."""
    # The one recover call (tests/test_spine.py).
    report = recover(vault)
    if imports == "refuse":
        _settle_import_runs(vault)
    return report


def _import_runs(vault: Path) -> list[tuple[str, str]]:
    if not (vault / IMPORTS).is_dir():
        return []  # never imported into: the import machinery is not even loaded
    from shardpy.apply.rundir import incomplete_runs

    return incomplete_runs(vault)


def _settle_import_runs(vault: Path) -> None:
    """Runs killed while planning wrote nothing: discarded. A run killed while applying is the
    user's to settle: refused, as a new import refuses (tests/test_spine_session.py)."""
    runs = _import_runs(vault)
    if not runs:
        return
    from shardpy.apply.rundir import discard_unsealed

    pending = discard_unsealed(vault, runs)
    if pending:
        raise interrupted_import(pending)


def interrupted_import(runs: list[tuple[str, str]]) -> ShardpyError:
    """``IMPORT_RUN_INTERRUPTED``: the one wording, for the import and every other command."""
    ids = ", ".join(r for r, _ in runs)
    return ShardpyError(
        "IMPORT_RUN_INTERRUPTED",
        f"An earlier import run was interrupted before it finished ({ids})",
        "Run `shardpy import --resume` to finish it, or `shardpy import --abandon` to roll it back.",
    )
