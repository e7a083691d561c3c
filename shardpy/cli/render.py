"""Human-readable output of flow results.

Tables print through shardpy.cli.table: rich on a terminal; written to a
pipe or a file, plain text columns instead: every cell in full (a log keeps
each path whole, where rich would cut it to the 80-column width it assumes
off a terminal) and hundreds of rows in a few milliseconds instead of
rich's full layout pass.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from shardpy.cli.output import console
from shardpy.cli.output import shown_markup as m  # every name, path and note text put into markup

if TYPE_CHECKING:
    from shardpy.apply.transaction import RecoveryReport
    from shardpy.cli.table import Cell
    from shardpy.flows.adopt import AdoptResult
    from shardpy.flows.install import InstallResult
    from shardpy.flows.status import StatusReport
    from shardpy.flows.update import UpdateResult
    from shardpy.gitsync.report import GitReport
    from shardpy.gitsync.setup import SetupPlan
    from shardpy.hooks.runner import HookResult
    from shardpy.plan.update import FileAction


SHOWN_NOTES = 10  # notes listed per frontmatter rule; the rest are counted


def _on_terminal() -> bool:
    return sys.stdout.isatty()


def _table(
    columns: Sequence[str],
    plain: Sequence[Sequence[str]],
    marked: Sequence[Sequence[Cell]],
    *,
    right: Sequence[str] = (),
    title: str | None = None,
) -> None:
    """A table (shardpy.cli.table): styled from the ``marked`` cells on a terminal,
    else plain text from the ``plain`` cells (the same text without styles)."""
    if not plain:
        return
    from shardpy.cli import table

    con = console()
    # con.file: what rich would write to (a test's capture, a pipe).
    table.show(
        con.file, con, columns, plain, terminal=_on_terminal(), marked=marked, right=right, title=title
    )


def recovery_line(report: RecoveryReport | None) -> None:
    if report is None:
        return
    verb = "Rolled back" if report.action == "rolled-back" else "Completed"
    console().print(
        f"[yellow]{verb} an interrupted {report.label} from {report.started_at} ({report.paths} paths).[/]"
    )
    for path in report.kept:
        console().print(f"  [yellow]kept {path}: changed since the interrupted command wrote it[/]")


def hook_lines(hooks: list[HookResult], *, verbose: bool) -> None:
    con = console()
    for h in hooks:
        colour = {"ok": "green", "skipped": "yellow"}.get(h.status, "red")
        extra = f" — {h.message}" if h.message else ""
        con.print(
            f"  hook [bold]{h.slot}[/] ({h.script}): [{colour}]{h.status}[/]{extra}"
            f" [dim]{h.duration_ms} ms[/]"
        )
        shown = h.stderr.strip() if h.status != "ok" else ""
        if verbose:
            shown = (h.stdout.strip() + "\n" + h.stderr.strip()).strip()
        if shown:
            for line in shown.splitlines()[-20:]:
                con.print(f"    [dim]{line}[/]", markup=True, highlight=False)


def install_result(result: InstallResult, *, verbose: bool) -> None:
    con = console()
    recovery_line(result.recovery)
    if result.dry_run:
        con.print("[bold]Dry run[/]: nothing was written.")
    con.print(f"[bold]{result.shard}[/] {result.version} from {result.source} → {result.dest}")
    groups: dict[str, list[bool]] = {}
    for f in result.files:
        groups.setdefault(f.module or "(unclaimed)", []).append(f.rendered)
    rows = [
        [module, str(sum(flags)), str(len(flags) - sum(flags)), str(len(flags))]
        for module, flags in sorted(groups.items())
    ]
    title = "Files by module" if result.dry_run else None
    _table(
        ["module", "rendered", "copied", "total"],
        rows,
        rows,
        right=("rendered", "copied", "total"),
        title=title,
    )
    if verbose or result.dry_run:
        replace = [f.path for f in result.files if f.action == "replace"]
        if replace:
            con.print(f"Existing files that would be backed up and replaced: {', '.join(replace)}")
    if verbose:
        for f in result.files:
            con.print(
                f"  {f.action:9} {'render' if f.rendered else 'copy  '} {f.path} [dim]({f.content_class})[/]"
            )
    if result.skipped:
        con.print(
            "Skipped by module: "
            + ", ".join(f"{m} ({len(paths)} files)" for m, paths in sorted(result.skipped.items()))
        )
    counts = result.counts()
    if result.dry_run:
        con.print(f"Hooks that would run: {', '.join(result.hooks_planned) or 'none'}")
        return
    con.print(
        f"[green]Installed[/] {counts['rendered'] + counts['copied']} files "
        f"({counts['rendered']} rendered, {counts['copied']} copied, "
        f"{counts['skipped_by_module']} skipped by module)."
    )
    for path, backup in result.backups.items():
        con.print(f"  backed up {path} → {backup}")
    hook_lines(result.hooks, verbose=verbose)
    for w in result.warnings:
        con.print(f"[yellow]warning:[/] {w}")
    if result.copier:  # a project made from a copier template is no Obsidian vault
        con.print(f"Next: work in {result.dest}; `shardpy update` there brings in new template releases.")
    else:
        con.print(f"Next: open {result.dest} in Obsidian; run `shardpy status` there any time.")


def _copier_lines(info: dict[str, Any]) -> None:
    con = console()
    commit = f" @ {info['commit']}" if info.get("commit") else ""
    con.print(f"template: copier {info.get('src_path')}{commit} (answers in {info['answers_file']})")
    answers = info.get("answers") or {}
    con.print("answers: " + (", ".join(f"{k}={v!r}" for k, v in answers.items()) or "none"))


def _value_change(change: dict[str, Any]) -> str:
    if change.get("added"):
        return f"{change['new']!r} (new)"
    if change.get("removed"):
        return f"removed (was {change['old']!r})"
    return f"{change['old']!r} → {change['new']!r}"


def _attention_lines(con: Any, report: StatusReport) -> None:
    """What needs the user: conflicts left in files, import runs left half done."""
    for path in report.conflicts:
        con.print(f"  [red]unresolved conflict[/] {m(path)} (edit out the <<<<<<< / >>>>>>> markers)")
    for run in report.interrupted_imports:
        con.print(
            f"[yellow]import interrupted:[/] run {m(run)}; finish it with `shardpy import --resume` "
            "or roll it back with `shardpy import --abandon`"
        )


def status_report(report: StatusReport) -> None:
    con = console()
    recovery_line(report.recovery)  # also when the recovery undid a first install: no vault is left
    if report.vault is None:
        con.print("Not inside a shardpy vault.")
        con.print("Start one with `shardpy install --defaults DIR` (the bundled flagship shard),")
        con.print(
            "`shardpy install SOURCE DIR` for another shard, or `shardpy adopt SOURCE` in an existing clone."
        )
        return
    if report.error is not None:
        con.print(
            f"[red]Vault at {report.vault} cannot be read[/] [{report.error.code}]: {report.error.message}"
        )
        if report.error.hint:
            con.print(f"  hint: {report.error.hint}")
        return
    _status_summary(con, report)
    _attention_lines(con, report)
    for w in report.warnings:
        con.print(f"[yellow]warning:[/] {m(w)}")
    if report.git is not None:
        git_status(report.git)
    if report.verbose:
        _status_details(con, report)


def _status_summary(con: Any, report: StatusReport) -> None:
    """Shard, source, file counts, values, modules, update and missing files."""
    st = report.state
    assert st is not None
    con.print(f"[bold]{m(st.shard)}[/] {m(st.version)}  [dim]{m(str(report.vault))}[/]")
    ref = f" #{st.ref}" if st.ref else ""
    commit = f" @ {st.resolved_commit[:12]}" if st.resolved_commit else ""
    source = "the flagship shard bundled with shardpy" if st.source_kind == "bundled" else st.source
    # state.json and the update check are the vault's, merged between machines: every value
    # printed through markup is shown as written (tests/hardening/test_names_shown.py).
    con.print(f"source: {m(source + ref + commit)}")
    con.print(f"installed {m(str(st.installed_at))}, updated {m(str(report.updated_at or st.updated_at))}")
    c = report.counts
    con.print(
        f"files: {c['managed']} managed, {c['modified']} modified, "
        f"{c['volatile']} volatile, {c['missing']} missing"
    )
    for cls, counts in sorted(report.by_class.items()):
        con.print(f"  {m(cls)}: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    if report.copier is not None:
        _copier_lines(report.copier)
    elif report.value_problems:
        con.print(f"[red]values: invalid[/] — {m('; '.join(report.value_problems))}")
    else:
        con.print("values: valid")
    included = [mod for mod, v in st.modules.items() if v == "included"]
    excluded = [mod for mod, v in st.modules.items() if v != "included"]
    con.print(
        f"modules: {m(', '.join(included)) or 'none'}"
        + (f" (excluded: {m(', '.join(excluded))})" if excluded else "")
    )
    if report.update and report.update.get("latest") and report.update.get("latest") != st.version:
        con.print(f"[cyan]update available:[/] {m(str(report.update['latest']))} (run `shardpy update`)")
    for path in report.missing:
        con.print(f"  [yellow]missing[/] {m(path)} (restore with `shardpy update --restore-missing`)")


def _status_details(con: Any, report: StatusReport) -> None:
    """What --verbose adds: modified files, user files, frontmatter gaps, environment."""
    for item in report.modified:
        stats = f" +{item['added']} −{item['removed']}" if "added" in item else ""
        if item.get("conflict"):
            stats = " (unresolved conflict)"
        con.print(f"  [magenta]modified[/] {m(item['path'])}{stats}")
    con.print(f"user files: {report.user_files}")
    for kind, notes in sorted(report.frontmatter.items()):
        con.print(f"frontmatter ({kind}): {len(notes)} note(s) missing required keys")
        for note in notes[:SHOWN_NOTES]:
            con.print(f"    {m(note['path'])}: {m(', '.join(note['missing']))}")
        if len(notes) > SHOWN_NOTES:
            con.print(
                f"    … and {len(notes) - SHOWN_NOTES} more (`shardpy status --verbose --json` lists all)"
            )
    env = report.environment
    con.print(f"environment: python {env.get('python')}, {env.get('git')}, node {env.get('node')}")


def git_setup_result(plan: SetupPlan) -> None:
    con = console()
    if not plan.changed:
        con.print(f"git: {plan.vault} is already set up; nothing changed.")
        return
    verb = "would change" if plan.dry_run else "changed"
    con.print(f"git setup {verb} ({plan.repository}):")
    for change in plan.changes:
        con.print(f"  {change.detail}")
    if plan.dry_run:
        con.print("dry run: nothing was written.")


def git_status(g: GitReport) -> None:
    """The git vault's lines of `status` (shardpy.gitsync.report)."""
    from shardpy.gitsync.report import SETUP_HINT  # only status needs it (install and update load less)

    con = console()
    if g.installed:
        con.print("git: merge driver installed")
    elif g.driver_unsafe:
        con.print(f"[yellow]git: {g.hint()}[/] (registered: {m(g.driver or '')})")  # any text, as written
    elif g.driver_program_missing:
        con.print(f"[yellow]git: the merge driver's program is gone[/] ({m(g.driver or '')}); {SETUP_HINT}")
    else:
        con.print(f"[yellow]git: merge driver not installed[/] — {SETUP_HINT}")
    for r in g.routes:
        runs = f"runs `{r.command}`" if r.command is not None else "not configured here: git's text merge"
        where = m(f"{r.file}:{r.line} sends files to merge={r.driver}")  # pulled text, as written
        con.print(f"[yellow]git: {where}[/] ({m(runs)}), not shardpy's driver")
    if g.problem:
        con.print(f"[yellow]git: {m(g.problem)}[/]")
    for path in g.unmerged:
        con.print(f"  [bold red]unmerged[/] {m(path)} (resolve it, then `git add {m(path)}`)")
    for path in g.markers:
        if path not in g.unmerged:
            con.print(f"  [bold red]conflict markers[/] {m(path)} (edit the note to resolve them)")
    from shardpy.gitsync.report import show_command

    for k in g.kept:
        other = m(show_command(k.commit, k.in_repository))
        con.print(
            f"  [bold yellow]kept this machine's[/] {m(k.path)} (both machines changed it and no "
            f"merge of the two is valid; the other's: `{other}`)"
        )
    for rem in g.remotes:  # shardpy sync's records (docs/GIT.md)
        counts = "not fetched" if rem.ahead is None else f"{rem.ahead} ahead, {rem.behind} behind"
        last = f"last sync {rem.last_ok}" if rem.last_ok else "never synced"
        error = f"; [yellow]last error {m(rem.last_error)}[/]" if rem.last_error else ""
        con.print(f"git: remote {m(rem.name)}: {counts}; {last}{error}")


