"""``shardpy sync``: commit, fetch, merge through the driver, push (docs/GIT.md, "shardpy sync").

Forms (one Typer command; the first word picks the action):

* ``shardpy sync [VAULT] [--remote NAME]... [--no-push] [--dry-run] [--json] [--yes]``
* ``shardpy sync [VAULT] --watch [--interval S]`` and ``--print-unit systemd|launchd``
* ``shardpy sync add-remote NAME URL`` / ``remove-remote NAME`` / ``init-seed PATH``

This module parses and prints; :mod:`shardpy.sync` decides and does.
"""

# an option table's cells are calls by design: each returns a shardpy.record.field()
# No `from __future__ import annotations`: Typer reads the parameters' annotations of the
# commands declared inside register(), where `typer` is a local name.
import math
import sys
from pathlib import Path

from shardpy.cli import options as o
from shardpy.cli.output import shown
from shardpy.errors import ShardpyError, UsageError

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any

    from shardpy.plan.sync import SyncPlan
    from shardpy.sync.round import RemoteResult, SyncReport

ACTIONS = {"add-remote": 2, "remove-remote": 1, "init-seed": 1}
DEFAULT_INTERVAL_S = 300.0


# sync's option table (shardpy/cli/options.py, issue 27): the Typer command, the plain parser
# (the watcher and scripts run sync often; Typer's start-up is most of a quiet round) and
# plan_sync's options are all derived from it; the docstring is the command's help.
class SyncArgs(o.Args):
    """Commit the vault's changes, fetch and merge every remote through shardpy's driver, push."""

    words: list[str] = o.arguments(
        "[VAULT], or: add-remote NAME URL | remove-remote NAME | init-seed PATH.",
        metavar="[VAULT | ACTION ARGS...]",
    )
    # `remote`, not `remotes`: the field's name is the value's name in help (--remote REMOTE)
    remote: list[str] = o.many("--remote", help="Sync with this remote only (repeatable).", flow="remotes")
    push: bool = o.off_flag("--no-push", help="Commit, fetch and merge; push nothing.")
    dry_run: bool = o.flag("--dry-run", help="Show what a round would do; change nothing.")
    as_json: bool = o.as_json()
    yes: bool = o.flag("--yes", "-y", help="Run `git setup` first without asking when needed.", flow=None)
    watch: bool = o.flag("--watch", help="Keep syncing: every interval and after changes.", flow=None)
    interval: float = o.value(
        "--interval",
        help="Seconds between rounds with --watch.",
        default=DEFAULT_INTERVAL_S,
        minimum=1.0,
        flow=None,
    )
    print_unit: str | None = o.value(
        "--print-unit", help="Print a service unit for --watch: systemd or launchd.", flow=None
    )
    status: bool = o.flag("--status", help="Each remote: ahead/behind, last sync, last error.", flow=None)


def _plan(args: SyncArgs, vault: Path) -> "SyncPlan":
    """plan_sync over the table's flow options (remotes, push, dry_run)."""
    from shardpy.sync.plan import plan_sync

    return o.flow_options(args, plan_sync, vault=vault)


def _vault(word: str | None) -> Path:
    # layout decides what a vault is; flows.updatesource.find_vault says the same, but importing
    # it loads the shard sources (pydantic): most of a quiet sync round's start-up.
    from shardpy.vault.layout import find_vault_root

    start = Path(word) if word else Path.cwd()
    vault = find_vault_root(start)
    if vault is None:
        raise ShardpyError(
            "VAULT_NOT_FOUND",
            f"{start} is not inside a shardpy vault",
            "Run this inside a vault made by `shardpy install` (or `shardpy adopt` an existing clone).",
        )
    return vault


def _emit(data: "dict[str, Any]", text: str, as_json: bool) -> None:
    from shardpy.cli.output import print_json

    if as_json:
        print_json(data)
    else:
        # Each line as it can be printed: a name's control characters shown, never sent raw to the
        # terminal (tests/hardening/test_names_shown.py; paths are shown() where they are put in).
        print("\n".join(shown(line) for line in text.split("\n")))


