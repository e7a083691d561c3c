"""What merging one file gives: its kind (which rule merged it) and the merged bytes.

Its own module so that every rule's module (:mod:`shardpy.gitsync.merge` for notes and
values, :mod:`shardpy.gitsync.state`, :mod:`shardpy.gitsync.ledger`) returns the same
types without importing the module that picks the rule (issue 27: the lazy import cycle
merge.py <-> state.py; tests/test_no_cycles.py).
"""

from __future__ import annotations

from enum import Enum

from shardpy.record import Record, field

__all__ = ["FileKind", "FileMerge"]


class FileKind(Enum):
    NOTE = "note"
    VALUES = "values"
    STATE = "state"
    LEDGER = "ledger"
    RECORD = "record"
    DATA = "data"  # a file that must parse: JSON (Obsidian's settings, plugins' data, canvases)


class FileMerge(Record, frozen=True):
    """The merged bytes; ``clean`` False means git must mark the path conflicted."""

    kind: FileKind
    data: bytes
    clean: bool
    messages: list[str] = field(default_factory=list)
