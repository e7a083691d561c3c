"""What the import adapters give the planner: source records, rendered notes, the adapter protocol.

The plan made from them (rows, steps, the plan itself) is ``shardpy/plan/importplan.py``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

from shardpy.importers.links import LinkUse, Resolver
from shardpy.plan.importplan import Notice, Skipped

# Bumped when the rendering of notes changes, so earlier imports re-render.
RENDER_VERSION = "1"


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