def _action(args: SyncArgs) -> None:
    from shardpy.sync import remotes

    verb, rest = args.words[0], args.words[1:]
    if len(rest) != ACTIONS[verb]:
        raise UsageError(f"sync {verb} takes {ACTIONS[verb]} argument(s)", "See `shardpy sync --help`.")
    if verb == "init-seed":
        out = remotes.init_seed(Path(rest[0]), **_repository_here())
        text = f"{'Created' if out['changed'] else 'Already a seed:'} {out['seed']}"
        text += f"\nAdd it on each machine: shardpy sync add-remote seed {out['seed']}"
    elif verb == "add-remote":
        out = remotes.add_remote(_vault(None), rest[0], rest[1])
        text = f"{'Added' if out['changed'] else 'Already set:'} remote {rest[0]} → {rest[1]}"
    else:
        out = remotes.remove_remote(_vault(None), rest[0])
        text = f"Removed remote {rest[0]}"
    _emit(out, text, args.as_json)


def _ensure_setup(vault: Path, yes: bool) -> None:
    """Run ``git setup`` (the plan found it needed): with --yes or a yes at the prompt."""
    from shardpy.gitsync.setup import setup

    if not yes:
        if not sys.stdin.isatty():
            raise ShardpyError(
                "SYNC_SETUP_NEEDED",
                "This vault's repository does not merge with shardpy yet",
                "Run `shardpy git setup` (or `shardpy sync --yes`, which runs it first).",
            )
        import typer

        if not typer.confirm(
            "This vault is not set up for shardpy's git merges. Run `shardpy git setup` now?"
        ):
            raise ShardpyError("SYNC_SETUP_NEEDED", "Not set up; nothing synced", "Run `shardpy git setup`.")
    setup(vault)


def _repository_here() -> dict[str, str]:
    """The branch and object format of the repository this command runs in (a seed made here
    takes both: a clone of it checks the branch out, and git cannot sync a sha256 vault with a
    sha1 seed), else main and sha1."""
    from shardpy.gitsync.repo import object_format, open_repo
    from shardpy.sync.plan import current_branch

    try:
        repo = open_repo(Path.cwd())
        branch = current_branch(repo)
    except ShardpyError:
        return {"branch": "main", "object_format": "sha1"}
    return {"branch": branch, "object_format": object_format(repo)}


def _hints(report: "SyncReport") -> str:
    """A one-shot round's fix for each remote that failed (the watcher logs the summary alone)."""
    hints = dict.fromkeys(r.hint for r in report.remotes if r.status == "error" and r.hint)
    return "".join(f"\n  hint: {h}" for h in hints)


def _remote_line(r: "RemoteResult") -> str:
    did = [w for w, on in (("merged", r.merged), ("pushed", r.pushed)) if on] or ["up to date"]
    line = f"{r.name}: {'+'.join(did)}"
    marked = [c for c in r.conflicts if c not in r.kept]
    if marked:
        line += f", conflict markers in {_names(marked)}"
    if r.kept:
        # No markers to find in these: said, and listed by `status` until the file changes again.
        line += (
            ", both machines changed and this one's kept whole (the other's is the merge's second "
            f"parent): {_names(r.kept)}"
        )
    if r.notice:
        line += f"; notice: {r.notice}"
    if r.resurrected:
        line += f", purged elsewhere but edited here (kept, still disabled): {_names(r.resurrected)}"
    if r.error:
        code = f"[{r.code}] " if r.code else ""
        line = f"{r.name}: {r.status}: {code}{r.error}"
    return line


def _names(paths: list[str]) -> str:
    return ", ".join(shown(p) for p in paths)


def summary(report: "SyncReport") -> str:
    """One line for a round (the watcher logs it as is)."""
    parts = []
    if report.recovered:
        parts.append("recovered: " + "; ".join(report.recovered))
    if report.commit:
        parts.append(f"committed {len(report.committed)} path(s) ({report.commit[:8]})")
    if report.nested:
        parts.append(f"not synced (a git repository of its own): {_names(report.nested)}")
    if report.unreadable:
        parts.append(f"not synced (not readable by this account): {_names(report.unreadable)}")
    if report.unstamped:
        parts.append(f"not stamped (a name shardpy never writes): {_names(report.unstamped)}")
    parts += [_remote_line(r) for r in report.remotes]
    if not report.plan.remotes:
        parts.append("no remotes (add one: shardpy sync add-remote NAME URL)")
    if report.stopped:
        parts.append("stopped")
    return "sync: " + ("; ".join(parts) or "nothing to do")


