"""The import plan's data: source records, rendered notes, plan rows, steps and the plan itself."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from shardpy.importers.links import LinkUse, Resolver
from shardpy.importers.planjson import json_array, link_dict, note_dict
from shardpy.importers.walk import Skipped
from shardpy.plan.actions import IMPORT_ACTIONS, IMPORT_FAILED, IMPORTED, ImportAction, WriteKind

OnConflict = Literal["keep", "theirs", "markers"]
# Bumped when the rendering of notes changes, so earlier imports re-render.
RENDER_VERSION = "1"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass(slots=True)
class Record:
    """One source record (a note file, an attachment, an MCP entity), without its body."""

    source_path: str  # key in the import records; shown to the user
    kind: str  # "note" | "attachment"
    type: str | None
    name: str
    stem: str  # wanted file name (without extension for notes)
    folder: str  # wanted folder relative to --into
    source_hash: str
    locator: Any  # adapter data to read the record again (a path, an entity index)
    names: tuple[str, ...] = ()  # link keys of first rank (title, entity name)
    keys: tuple[str, ...] = ()  # link keys of second rank (permalink, file stem, path)
    warnings: tuple[str, ...] = ()
    target: str = ""  # vault path, set when paths are claimed
    renamed: bool = False  # file name differs from the name (the name goes to aliases)
    prepared: Any = None  # adapter data found while reading (basic-memory: observation count, links)

    def __reduce__(self) -> tuple[Callable[..., Record], tuple[Any, ...]]:
        # Records travel from the reading workers by the 100,000: a plain tuple pickles 4x faster
        # than the dataclass default (Python-level __getstate__/__setstate__ for slots).
        return (
            Record,
            (
                self.source_path,
                self.kind,
                self.type,
                self.name,
                self.stem,
                self.folder,
                self.source_hash,
                self.locator,
                self.names,
                self.keys,
                self.warnings,
                self.target,
                self.renamed,
                self.prepared,
            ),
        )


@dataclass(frozen=True, slots=True)
class Notice:
    source_path: str
    message: str


@dataclass(slots=True)
class Provenance:
    imported_from: str
    imported_at: str


@dataclass(slots=True)
class Built:
    """A record rendered for the vault."""

    data: bytes
    observations: list[str]  # observation texts (for the "added" count)
    links: list[LinkUse]
    link_sig: str  # link decisions that shaped ``data`` (part of the render key)

    @property
    def observation_count(self) -> int:
        return len(self.observations)


class Adapter(Protocol):
    format: str

    def scan(self) -> Iterator[Record | Skipped | Notice]: ...

    def build(self, record: Record, resolver: Resolver, prov: Provenance) -> Built: ...

    def observations_of(self, data: bytes) -> list[str]: ...


class SourceChanged(Exception):
    """The source record's bytes changed between the two passes."""


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
    step: int | None = None  # index of the journal step that writes it

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
    bytes travel separately (``StepSink``); ``apply.batch.JournalStep`` is this shape."""

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


class StepSink(Protocol):
    def add(self, step: Step, new: bytes, pre: bytes | None, base: bytes | None) -> None: ...


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


Progress = Callable[[str, int, int | None], None]


class BuiltNote(Protocol):
    """A record rendered for the vault, at once (``Built``) or on demand (an adapter's ``prepare``)."""

    @property
    def data(self) -> bytes: ...

    @property
    def observations(self) -> list[str]: ...

    @property
    def observation_count(self) -> int: ...

    @property
    def links(self) -> list[LinkUse]: ...

    @property
    def link_sig(self) -> str: ...
