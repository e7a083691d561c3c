"""The import's plan (issue 27: every plan in ``plan/``): its rows, its steps and its JSON form.

The import planner (``importers/planner.py``) makes a ``Plan`` and writes
nothing: not a note, not a journal row (issue 27, "planning ends before the
first journal write of ``--apply``"). A plan row that writes has a step
number and the step's identity (``pre_sha``: what the vault file must be,
``render_key``: what is rendered); the bytes are not kept (at 100,000 notes
they would be hundreds of MB). ``--apply`` asks ``Plan.writes`` for each step
again, bytes and all (``importers/steps.py``), checks it is the step the plan
holds, and only then journals it (``flows/importflow.py``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from shardpy.plan.actions import IMPORT_ACTIONS, IMPORT_FAILED, IMPORTED, ImportAction, WriteKind

OnConflict = Literal["keep", "theirs", "markers"]
# A planning stage (``scan``, ``plan``, ``record``), records done, records in all (None: unknown yet).
Progress = Callable[[str, int, int | None], None]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A source file not imported, and why (the plan's "Skipped files" table)."""

    source_path: str
    reason: str

    def __reduce__(self) -> tuple[type[Skipped], tuple[Any, ...]]:
        # Pickled by the thousand from the reading workers: a plain tuple pickles and unpickles
        # ~4x faster than a frozen dataclass's default (Python-level state methods).
        return (Skipped, (self.source_path, self.reason))


@dataclass(frozen=True, slots=True)
class Notice:
    source_path: str
    message: str


@dataclass(slots=True)
class NoteRow:
    action: ImportAction
    kind: str
    type: str | None
    name: str
    source_path: str
    vault_path: str
    observations: int
    detail: str = ""
    warnings: tuple[str, ...] = ()
    step: int | None = None  # number of the step that writes it (None: nothing is written)
    # The step's identity, planned for --apply (a dry run leaves them unset): the vault file's hash
    # the step expects (None: no file) and the render key of what it writes (importers/decide.py).
    pre_sha: str | None = None
    render_key: str = ""

    @property
    def target(self) -> str:
        """The vault path, under the name every plan's entry has (``plan.actions.PlannedAction``)."""
        return self.vault_path


@dataclass(frozen=True, slots=True)
class LinkRow:
    source_path: str
    text: str
    status: str
    target: str | None
    reason: str
    rewritten: str | None

    def __reduce__(self) -> tuple[type[LinkRow], tuple[Any, ...]]:
        # Rows travel back from second-pass workers by the thousand: a plain tuple pickles
        # and unpickles several times faster than a frozen dataclass's default.
        return (LinkRow, (self.source_path, self.text, self.status, self.target, self.reason, self.rewritten))


@dataclass(slots=True)
class Step:
    """A file action with provenance: the write the apply stage performs (``action``, a typed
    ``WriteKind``; ``target``, ``pre_sha``, ``new_sha``) and the source record it came from
    (``source_path``, ``source_hash``, ``render_key``, ``base_sha``) for the import ledger. The
    bytes travel beside it (``StepWrite``); a run's journal records it (``apply.batch.JournalStep``)."""

    index: int
    action: WriteKind
    kind: str
    source_path: str
    target: str
    pre_sha: str | None  # what must be at ``target`` before writing (None: nothing)
    new_sha: str
    source_hash: str
    render_key: str
    base_sha: str  # the pristine render, the next merge base


# A step and its bytes: (step, new bytes, the bytes it replaces or None, merge base or None: the new).
StepWrite = tuple[Step, bytes, bytes | None, bytes | None]


class StepSource(Protocol):
    """A plan's steps made again with their bytes, in step order, each checked against the plan
    (``importers/steps.py``); ``progress`` sees stage ``record``."""

    def __call__(self, progress: Progress | None) -> Generator[StepWrite, None, None]: ...