def _action_table(actions: list[FileAction], *, verbose: bool) -> None:
    from shardpy.cli import table

    plain: list[list[str]] = []
    marked: list[list[Cell]] = []
    for a in actions:
        if a.action == "unchanged" and not verbose:
            continue
        decided = a.question is not None and a.outcome.label not in ("apply", "merge")
        details = f"{a.reason} → {a.outcome.label}" if decided else a.reason
        extras: list[str] = []  # dimmed on a terminal
        stats = a.stats()
        if stats is not None:
            extras.append(
                f"(unchanged {stats['unchanged']}, merged {stats['auto_merged']}, "
                f"conflicted {stats['conflicted']}, both added {stats['both_added']})"
            )
        if a.from_path:
            extras.append(f"(from {a.from_path})")
        if a.links_rewritten:
            extras.append(f"({a.links_rewritten} link(s) rewritten)")
        plain.append([a.action, a.path, a.content_class, "".join([details, *(f" {e}" for e in extras)])])
        dimmed = tuple((f" {e}", "dim") for e in extras)
        marked.append([table.action_cell(a), a.path, a.content_class, ((details, ""), *dimmed)])
    _table(["action", "path", "class", "details"], plain, marked)


def adopt_result(result: AdoptResult, *, verbose: bool) -> None:
    con = console()
    recovery_line(result.recovery)
    if result.dry_run:
        con.print("[bold]Dry run[/]: nothing was written.")
    con.print(f"[bold]{result.shard}[/] {result.version} adopting {result.vault} (mode {result.mode})")
    if result.detected:
        con.print(
            f"detected base: {result.detected} "
            f"({result.detected_matched} of {result.detected_produced} files identical)"
        )
    _action_table(result.actions, verbose=verbose)
    s = result.summary()
    con.print(
        f"summary: {s['matched']} matched, {s['kept']} kept, {s['replaced']} replaced, {s['merged']} merged, "
        f"{s['conflicted']} conflicted, {s['installed']} installed fresh, {s['missing']} left deleted, "
        f"{s['left_alone']} left as your files"
    )
    hook_lines(result.hooks, verbose=verbose)
    for w in result.warnings:
        con.print(f"[yellow]warning:[/] {w}")