def _round(args: SyncArgs, vault: Path) -> "SyncReport":
    from shardpy.sync.round import run_round

    plan = _plan(args, vault)
    if plan.setup_needed:
        _ensure_setup(vault, args.yes)
        plan = _plan(args, vault)
    try:
        return run_round(plan)
    except KeyboardInterrupt:
        raise KeyboardInterrupt(_interrupted(plan)) from None


def _interrupted(plan: "SyncPlan") -> str:
    """Ctrl-C stopped a round: its unfinished merge undone now, and what that means, said plainly
    (not "every change was rolled back": a commit made is kept; tests/sync/test_faults.py)."""
    from shardpy.sync.round import undo_interrupted

    try:
        undone = undo_interrupted(plan)
    except (ShardpyError, KeyboardInterrupt):
        return "Interrupted. What the round left unfinished is undone by the next sync, before it goes on."
    did = "; ".join(undone) + ". " if undone else ""
    kept = "What was committed is kept; the next sync goes on from there."
    return f"Interrupted. {did[:1].upper() + did[1:]}{kept}"


def _watch(args: SyncArgs, vault: Path) -> None:
    from shardpy.sync.records import now
    from shardpy.sync.watch import Stopper, watch

    stopper = Stopper()
    stopper.install()

    def once() -> str:
        from shardpy.sync.round import run_round

        try:
            line = summary(run_round(_plan(args, vault), stop=stopper))
        except ShardpyError as exc:
            line = f"sync: failed: [{exc.code}] {exc.message}"
        return f"{now()} {line}"

    def log(line: str) -> None:
        print(shown(line), flush=True)

    watch(vault, once, interval=args.interval, stop=stopper, log=log)
    print(f"{now()} sync: watcher stopped", flush=True)


def run_sync(args: SyncArgs) -> int | None:
    """The command; 1 when a remote's part of the round ended in error (its report says which and
    why: a full disk, a push rejected every time). An unreachable remote is not a failure: a
    machine offline syncs later (tests/sync/test_full_disk.py)."""
    if args.words and args.words[0] in ACTIONS:
        _action(args)
        return None
    if len(args.words) > 1:
        raise UsageError(f"Unexpected argument {args.words[1]!r}", "shardpy sync [VAULT] [options]")
    vault = _vault(args.words[0] if args.words else None)
    if args.status:
        _status(vault, args.as_json)
        return None
    if args.print_unit is not None:
        from shardpy.sync.watch import unit_text

        print(unit_text(args.print_unit, vault, args.interval), end="")
        return None
    if args.dry_run:
        plan = _plan(args, vault)
        _emit(plan.to_json(), _plan_text(plan.to_json()), args.as_json)
        return None
    if args.watch:
        if _plan(args, vault).setup_needed:
            _ensure_setup(vault, args.yes)
        _watch(args, vault)
        return None
    report = _round(args, vault)
    _emit(report.to_json(), summary(report) + _hints(report), args.as_json)
    return 1 if any(r.status == "error" for r in report.remotes) else None


def _plan_text(plan: "dict[str, Any]") -> str:
    lines = [
        f"Would commit {len(plan['changes'])} path(s)"
        + (": " + _names(plan["changes"][:10]) if plan["changes"] else "")
    ]
    if plan["setup_needed"]:
        lines.append("Would run `shardpy git setup` first (asks, or --yes)")
    for name, ab in plan["ahead_behind"].items():
        state = (
            "not fetched yet"
            if ab is None
            else f"{ab['ahead']} ahead, {ab['behind']} behind (as last fetched)"
        )
        lines.append(f"{name}: fetch, merge, {'push' if plan['push'] else 'no push'}; {state}")
    return "\n".join(lines)


def plain_args(argv: list[str]) -> SyncArgs | None:
    """The arguments of a plain ``sync`` without Typer (options.parse_plain), else None: Typer's."""
    return o.parse_plain(SyncArgs, argv)