@dataclass(slots=True)
class Plan:
    format: str
    source: str
    vault: str
    into: str
    imported_at: str
    on_conflict: str
    dry_run: bool = True
    notes: list[NoteRow] = field(default_factory=list)
    links: list[LinkRow] = field(default_factory=list)
    link_counts: dict[str, int] = field(
        default_factory=lambda: {"resolved": 0, "ambiguous": 0, "unresolved": 0}
    )
    rewritten_links: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    notices: list[Notice] = field(default_factory=list)
    gone: list[tuple[str, str]] = field(default_factory=list)  # (source_path, vault path) no longer in source
    run_id: str | None = None
    steps: int = 0
    # A plan made for --apply: what makes its steps' bytes again (None: a dry run's, or once used).
    writes: StepSource | None = field(default=None, repr=False, compare=False)

    def counts(self) -> dict[ImportAction, int]:
        out: dict[ImportAction, int] = dict.fromkeys(IMPORT_ACTIONS, 0)
        for row in self.notes:
            out[row.action] = out.get(row.action, 0) + 1
        return out

    @property
    def failed(self) -> bool:
        c = self.counts()
        return any(c[a] > 0 for a in IMPORT_FAILED)

    def summary_line(self) -> str:
        c = self.counts()
        parts = [f"{c[a]} {a}" for a in IMPORT_ACTIONS]
        obs = sum(r.observations for r in self.notes if r.action in IMPORTED)
        lc = self.link_counts
        return (
            f"Summary: {len(self.notes)} record(s): " + ", ".join(parts) + f"; {obs} observation(s) added; "
            f"links: {lc['resolved']} resolved ({self.rewritten_links} rewritten), "
            f"{lc['ambiguous']} ambiguous, "
            f"{lc['unresolved']} unresolved; {len(self.skipped)} skipped file(s)"
        )

    def to_dict(self, *, rows: bool = True) -> dict[str, Any]:
        """The plan as ``--json`` prints it (``rows=False``: the notes and links lists left empty)."""
        return {
            "dry_run": self.dry_run,
            "run_id": self.run_id,
            "format": self.format,
            "source": self.source,
            "vault": self.vault,
            "into": self.into,
            "imported_at": self.imported_at,
            "on_conflict": self.on_conflict,
            "notes": [note_dict(r) for r in self.notes] if rows else [],
            "links": [link_dict(lr) for lr in self.links] if rows else [],
            "skipped": [{"source_path": s.source_path, "reason": s.reason} for s in self.skipped],
            "notices": [{"source_path": n.source_path, "message": n.message} for n in self.notices],
            "no_longer_in_source": [{"source_path": s, "vault_path": v} for s, v in self.gone],
            "summary": {
                **self.counts(),
                "records": len(self.notes),
                "links": dict(self.link_counts),
                "links_rewritten": self.rewritten_links,
                "skipped": len(self.skipped),
                "observations_added": sum(r.observations for r in self.notes if r.action in IMPORTED),
            },
        }

    def json_chunks(self) -> Iterator[str]:
        """``to_dict()`` as JSON text, piece by piece: the notes and links are never all in one object.

        One note or link per line (C-speed encoding); the object equals ``to_dict()``.
        """
        encode = json.JSONEncoder(ensure_ascii=False).encode
        head = self.to_dict(rows=False)
        for i, (key, value) in enumerate(head.items()):
            yield ("{\n" if i == 0 else ",\n") + encode(key) + ": "
            if key == "notes":
                yield from json_array(encode, map(note_dict, self.notes))
            elif key == "links":
                yield from json_array(encode, map(link_dict, self.links))
            else:
                yield encode(value)
        yield "\n}\n"


@dataclass(slots=True)
class PlanOptions:
    into: str
    imported_at: str
    on_conflict: str = "keep"
    keep_resolved_links: bool = False
    source_label: str = ""
    workers: int | None = None  # processes for the second pass (None: decide by size and CPUs)


def note_dict(r: NoteRow) -> dict[str, Any]:
    return {
        "action": r.action,
        "kind": r.kind,
        "type": r.type,
        "name": r.name,
        "source_path": r.source_path,
        "vault_path": r.vault_path,
        "observations_added": r.observations,
        "detail": r.detail,
        "warnings": list(r.warnings),
    }


def link_dict(lr: LinkRow) -> dict[str, Any]:
    return {
        "source_path": lr.source_path,
        "text": lr.text,
        "status": lr.status,
        "target": lr.target,
        "reason": lr.reason,
        "rewritten": lr.rewritten,
    }


def json_array(encode: Callable[[Any], str], items: Iterator[dict[str, Any]]) -> Iterator[str]:
    yield "["
    batch: list[str] = []
    first = True
    for item in items:
        batch.append(encode(item))
        if len(batch) == 1024:
            yield ("\n" if first else ",\n") + ",\n".join(batch)
            first = False
            batch.clear()
    if batch:
        yield ("\n" if first else ",\n") + ",\n".join(batch)
    yield "]"
