"""The typed kinds of planned file actions that the batched apply and the import share.

An update plan's actions are ``plan.update.ActionKind``; an import plan's rows
are ``ImportAction``, and the steps that write (``WriteKind``) are what the
transaction's batched mode (``apply/batch.py``) accepts in a run journal. Each
is a ``Literal``, so mypy checks every comparison and assignment (no free
strings), and the JSON they print is the same words as before.
"""

from __future__ import annotations

from typing import Literal, get_args

# A step that writes one file: a new note, a replaced one (the source changed), a clean
# three-way merge, or a conflict resolved by writing (the user's copy backed up first).
WriteKind = Literal["create", "update", "merge", "conflict"]
# An import plan row: a write, or why nothing is written (in the order summaries list them).
ImportAction = Literal["create", "update", "unchanged", "merge", "conflict", "collision", "error"]

WRITE_KINDS: frozenset[str] = frozenset(get_args(WriteKind))
IMPORT_ACTIONS: tuple[ImportAction, ...] = get_args(ImportAction)