def _sync_body(args: SyncArgs) -> None:
    from shardpy.cli.output import guarded

    guarded(lambda: run_sync(args), as_json=args.as_json)


def register(app: "Any") -> None:
    """Declare ``sync``, ``rm``, ``restore``, ``purge`` for Typer (imported only when Typer runs)."""
    from typing import Annotated

    import typer

    app.command("sync")(o.typer_command(SyncArgs, _sync_body, name="sync"))

    def rm_command(
        note: Annotated[str, typer.Argument(help="The note (its path, with .md).")],
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    ) -> None:
        """Soft-delete a note: `disabled: true` (restore it with `shardpy restore`)."""
        _toggle(note, disabled=True, as_json=as_json)

    def restore_command(
        note: Annotated[str, typer.Argument(help="The note (its path, with .md).")],
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    ) -> None:
        """Undo `shardpy rm`: the note is no longer disabled."""
        _toggle(note, disabled=False, as_json=as_json)

    def purge_command(
        older_than: Annotated[
            float, typer.Option("--older-than", help="Days a note has been disabled.", min=0.0)
        ],
        dry_run: Annotated[bool, typer.Option("--dry-run", help="List them; delete nothing.")] = False,
        as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
    ) -> None:
        """Delete for good the notes disabled longer than --older-than days (one commit records it)."""
        from shardpy.cli.output import guarded

        guarded(lambda: _purge(older_than, dry_run, as_json), as_json=as_json)

    app.command("rm")(rm_command)
    app.command("restore")(restore_command)
    app.command("purge")(purge_command)


def _toggle(note: str, *, disabled: bool, as_json: bool) -> None:
    from shardpy.cli.output import guarded
    from shardpy.sync.deletes import set_disabled

    def run() -> None:
        out = set_disabled(_vault(None), note, disabled)
        verb = "disabled" if disabled else "restored"
        _emit(out, f"{shown(out['note'])}: {verb if out['changed'] else 'already ' + verb}", as_json)

    guarded(run, as_json=as_json)


def _purge(days: float, dry_run: bool, as_json: bool) -> None:
    from shardpy.gitsync.repo import open_repo
    from shardpy.sync.deletes import plan_purge, purge
    from shardpy.sync.records import machine_id

    if not math.isfinite(days):  # Typer's minimum lets `inf` through; it is no number of days
        raise UsageError(f"--older-than takes a number of days, not {days}", "For example: --older-than 30")
    vault = _vault(None)
    plan = plan_purge(vault, days)
    commit = None if dry_run else purge(plan, machine_id(open_repo(vault)))
    verb = "Would delete" if dry_run else "Deleted"
    text = f"{verb} {len(plan.notes)} note(s)" + "".join(f"\n  {shown(n)}" for n in plan.notes)
    _emit({**plan.to_json(), "dry_run": dry_run, "commit": commit}, text, as_json)


def _status(vault: Path, as_json: bool) -> None:
    """``sync --status``: the sync part of ``shardpy status`` (one owner: gitsync.report)."""
    from shardpy.gitsync.report import git_report

    report = git_report(vault)
    data = report.to_json() if report is not None else {}
    remotes = data.get("sync", {}).get("remotes", [])
    lines = [
        f"{r['name']}: "
        + ("not fetched" if r["ahead"] is None else f"{r['ahead']} ahead, {r['behind']} behind")
        + f"; last sync {r['last_ok'] or 'never'}"
        + (f"; last error {r['last_error']}" if r["last_error"] else "")
        for r in remotes
    ]
    lines += [f"conflict markers: {shown(p)}" for p in data.get("conflict_markers", [])]
    kept = data.get("kept_whole", [])
    from shardpy.gitsync.report import show_command

    lines += [
        f"kept this machine's whole: {shown(k['path'])} (the other's: "
        f"{shown(show_command(k['commit'], k['in_repository']))})"  # the path is another machine's
        for k in kept
    ]
    out = {"remotes": remotes, "conflict_markers": data.get("conflict_markers", []), "kept_whole": kept}
    _emit(out, "\n".join(lines) or "no remotes", as_json)
