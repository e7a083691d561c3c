"""Resolve, fetch and load a shard from whatever the user typed."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from shardpy.shard.loader import Shard
from shardpy.shard.produce import Production
from shardpy.shard.walk import SourceFile
from shardpy.sources import Fetched, ProgressFn, SourceSpec

if TYPE_CHECKING:
    from shardpy.flows.adopt import AdoptOptions, AdoptResult
    from shardpy.flows.choices import UpdateAnswers
    from shardpy.ui import UI
    from shardpy.vault.state import State

# What the destination is to a source kind when it renders (copier's names for them).
Operation = Literal["copy", "update", "adopt"]


class Prepare(Protocol):
    """The resolver (``flows/resolve.prepared``), as a flow that must not import it is handed it."""

    def __call__(
        self, spec: SourceSpec, *, include_prerelease: bool = False, progress: ProgressFn | None = None
    ) -> contextlib.AbstractContextManager[Prepared]: ...


@dataclass
class Prepared:
    """A fetched source, behind the one protocol every source kind answers (issue 27): the
    flows ask it for answers, a render, records and after-apply work, and never test which
    kind it is. This class is a shard's answers; a copier template's are
    ``flows/copierprep.py``'s (tests/test_spine.py: no ``as_copier`` in flows/)."""

    spec: SourceSpec
    fetched: Fetched
    shard: Shard

    # A copier template writes its own answers file instead (flows/copierprep.py).
    writes_values_file: ClassVar[bool] = True
    # A copier template makes a project, not an Obsidian vault (install's summary says so).
    makes_project: ClassVar[bool] = False

    def begin(
        self,
        dest: Path,
        operation: Operation,
        *,
        trust: bool,
        no_hooks: bool = False,
        recorded: State | None = None,
    ) -> None:
        """What the source needs to know of the destination before answers are collected
        (``recorded``: the vault's state an update starts from). A shard needs nothing."""

    def collect(
        self,
        *,
        values_file: Path | None,
        data: list[str],
        last: Mapping[str, Any],
        use_defaults: bool,
        ui: UI,
    ) -> dict[str, Any]:
        """An install's answers: --values FILE, --data on top, then the wizard (or defaults)."""
        from shardpy.flows.choices import collect_values, load_prefill, parse_data

        schema = self.shard.schema
        prefill = load_prefill(schema, values_file, parse_data(data))
        return collect_values(schema, prefill=prefill, ask=None, use_defaults=use_defaults, ui=ui)

    def with_data(self, current: dict[str, Any], pairs: dict[str, str]) -> dict[str, Any]:
        """``current`` with --data's pairs on top, each checked and typed by the schema."""
        from shardpy.flows.choices import data_values

        return {**current, **data_values(self.shard.schema, pairs)}

    def update_answers(
        self, state: State, current: dict[str, Any], *, data: list[str], yes: bool, dry_run: bool, ui: UI
    ) -> UpdateAnswers:
        """An update's answers: the recorded values migrated to this release, the new ones asked."""
        from shardpy.flows.choices import update_values

        return update_values(self.shard.schema, state.version, self.version, current, yes=yes, ui=ui)

    def state_record(self) -> dict[str, Any] | None:
        """What this source kind keeps in state besides the shard's (copier's answers file)."""
        return None

    def adopt_own(
        self,
        opts: AdoptOptions,
        ui: UI,
        vault: Path,
        result: AdoptResult,
        *,
        progress: ProgressFn | None,
        prepare: Prepare,
    ) -> AdoptResult | None:
        """A source kind that adopts its own way (copier: from the project's answers file)
        does it here, ``prepare`` fetching any other release it needs; None: adopted by the
        shard's rules (``flows/adopt.py``)."""
        return None

    @property
    def remote(self) -> bool:
        return self.fetched.remote

    @property
    def version(self) -> str:
        return self.shard.manifest.version

    @cached_property
    def archive_sha256(self) -> str | None:
        """What identifies this release's content: the downloaded archive's
        hash, or for a local folder the hash of what its shard uses."""
        if self.spec.kind in ("local", "bundled"):
            return self.shard.content_hash()
        return self.fetched.archive_sha256

    def render(
        self,
        values: dict[str, Any],
        modules: dict[str, str],
        install_date: str,
        *,
        files: list[SourceFile] | None = None,
        read: Callable[[str], bytes] | None = None,
    ) -> Production:
        """Every output of this shard for these answers (the one render path);
        ``files`` / ``read``: some of its sources, read from elsewhere (a clone's copy)."""
        included = [k for k, v in modules.items() if v == "included"]
        return self.shard.produce(values, included, install_date, files=files, read=read)

    def values_to_record(self, values: dict[str, Any]) -> dict[str, Any]:
        """The values state and the values file keep."""
        return values

    def after_apply(self, dest: Path, *, trust: bool, no_hooks: bool, warnings: list[str]) -> None:
        """Source-specific work after the transaction (a copier template's tasks)."""

    def cleanup(self) -> None:
        """Remove scratch trees this source made while rendering."""

    def module_counts(self) -> dict[str, int]:
        """Files per module, for the module review."""
        counts: dict[str, int] = {}
        for f in self.shard.files:
            if f.module is not None:
                counts[f.module] = counts.get(f.module, 0) + 1
        return counts
