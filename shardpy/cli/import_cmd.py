"""`shardpy import`: bring other agent memories into the vault (dry run by default).

The CLI only parses options, prints the plan and reports; every decision is
made in ``shardpy.flows.importflow`` and ``shardpy.importers``. This module is the command's body and never
imports Typer: the options are declared once (``ImportArgs``, a shardpy.cli.options table),
``shardpy.cli.import_options`` builds the Typer command from them, and
``shardpy.cli.app`` runs plain invocations (``plain_args``) without Typer,
since Typer costs ~0.15 s before a command runs (its import, then a pydantic
adapter per parameter) -- 7% of a 20,000-note dry run.
"""

# an option table's cells are calls by design: each returns a shardpy.record.field()

from __future__ import annotations

import gc
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, get_args

from shardpy.cli import options as o
from shardpy.cli.choices import ImportFormat, OnConflict
from shardpy.cli.options import flow_options, parse_plain
from shardpy.record import replace

if TYPE_CHECKING:
    from rich.console import Console

    from shardpy.flows.importflow import Outcome
    from shardpy.plan.importplan import Plan, Progress

ApplyProgress = Callable[[int, int], None]

FORMATS: tuple[str, ...] = get_args(ImportFormat)
ON_CONFLICT: tuple[str, ...] = get_args(OnConflict)
UNCHANGED_LISTED_MAX = 50
# The progress bar's label of each planning stage (importers/planner.py; "record": --apply's steps
# made again for the run's journal, importers/steps.py).
STAGES = {"scan": "reading source", "plan": "planning", "record": "preparing writes"}


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    return Console(
        file=stream,
        no_color=bool(os.environ.get("NO_COLOR")) or not tty,
        highlight=False,
        soft_wrap=not tty,
        width=None if tty else 10_000,
    )


@contextmanager
def _progress(enabled: bool) -> Iterator[tuple[Progress | None, ApplyProgress | None]]:
    """(planning callback, applying callback), both None when not on a TTY."""
    if not enabled:
        yield None, None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    with Bar(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=_console(stderr=True),
        transient=True,
    ) as bar:
        tasks: dict[str, TaskID] = {}

        def plan_cb(stage: str, n: int, total: int | None) -> None:
            label = STAGES.get(stage, "planning")
            if stage not in tasks:
                tasks[stage] = bar.add_task(label, total=total)
            bar.update(tasks[stage], completed=n, total=total)

        def apply_cb(n: int, total: int) -> None:
            if "apply" not in tasks:
                tasks["apply"] = bar.add_task("writing", total=total)
            bar.update(tasks["apply"], completed=n, total=total)

        yield plan_cb, apply_cb