def update_result(result: UpdateResult, *, verbose: bool) -> None:
    con = console()
    recovery_line(result.recovery)
    if result.up_to_date:
        con.print(f"[green]Up to date[/]: {result.shard} {result.to_version}.")
        return
    if result.dry_run:
        con.print("[bold]Dry run[/]: nothing was written.")
    con.print(f"[bold]{result.shard}[/] {result.from_version} → {result.to_version}")
    for line in result.migrations:
        con.print(f"  migration {line}")
    for line in result.values_applied:
        con.print(f"  values: {line}")
    if result.values_asked:
        con.print(f"  new values: {', '.join(result.values_asked)}")
    for key, change in result.values_changed.items():
        con.print(f"  value {key}: {_value_change(change)}")
    added = [
        m
        for m, v in result.modules_after.items()
        if v == "included" and result.modules_before.get(m) != "included"
    ]
    removed = [
        m
        for m, v in result.modules_before.items()
        if v == "included" and result.modules_after.get(m) != "included"
    ]
    if added or removed:
        con.print(f"  modules: +{', +'.join(added) or '0'}  -{', -'.join(removed) or '0'}")
    _action_table(result.actions, verbose=verbose)
    counts = result.summary()
    con.print("summary: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    conflicts = [a for a in result.actions if a.action == "conflict"]
    for a in conflicts:
        con.print(f"[red]conflict[/] {a.path}: {a.outcome.label}")
        if a.path in result.saved_yours:
            con.print(f"  your version is saved as {result.saved_yours[a.path]}")
    both = [a for a in result.actions if a.merge is not None and a.merge.both_added]
    for a in both:
        assert a.merge is not None
        con.print(
            f"[cyan]both added here[/] {a.path}: {len(a.merge.both_added)} place(s), shard's lines first"
        )
    hook_lines(result.hooks, verbose=verbose)
    for w in result.warnings:
        con.print(f"[yellow]warning:[/] {w}")
