"""`shardpy import`'s stages, beside install and update: resolve, plan, show, apply, resume, abandon.

Planning is pure (``importers.planner.build_plan``, a ``plan.importplan.Plan``)
and writes nothing, for a dry run and ``--apply`` alike. ``--apply`` then
makes the run's journal from the whole plan (each step's bytes made again and
checked against it, ``importers/steps.py``), seals it, and runs it through
the transaction's batched mode (``apply.batch``), the one writer; ``--resume``
and ``--abandon`` finish or roll back a run a killed process left. The
results know their own JSON form (``to_json``), so the CLI only prints.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from shardpy.apply.batch import (
    AbandonResult,
    ApplyResult,
    Journal,
    abandon,
    complete,
    discard_unsealed,
    execute,
    existing_prefix,
    incomplete_runs,
    new_run_id,
    runs_dir,
    set_aside,
)
from shardpy.errors import ShardpyError, UsageError
from shardpy.fsutil import check_relpath
from shardpy.importers.models import Adapter
from shardpy.importers.planner import build_plan
from shardpy.importers.steps import CHANGED_MEANWHILE
from shardpy.plan.importplan import Plan, PlanOptions, Progress
from shardpy.vault.ledger import Ledger, recording

FORMATS = ("basic-memory", "claude-code-memory", "mcp-memory")
DEFAULT_MEMORY_ROOT = "memories"


def utc_now() -> _dt.datetime:
    return _dt.datetime.now(_dt.UTC)


def iso(now: _dt.datetime) -> str:
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z"


def find_vault(start: Path) -> Path:
    """The nearest ancestor of ``start`` with ``.shardmind/`` or ``vault-manifest.json``, else ``start``."""
    here = start.resolve()
    for candidate in (here, *here.parents):
        if (candidate / ".shardmind").is_dir() or (candidate / "vault-manifest.json").is_file():
            return candidate
    return here


def check_vault(vault: Path) -> Path:
    if not vault.exists():
        raise ShardpyError(
            "IMPORT_VAULT_MISSING",
            f"The vault folder {vault} does not exist",
            "Create it or pass another VAULT.",
        )
    if not vault.is_dir():
        raise ShardpyError(
            "IMPORT_VAULT_NOT_DIRECTORY", f"The vault {vault} is not a folder", "Pass a folder as VAULT."
        )
    return vault.resolve()


def memory_root(vault: Path) -> str:
    manifest = vault / "vault-manifest.json"
    if manifest.is_file() and not manifest.is_symlink():
        try:
            data = json.loads(manifest.read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise ShardpyError(
                "IMPORT_MANIFEST_INVALID",
                f"Cannot read vault-manifest.json: {exc}",
                "Fix the JSON or pass --into explicitly.",
                path="vault-manifest.json",
            ) from exc
        value = data.get("memory_root") if isinstance(data, dict) else None
        if isinstance(value, str) and value.strip("/ "):
            return value.strip().strip("/")
    return DEFAULT_MEMORY_ROOT


def resolve_into(vault: Path, fmt: str, into: str | None) -> str:
    # An MCP memory graph lands where the graph tools read it (docs/MEMORY.md): one model, one folder.
    folder = "graph" if fmt == "mcp-memory" else fmt
    if into is not None and Path(into.strip()).expanduser().is_absolute():
        into = _inside(vault, into.strip())
    rel = (into if into is not None else f"{memory_root(vault)}/{folder}").strip().strip("/")
    try:
        check_relpath(rel)
    except ShardpyError:
        raise ShardpyError(
            "IMPORT_INTO_UNSAFE",
            f"--into must be a folder inside the vault, got {rel!r}",
            "Pass a vault-relative path without '..', e.g. --into memories/agent.",
        ) from None
    if any(part.startswith(".") for part in rel.split("/")):
        raise ShardpyError(
            "IMPORT_INTO_UNSAFE",
            f"--into may not be or lie in a hidden folder ({rel})",
            "Pick a visible folder; .shardmind/ and .obsidian/ belong to the tools.",
        )
    return rel


def _inside(vault: Path, into: str) -> str:
    """An absolute --into as the vault folder it names; one outside the vault is refused. Its
    leading "/" was stripped, so /home/me/vault/x landed in the vault's home/me/vault/x
    (tests/importers/test_into.py)."""
    target = Path(into).expanduser().resolve()
    try:
        return target.relative_to(vault.resolve()).as_posix()
    except ValueError:
        raise ShardpyError(
            "IMPORT_INTO_UNSAFE",
            f"--into must be a folder inside the vault, got {into!r} (outside {vault})",
            "Pass a vault-relative path, e.g. --into memories/agent, or an absolute one inside the vault.",
        ) from None


# A planned row that writes over a note the import made before (not a new one, not one left alone).
_OVERWRITES = frozenset({"update", "merge", "conflict"})


def _check_same_source(vault: Path, plan: Plan, source: Path) -> None:
    """IMPORT_OTHER_SOURCE when the plan would write over notes another source made here.

    The ledger knows a record by (format, folder, path in the source), not by the source's place
    (a synced ledger cannot: the place differs per machine). Two sources may share a folder (notes
    of other names stay apart: tests/gitsync/test_two_machines.py), but a second basic-memory
    project's ``index.md`` updated the first one's in place (a helper's probe,
    tests/importers/test_into.py). This machine's runs' records (``.shardmind/imports/<run>/``)
    say which source last listed each path.
    """
    theirs = _paths_of_other_sources(vault, plan.format, plan.into, source.resolve())
    if not theirs:
        return
    clashes = [r.source_path for r in plan.notes if r.action in _OVERWRITES and r.source_path in theirs]
    if not clashes:
        return
    other = theirs[clashes[0]]
    shown = ", ".join(clashes[:3]) + (f" (+{len(clashes) - 3} more)" if len(clashes) > 3 else "")
    raise ShardpyError(
        "IMPORT_OTHER_SOURCE",
        f"{plan.into} holds notes imported from {other} under the same names as {source}'s: {shown}",
        f"Import it into a folder of its own (--into {plan.into}-{source.resolve().name}), or pass "
        f"--new-source if it is {other} moved (its notes then update those).",
    )


def _paths_of_other_sources(vault: Path, fmt: str, into: str, source: Path) -> dict[str, str]:
    """Source path → the other source whose finished run last listed it (oldest run first)."""
    from shardpy.apply import journalcheck as jc
    from shardpy.apply.rundir import PLAN_NAME, RESULT_NAME, RUN_ID
    from shardpy.vault.layout import IMPORTS

    # Listed and read as incomplete_runs lists them and the vault's files are read: never through
    # a link, never a FIFO (that one would hang every import, dry runs too); the small result
    # first, the plan only of a finished run.
    root = jc.engine_folder(vault, IMPORTS)
    if root is None:
        return {}
    try:
        with os.scandir(root) as it:
            names = sorted(e.name for e in it if e.is_dir(follow_symlinks=False) and RUN_ID.fullmatch(e.name))
    except OSError:
        return {}
    owner: dict[str, str] = {}
    for name in names:
        done = _record(root / name / RESULT_NAME)
        if not (isinstance(done, dict) and done.get("state") == "complete"):
            continue  # a run that did not finish, or a record this machine cannot read
        run = _record(root / name / PLAN_NAME)
        if not isinstance(run, dict) or run.get("format") != fmt or run.get("into") != into:
            continue
        if not isinstance(run.get("source"), str):
            continue
        rows = run.get("notes")
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and isinstance(row.get("source_path"), str):
                owner[row["source_path"]] = run["source"]
    others = {s for s in set(owner.values()) if Path(s).resolve() != source}  # resolved once each
    return {p: s for p, s in owner.items() if s in others}


def _record(path: Path) -> object:
    """A run record's JSON, None when it cannot be read (fsutil.read_regular: no link, no FIFO)."""
    from shardpy.fsutil import read_regular

    try:
        return json.loads(read_regular(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None


def check_source(fmt: str, source: Path) -> Path:
    if not source.exists() and not source.is_symlink():
        raise ShardpyError(
            "IMPORT_SOURCE_MISSING",
            f"The source {source} does not exist",
            "Check the path you passed as SOURCE.",
        )
    if source.is_symlink() and not source.exists():
        raise ShardpyError(
            "IMPORT_SOURCE_MISSING", f"The source {source} is a dangling link", "Pass the real folder."
        )
    if fmt != "mcp-memory" and not source.is_dir():
        raise ShardpyError(
            "IMPORT_SOURCE_NOT_DIRECTORY",
            f"The {fmt} source must be a folder: {source}",
            "Pass the project folder (basic-memory) or the projects/ or memory/ folder (Claude Code).",
        )
    mode = os.R_OK | (os.X_OK if source.is_dir() else 0)
    if not os.access(source, mode):
        raise ShardpyError(
            "IMPORT_SOURCE_UNREADABLE", f"The source {source} cannot be read", "Check its permissions."
        )
    return source.resolve()


def make_adapter(fmt: str, source: Path, *, strict: bool) -> Adapter:
    if fmt == "basic-memory":
        from shardpy.importers.basic_memory import BasicMemoryAdapter

        return BasicMemoryAdapter(source, strict=strict)
    if fmt == "claude-code-memory":
        from shardpy.importers.claude_code import ClaudeCodeAdapter

        return ClaudeCodeAdapter(source, strict=strict)
    if fmt == "mcp-memory":
        from shardpy.importers.mcp_memory import McpMemoryAdapter

        return McpMemoryAdapter(source, strict=strict)
    raise UsageError(f"Unknown format {fmt!r}", "Use one of: " + ", ".join(FORMATS))


def _check_overlap(source: Path, vault: Path, into: str) -> None:
    dest = (vault / into).resolve()
    if dest == source or dest.is_relative_to(source) or source.is_relative_to(dest):
        raise ShardpyError(
            "IMPORT_SOURCE_OVERLAPS",
            f"The source {source} and the import folder {dest} overlap",
            "Import into a folder outside the source (see --into), and keep the source outside it.",
        )


def merge_function() -> Callable[[bytes, bytes, bytes], tuple[str, bytes]]:
    """The three-way document merge (base, user, imported) → (kind, bytes), the one update uses.

    The merge modules (~20 ms to load) are imported at the first merge: most runs merge nothing.
    """

    def merge(base: bytes, user: bytes, new: bytes) -> tuple[str, bytes]:
        from shardpy.merge.document import merge_document

        result = merge_document(base, user, new, shard_label="import", style="merge")
        return result.kind, result.data

    return merge


def _refuse_unless_live(vault: Path, runs: list[tuple[str, str]]) -> None:
    """A run is interrupted only when no process holds the vault lock; else it is running now."""
    from shardpy.apply.session import interrupted_import, writer_running

    if writer_running(vault, "import --dry-run"):
        ids = ", ".join(r for r, _ in runs)
        raise ShardpyError(
            "VAULT_LOCKED",
            f"An import run is being applied to this vault right now ({ids})",
            "Wait for it to finish, then run the dry run again.",
        )
    raise interrupted_import(runs)


@dataclass(slots=True)
class Outcome:
    """A planned (and, with --apply, applied) import."""

    plan: Plan
    applied: ApplyResult | None = None
    result: dict[str, Any] | None = None  # the run's record (result.json) once it completed

    def to_json(self) -> dict[str, Any]:
        """What ``shardpy import --json`` prints: the plan, and the run's record when it ran."""
        data = self.plan.to_dict()
        if self.result is not None:
            data["result"] = self.result
        return data


def run_import(
    *,
    fmt: str,
    source: Path,
    vault: Path,
    into: str | None,
    apply: bool,
    on_conflict: str = "keep",
    strict: bool = False,
    keep_resolved_links: bool = False,
    progress: Progress | None = None,
    apply_progress: Callable[[int, int], None] | None = None,
    now: _dt.datetime | None = None,
    new_source: bool = False,
) -> Outcome:
    vault = check_vault(vault)
    source = check_source(fmt, source)
    into_rel = resolve_into(vault, fmt, into)
    _check_overlap(source, vault, into_rel)
    moment = now or utc_now()
    opts = PlanOptions(
        into=into_rel,
        imported_at=iso(moment),
        on_conflict=on_conflict,
        keep_resolved_links=keep_resolved_links,
        source_label=str(source),
    )
    merge = merge_function()
    if not apply:
        pending = [r for r in incomplete_runs(vault) if r[1] != "planning"]
        if pending:
            _refuse_unless_live(vault, pending)
        adapter = make_adapter(fmt, source, strict=strict)
        ledger = Ledger.open_readonly(vault)
        try:
            plan = build_plan(adapter, vault=vault, ledger=ledger, opts=opts, progress=progress, merge=merge)
        finally:
            ledger.close()
        if not new_source:
            _check_same_source(vault, plan, source)
        return Outcome(plan)

    from shardpy.apply.session import session

    # The session recovers an interrupted transaction, discards runs killed while planning and
    # refuses (IMPORT_RUN_INTERRUPTED) while an earlier run waits for --resume or --abandon.
    with session(vault, "import"):
        adapter = make_adapter(fmt, source, strict=strict)
        ledger = Ledger.open_readonly(vault)
        try:
            # Planning writes nothing (issue 27): the run's journal is made only from a whole plan.
            plan = build_plan(
                adapter, vault=vault, ledger=ledger, opts=opts, progress=progress, merge=merge, for_apply=True
            )
            if not new_source:
                _check_same_source(vault, plan, source)
            if plan.steps == 0:
                return Outcome(plan)  # nothing to write: no run, no trace
            journal = _journal_plan(vault, plan, fmt, new_run_id(moment), progress)
        finally:
            ledger.close()
        if journal is None:
            return Outcome(plan)  # every step was refused as made (importers/steps.py): no run
        try:
            applied = execute(journal, apply_progress)
        except KeyboardInterrupt:
            abandon(journal, iso(utc_now()), into_rel)
            raise
        result = _complete(journal, fmt, into_rel)
        _fold_outcomes(plan, applied)
        return Outcome(plan, applied, result)


def _journal_plan(
    vault: Path, plan: Plan, fmt: str, run_id: str, progress: Progress | None
) -> Journal | None:
    """The run's journal holding every step of ``plan``, sealed: from here on the run is resumable.

    Each step's bytes are made again here (``plan.writes``, importers/steps.py) and checked against
    the plan; one made otherwise is left out (its row says why), and with none left there is no
    run (None). A refused target or a kill before the seal leaves an unsealed run that wrote no
    note: discarded here, or by the next command's session.
    """
    assert plan.writes is not None  # a plan for --apply with steps
    meta = {
        "format": fmt,
        "source": plan.source,
        "into": plan.into,
        "imported_at": plan.imported_at,
        "into_existed": existing_prefix(vault, plan.into),
    }
    journal = Journal.create(vault, run_id, meta)
    try:
        added = 0
        # closing: an error half-way stops the second pass's worker processes at once.
        with closing(plan.writes(progress)) as steps:
            for step, new, pre, base in steps:
                journal.add(step, new, pre, base)
                added += 1
        plan.writes = None  # the records and link tables it holds are not needed any more
        plan.steps = added
        if added == 0:
            journal.discard()
            return None
        plan.run_id = run_id
        journal.seal(plan.json_chunks())
    except BaseException:
        journal.discard()
        raise
    return journal


def _complete(journal: Journal, fmt: str, into: str) -> dict[str, Any]:
    """Close a finished run, its steps recorded in the import ledger as it closes."""
    now = iso(utc_now())

    def record(conn: sqlite3.Connection) -> AbstractContextManager[None]:
        return recording(conn, journal.vault, fmt=fmt, into=into, run_id=journal.run_id, now=now)

    return complete(journal, now, record)


def _fold_outcomes(plan: Plan, applied: ApplyResult) -> None:
    """Rows whose write was refused at apply time say so."""
    changed = set(applied.changed)
    errors = dict(applied.errors)
    for row in plan.notes:
        if row.step is None:
            continue
        if row.vault_path in changed:
            row.action = "conflict"
            row.detail = CHANGED_MEANWHILE
        elif row.vault_path in errors:
            row.action = "error"
            row.detail = errors[row.vault_path]


@dataclass(slots=True)
class ResumeOutcome:
    run_id: str
    meta: dict[str, str]
    total: int
    remaining: int
    applied: ApplyResult
    result: dict[str, Any]
    source_changed: int | None  # records whose source differs now (None: could not check)

    def to_json(self) -> dict[str, Any]:
        """What ``shardpy import --resume --json`` prints."""
        return {
            "run_id": self.run_id,
            "resumed": True,
            "steps": self.total,
            "remaining": self.remaining,
            "written": self.applied.written,
            "already": self.applied.already,
            "changed_meanwhile": self.applied.changed,
            "errors": [{"vault_path": t, "error": e} for t, e in self.applied.errors],
            "source_changed": self.source_changed,
        }


class AbandonOutcome(NamedTuple):
    """A rolled-back (or, its journal unreadable, set-aside) run."""

    run_id: str
    result: AbandonResult

    def to_json(self) -> dict[str, Any]:
        """What ``shardpy import --abandon --json`` prints."""
        res = self.result
        return {
            "run_id": self.run_id,
            "abandoned": True,
            "restored": res.restored,
            "removed": res.removed,
            "left": res.left,
            "journal_unreadable": res.unreadable,
        }


def resume(vault: Path, *, progress: Callable[[int, int], None] | None = None) -> ResumeOutcome:
    vault = check_vault(vault)
    from shardpy.apply.session import session

    if not runs_dir(vault).is_dir():
        raise _nothing_to_resume()
    # These two settle the interrupted run themselves ("own"); a transaction is recovered first.
    with session(vault, "import --resume", imports="own"):
        journal = _open_interrupted(vault)
        meta = journal.meta()
        total, done = journal.counts()
        changed = _source_changes(journal, meta)
        try:
            applied = execute(journal, progress, resuming=True)
        except KeyboardInterrupt:
            # The run stays as it was left, resumable: "every change was rolled back" was untrue
            # (tests/importers/test_resume.py).
            raise KeyboardInterrupt(
                "Interrupted; the import is still interrupted, the notes written so far kept: "
                "`shardpy import --resume` finishes it, `shardpy import --abandon` undoes it."
            ) from None
        result = _complete(journal, meta["format"], meta["into"])
        return ResumeOutcome(journal.run_id, meta, total, total - done, applied, result, changed)


def _open_interrupted(vault: Path) -> Journal:
    """The latest interrupted run, sealed and within the journal rules; else a typed error."""
    runs = incomplete_runs(vault)
    pending = discard_unsealed(vault, runs)
    if not pending:
        unsealed = [r for r, state in runs if state == "planning"]
        raise _plan_incomplete(unsealed[-1]) if unsealed else _nothing_to_resume()
    run_id = pending[-1][0]
    journal = Journal.open(vault, run_id)
    if not journal.sealed():
        # Killed while the plan was being written: no note was written yet. Resuming would
        # "finish" a partial plan and report success for work never done.
        journal.discard()
        raise _plan_incomplete(run_id)
    try:
        journal.check()
    except ShardpyError:
        journal.close()
        raise
    return journal


def _plan_incomplete(run_id: str) -> ShardpyError:
    """Nothing to resume, said precisely: the run died before its plan was complete."""
    return ShardpyError(
        "IMPORT_NOTHING_TO_RESUME",
        f"There is nothing to resume: import run {run_id} was interrupted while its plan was being "
        "written, so nothing had been imported; the run was discarded",
        "Run the same import again: `shardpy import --from FORMAT SOURCE --apply`.",
        details={"discarded_run": run_id},
    )


def _nothing_to_resume() -> ShardpyError:
    return ShardpyError(
        "IMPORT_NOTHING_TO_RESUME",
        "There is no interrupted import run in this vault",
        "Start a new import with `shardpy import --from FORMAT SOURCE --apply`.",
    )


def _source_changes(journal: Journal, meta: dict[str, str]) -> int | None:
    """How many not-yet-done steps' source records changed since the run was planned (best effort)."""
    try:
        source = Path(meta["source"])
        adapter = make_adapter(meta["format"], check_source(meta["format"], source), strict=False)
        from shardpy.importers.models import Record

        now = {r.source_path: r.source_hash for r in adapter.scan() if isinstance(r, Record)}
    except (ShardpyError, OSError, KeyError):
        return None
    return sum(1 for sp, h in journal.pending_sources() if now.get(sp) != h)


def abandon_run(vault: Path) -> AbandonOutcome:
    vault = check_vault(vault)
    from shardpy.apply.session import session

    if not runs_dir(vault).is_dir():
        raise _nothing_to_resume()
    # These two settle the interrupted run themselves ("own"); a transaction is recovered first.
    with session(vault, "import --abandon", imports="own"):
        try:
            journal = _open_interrupted(vault)
        except ShardpyError as exc:
            if exc.code != "IMPORT_RUN_JOURNAL_CORRUPT":
                raise
            run_id = discard_unsealed(vault, incomplete_runs(vault))[-1][0]
            set_aside(vault, run_id, iso(utc_now()))
            return AbandonOutcome(run_id, AbandonResult(unreadable=True))
        meta = journal.meta()
        return AbandonOutcome(journal.run_id, abandon(journal, iso(utc_now()), meta.get("into", "")))