def _table(console: Console, title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    from shardpy.cli import table

    console.print(f"\n{title}:", markup=False)
    if not rows:
        console.print("  (none)", markup=False)
        return
    table.show(sys.stdout, console, headers, rows, terminal=console.is_terminal)


def _print_plan(plan: Plan, *, verbose: bool, header: str) -> None:
    console = _console()
    console.print(header, markup=False)
    from shardpy.cli.output import shown as visible  # a path's control characters, shown

    where = f"vault: {plan.vault}  into: {plan.into}  source: {plan.source}"
    console.print(visible(where), markup=False)
    rows = plan.notes
    unchanged = [r for r in rows if r.action == "unchanged"]
    hide_unchanged = not verbose and len(unchanged) > UNCHANGED_LISTED_MAX
    shown = [r for r in rows if not (hide_unchanged and r.action == "unchanged")]
    note_rows = [
        [
            r.action,
            r.type or "-",
            r.name if r.name == r.name.strip() else repr(r.name),
            r.source_path,
            r.vault_path,
            f"+{r.observations}" if r.observations else "",
            r.detail,
        ]
        for r in shown
    ]
    _table(
        console, "Notes", ["action", "type", "name", "source path", "vault path", "obs", "detail"], note_rows
    )
    if hide_unchanged:
        console.print(
            f"  ({len(unchanged)} unchanged note(s) not listed; --verbose lists them)", markup=False
        )
    link_rows = [
        [lr.source_path, lr.text, lr.status, lr.target or "", lr.rewritten or "", lr.reason]
        for lr in plan.links
    ]
    _table(
        console, "Links", ["source path", "link", "status", "vault note", "rewritten as", "reason"], link_rows
    )
    resolved = plan.link_counts.get("resolved", 0)
    if resolved and not any(lr.status == "resolved" for lr in plan.links):
        console.print(f"  ({resolved} resolved link(s) not listed; --verbose lists them)", markup=False)
    _table(
        console, "Skipped files", ["source path", "reason"], [[s.source_path, s.reason] for s in plan.skipped]
    )
    warn_rows = [[r.source_path, w] for r in rows for w in r.warnings]
    warn_rows += [[n.source_path, n.message] for n in plan.notices]
    if warn_rows:
        _table(console, "Warnings and notices", ["source path", "message"], warn_rows)
    if plan.gone:
        console.print(
            f"\n{len(plan.gone)} record(s) imported before are no longer in the source; "
            "their notes are kept.",
            markup=False,
        )
    console.print("\n" + plan.summary_line(), markup=False)


class ImportArgs(o.Args):
    """Import agent memory (basic-memory, Claude Code auto-memory, MCP memory graph) as linked notes.

    Dry run by default: prints the plan and writes nothing. --apply writes it;
    re-runs update what changed without overwriting your edits.
    """

    fmt: ImportFormat | None = o.value(
        "--from", help="Source format: basic-memory, claude-code-memory or mcp-memory."
    )
    source: Path | None = o.argument("The memory to import (a folder, or a .jsonl/.json file).", flow="")
    vault: Path | None = o.argument(
        "The vault (default: the vault around the current folder, else the current folder).", flow=""
    )
    into: str | None = o.value("--into", help="Vault folder to import into (default <memory_root>/<format>).")
    apply: bool = o.flag("--apply", help="Write the notes (without it nothing is written).")
    resume: bool = o.flag("--resume", help="Finish an interrupted --apply run.", flow=None)
    abandon: bool = o.flag("--abandon", help="Roll back an interrupted --apply run.", flow=None)
    as_json: bool = o.as_json("Print the plan as JSON.")
    verbose: bool = o.verbose("List unchanged notes and resolved links too.")
    on_conflict: OnConflict = o.on_conflict(
        "When the source and your note changed the same lines: keep, theirs or markers.", "keep"
    )
    strict: bool = o.flag("--strict", help="Skip files with malformed frontmatter instead of importing them.")
    new_source: bool = o.flag(
        "--new-source",
        help="The folder's notes came from another source: import this one there anyway (it updates them).",
    )
    vault_opt: Path | None = o.value("--vault", help="The vault (same as the VAULT argument).", flow=None)

    def checked(self) -> ImportArgs:
        if self.resume and self.abandon:
            raise o.BadUsage("--resume and --abandon cannot be combined", "--resume")
        if self.vault is not None and self.vault_opt is not None:
            raise o.BadUsage("give the vault once (VAULT or --vault)", "--vault")
        if not (self.resume or self.abandon):
            if self.fmt is None:
                raise o.BadUsage("is required (basic-memory, claude-code-memory or mcp-memory)", "--from")
            if self.source is None:
                raise o.BadUsage("is required", "SOURCE")
        return replace(self, vault=self.vault or self.vault_opt, vault_opt=None)


def plain_args(argv: list[str]) -> ImportArgs | None:
    """The arguments after ``import`` when they are plain (shardpy.cli.options), else None: Typer's,
    so both paths run the same command with the same arguments (tests/importers/test_cli.py)."""
    return parse_plain(ImportArgs, argv)


def run_command(args: ImportArgs) -> int:
    """Run a validated ``shardpy import`` (``fmt`` and ``source`` given unless resuming or abandoning).

    Returns the exit code: 0, 1 (a typed error, an OS failure, or a collision
    or error row), 130 (interrupted). Errors go through the one boundary every
    command shares (JSON on stdout with ``--json``).
    """
    from shardpy.cli.output import exit_code_of

    return exit_code_of(lambda: _run(args), as_json=args.as_json)


def _run(args: ImportArgs) -> int:
    from shardpy.flows import importflow as service

    vault_path = args.vault or service.find_vault(Path.cwd())
    as_json, verbose, fmt = args.as_json, args.verbose, args.fmt
    tty = sys.stderr.isatty() and not as_json
    if args.resume or args.abandon:
        return _resume_or_abandon(vault_path, resume=args.resume, as_json=as_json, tty=tty)
    assert fmt is not None and args.source is not None  # the callers check them
    with _progress(tty) as (plan_cb, apply_cb):
        outcome = flow_options(
            args,
            service.run_import,
            vault=vault_path,
            keep_resolved_links=verbose or as_json,
            progress=plan_cb,
            apply_progress=apply_cb,
        )
    # Printing makes rows and strings, no garbage cycles: collections would only walk the
    # plan and the 100,000s of rows again while they pile up (~0.2 s at 100,000 notes).
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _report(outcome, fmt=fmt, as_json=as_json, verbose=verbose)
    finally:
        if collecting:
            gc.enable()


def _report(outcome: Outcome, *, fmt: str, as_json: bool, verbose: bool) -> int:
    """Print the plan (and what was applied); the exit code."""
    plan = outcome.plan
    if as_json:
        sys.stdout.write(json.dumps(outcome.to_json(), ensure_ascii=False, indent=1) + "\n")
    else:
        if plan.dry_run:
            header = f"shardpy import --from {fmt}: DRY RUN (nothing was written; pass --apply to write)"
        elif plan.run_id is None:
            header = f"shardpy import --from {fmt}: APPLY (nothing to write; every note is up to date)"
        else:
            header = f"shardpy import --from {fmt}: APPLY (run {plan.run_id})"
        _print_plan(plan, verbose=verbose, header=header)
        if outcome.applied is not None:
            a = outcome.applied
            _console().print(
                f"Applied: {a.written} written, {a.already} already in place, "
                f"{len(a.changed)} changed meanwhile "
                f"(left alone), {len(a.errors)} error(s). Records: .shardmind/imports/{plan.run_id}/",
                markup=False,
            )
    return 1 if plan.failed else 0


def _resume_or_abandon(vault: Path, *, resume: bool, as_json: bool, tty: bool) -> int:
    from shardpy.flows import importflow as service

    console = _console()
    if resume:
        with _progress(tty) as (_, apply_cb):
            out = service.resume(vault, progress=apply_cb)
        if as_json:
            sys.stdout.write(json.dumps(out.to_json(), ensure_ascii=False, indent=1) + "\n")
        else:
            console.print(f"shardpy import --resume: finished run {out.run_id}", markup=False)
            console.print(
                f"{out.remaining} of {out.total} step(s) were left: {out.applied.written} written, "
                f"{out.applied.already} already in place, "
                f"{len(out.applied.changed)} changed meanwhile (left alone), "
                f"{len(out.applied.errors)} error(s).",
                markup=False,
            )
            if out.source_changed:
                console.print(
                    f"note: {out.source_changed} source record(s) changed since the run was planned; "
                    "this run wrote "
                    "what it had planned. Run the import again to bring in the changes.",
                    markup=False,
                )
            elif out.source_changed is None:
                console.print(
                    "note: the source could not be read to check for changes since the run began.",
                    markup=False,
                )
        return 1 if out.applied.errors else 0
    abandoned = service.abandon_run(vault)
    run_id, res = abandoned
    if as_json:
        sys.stdout.write(json.dumps(abandoned.to_json()) + "\n")
    elif res.unreadable:
        console.print(
            f"shardpy import --abandon: the journal of run {run_id} is unreadable, so nothing could be "
            "rolled back; it was set aside and the notes it wrote stay as they are.",
            markup=False,
        )
    else:
        console.print(
            f"shardpy import --abandon: rolled back run {run_id}: {res.removed} note(s) removed, "
            f"{res.restored} restored, {len(res.left)} changed since and left as they are.",
            markup=False,
        )
    return 0
