"""The one vocabulary of planned file actions, for every writing command.

Every word any plan uses for what happens to one file is in ``FileActionKind``,
once, with its one meaning in ``MEANING``. Each command's plan is typed by a
subset of it: an update's and an adopt's ``FileAction.action`` is
``ActionKind``, an install's ``PlannedFile.action`` is ``InstallAction``, an
import's plan row is ``ImportAction`` and the import steps that write are
``WriteKind`` (what the batched apply, ``apply/batch.py``, accepts in a run
journal). Each is a ``Literal``, so mypy checks every assignment and every
``==`` (``--strict`` includes strict equality: ``action == "conflcit"`` is an
error); the groups the flows test membership in are typed frozensets here,
since a tuple of strings in an ``in`` test is not checked word by word.

Two concepts have two words, each printed by its own commands (``SAME_AS``):
the words are the ``--json`` output's, a public contract, so they stay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Protocol, get_args

FileActionKind = Literal[
    # a file the vault does not have is written
    "add",
    "create",
    "restore",
    # the file's source changed
    "update",
    "replace",
    "merge",
    "conflict",
    # nothing is written at the path
    "unchanged",
    "identical",
    "keep",
    "missing",
    "volatile",
    "differs",
    "collision",
    "error",
    # the shard stopped producing it
    "delete",
    "orphan",
    "gone",
    "left",
    # files moved or rewritten by a rename
    "move",
    "moved",
    "links",
]

# update and adopt (``plan/update.py``, ``plan/adopt.py`` and the passes after them).
ActionKind = Literal[
    "add",
    "restore",
    "update",
    "merge",
    "conflict",
    "keep",
    "unchanged",
    "missing",
    "volatile",
    "delete",
    "orphan",
    "gone",
    "differs",
    "move",
    "moved",
    "left",
    "links",
]
# install (``flows/install.py``): write it, move the file already there aside
# (--backup) and write it, or nothing (the bytes are already there).
InstallAction = Literal["create", "replace", "identical"]
# An import step that writes one file: a new note, a replaced one (the source changed), a
# clean three-way merge, or a conflict resolved by writing (the user's copy backed up first).
WriteKind = Literal["create", "update", "merge", "conflict"]
# An import plan row: a write, or why nothing is written (in the order summaries list them).
ImportAction = Literal["create", "update", "unchanged", "merge", "conflict", "collision", "error"]

MEANING: dict[FileActionKind, str] = {
    "add": "new in the shard, nothing on disk: written",
    "create": "install and import: new, nothing on disk (import: a record not imported before): written",
    "restore": "a managed file the user deleted is written again (--restore-missing; adopt brings it back)",
    "update": "the source (the shard, or an import's record) changed it and the vault's copy is "
    "unmodified: replaced",
    "replace": "install: a file not shardpy's is at the path; moved aside (--backup) and replaced",
    "merge": "both the source and the vault's copy changed it: a clean three-way merge",
    "conflict": "both changed the same lines: resolved by the user's choice or --on-conflict",
    "unchanged": "the vault already holds what the plan would write: nothing to do",
    "identical": "install: the file already there has the shard's bytes: tracked, not written",
    "keep": "kept as it is on disk",
    "missing": "a managed file the user deleted stays deleted",
    "volatile": "the user maintains it: the bytes on disk are recorded as they are",
    "differs": "adopt: the clone's bytes differ from the detected release: kept or replaced by --mode",
    "collision": "import: the vault path is taken (another record, or a file not imported): not written",
    "error": "import: the record could not be read or rendered: not written",
    "delete": "the shard dropped it and it is unmodified: deleted",
    "orphan": "the shard dropped it but the user changed it (or it is user content): kept as the user's",
    "gone": "the shard dropped it and it is already absent: forgotten",
    "left": "adopt: the detected release had it, the shard no longer does: left alone",
    "move": "a user file moved with its renamed folder: written at the new path",
    "moved": "... and removed at its old path",
    "links": "a note's wikilinks rewritten to follow renamed notes",
}

# The same concept under two words: install and import say "create" and
# "identical" where update and adopt say "add" and "unchanged". Kept apart
# because each command's --json prints its own word.
SAME_AS: dict[FileActionKind, FileActionKind] = {"create": "add", "identical": "unchanged"}

# Groups of kinds the flows test for (typed: a misspelt member is a mypy error).
ADDED: frozenset[ActionKind] = frozenset({"add", "restore"})  # a file the vault did not have
DROPPED: frozenset[ActionKind] = frozenset({"delete", "orphan", "gone"})  # the shard stopped producing it
BOTH_CHANGED: frozenset[ActionKind] = frozenset({"merge", "conflict"})
# adopt's summary: when the shard's bytes are written, what is kept, what --use-shard turns to theirs
ADOPT_REPLACED: frozenset[ActionKind] = frozenset({"differs", "update"})
ADOPT_KEPT: frozenset[ActionKind] = frozenset({"differs", "keep", "volatile"})
ADOPT_SHARD_MAY_WIN: frozenset[ActionKind] = frozenset({"merge", "conflict", "keep"})
WRITE_KINDS: frozenset[WriteKind] = frozenset(get_args(WriteKind))
IMPORT_ACTIONS: tuple[ImportAction, ...] = get_args(ImportAction)
# import rows whose record lands as the source has it (their observations count as added)
IMPORTED: frozenset[ImportAction] = frozenset({"create", "update", "merge"})
IMPORT_FAILED: frozenset[ImportAction] = frozenset({"collision", "error"})  # the import exits 1

# Each command's subset, by the name its JSON is documented under (the tests walk these).
SUBSETS: dict[str, tuple[FileActionKind, ...]] = {
    "update": get_args(ActionKind),
    "install": get_args(InstallAction),
    "import": IMPORT_ACTIONS,
    "import step": get_args(WriteKind),
}


class PlannedAction(Protocol):
    """One file's entry in any command's plan: a word of the vocabulary and the
    vault path it is about. An update's ``FileAction``, an install's
    ``PlannedFile``, an import's row (``NoteRow``) and its write (``Step``, a
    file action with provenance: ``apply.batch.JournalStep``) are each one."""

    @property
    def action(self) -> FileActionKind: ...

    @property
    def target(self) -> str: ...


if TYPE_CHECKING:

    def _in_vocabulary(word: ActionKind | InstallAction | ImportAction | WriteKind) -> FileActionKind:
        """mypy proves every subset is inside the vocabulary: a word added to a
        command's Literal but not to ``FileActionKind`` fails here."""
        return word
