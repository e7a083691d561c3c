"""Human-readable output of flow results (tables via rich)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.table import Table

from shardpy.cli.output import console

if TYPE_CHECKING:
    from shardpy.apply.transaction import RecoveryReport
    from shardpy.flows.adopt import AdoptResult
    from shardpy.flows.install import InstallResult
    from shardpy.flows.status import StatusReport
    from shardpy.flows.update import UpdateResult
    from shardpy.hooks.runner import HookResult
    from shardpy.plan.update import FileAction


def recovery_line(report: RecoveryReport | None) -> None:
    if report is None:
        return
    verb = "Rolled back" if report.action == "rolled-back" else "Completed"
    console().print(
        f"[yellow]{verb} an interrupted {report.label} from {report.started_at} ({report.paths} paths).[/]"
    )


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
    table = Table(title="Files by module" if result.dry_run else None, show_edge=False)
    for col in ("module", "rendered", "copied", "total"):
        table.add_column(col, justify="left" if col == "module" else "right")
    groups: dict[str, list[bool]] = {}
    for f in result.files:
        groups.setdefault(f.module or "(unclaimed)", []).append(f.rendered)
    for module, flags in sorted(groups.items()):
        table.add_row(module, str(sum(flags)), str(len(flags) - sum(flags)), str(len(flags)))
    con.print(table)
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
    con.print(f"Next: open {result.dest} in Obsidian; run `shardpy status` there any time.")


def _value_change(change: dict[str, Any]) -> str:
    if change.get("added"):
        return f"{change['new']!r} (new)"
    if change.get("removed"):
        return f"removed (was {change['old']!r})"
    return f"{change['old']!r} → {change['new']!r}"


def _attention_lines(con: Any, report: StatusReport) -> None:
    """What needs the user: conflicts left in files, import runs left half done."""
    for path in report.conflicts:
        con.print(f"  [red]unresolved conflict[/] {path} (edit out the <<<<<<< / >>>>>>> markers)")
    for run in report.interrupted_imports:
        con.print(
            f"[yellow]import interrupted:[/] run {run}; finish it with `shardpy import --resume` "
            "or roll it back with `shardpy import --abandon`"
        )


def status_report(report: StatusReport) -> None:
    con = console()
    if report.vault is None:
        con.print("Not inside a shardpy vault.")
        con.print("Start one with `shardpy install --defaults DIR` (the bundled flagship shard),")
        con.print(
            "`shardpy install SOURCE DIR` for another shard, or `shardpy adopt SOURCE` in an existing clone."
        )
        return
    recovery_line(report.recovery)
    if report.error is not None:
        con.print(
            f"[red]Vault at {report.vault} cannot be read[/] [{report.error.code}]: {report.error.message}"
        )
        if report.error.hint:
            con.print(f"  hint: {report.error.hint}")
        return
    st = report.state
    assert st is not None
    con.print(f"[bold]{st.shard}[/] {st.version}  [dim]{report.vault}[/]")
    ref = f" #{st.ref}" if st.ref else ""
    commit = f" @ {st.resolved_commit[:12]}" if st.resolved_commit else ""
    source = "the flagship shard bundled with shardpy" if st.source_kind == "bundled" else st.source
    con.print(f"source: {source}{ref}{commit}")
    con.print(f"installed {st.installed_at}, updated {st.updated_at}")
    c = report.counts
    con.print(
        f"files: {c['managed']} managed, {c['modified']} modified, "
        f"{c['volatile']} volatile, {c['missing']} missing"
    )
    for cls, counts in sorted(report.by_class.items()):
        con.print(f"  {cls}: " + ", ".join(f"{v} {k}" for k, v in counts.items() if v))
    if report.value_problems:
        con.print(f"[red]values: invalid[/] — {'; '.join(report.value_problems)}")
    else:
        con.print("values: valid")
    included = [m for m, v in st.modules.items() if v == "included"]
    excluded = [m for m, v in st.modules.items() if v != "included"]
    con.print(
        f"modules: {', '.join(included) or 'none'}"
        + (f" (excluded: {', '.join(excluded)})" if excluded else "")
    )
    if report.update and report.update.get("latest") and report.update.get("latest") != st.version:
        con.print(f"[cyan]update available:[/] {report.update['latest']} (run `shardpy update`)")
    for path in report.missing:
        con.print(f"  [yellow]missing[/] {path} (restore with `shardpy update --restore-missing`)")
    _attention_lines(con, report)
    for w in report.warnings:
        con.print(f"[yellow]warning:[/] {w}")
    if not report.verbose:
        return
    for item in report.modified:
        stats = f" +{item['added']} −{item['removed']}" if "added" in item else ""
        if item.get("conflict"):
            stats = " (unresolved conflict)"
        con.print(f"  [magenta]modified[/] {item['path']}{stats}")
    con.print(f"user files: {report.user_files}")
    for kind, notes in sorted(report.frontmatter.items()):
        con.print(f"frontmatter ({kind}): {len(notes)} note(s) missing required keys")
        for note in notes[:10]:
            con.print(f"    {note['path']}: {', '.join(note['missing'])}")
    env = report.environment
    con.print(f"environment: python {env.get('python')}, {env.get('git')}, node {env.get('node')}")


_ACTION_STYLE = {
    "add": "green",
    "update": "cyan",
    "merge": "cyan",
    "conflict": "bold red",
    "delete": "red",
    "orphan": "yellow",
    "keep": "magenta",
    "missing": "yellow",
    "restore": "green",
    "links": "blue",
    "move": "blue",
    "moved": "blue",
}


def _action_table(actions: list[FileAction], *, verbose: bool) -> None:
    table = Table(show_edge=False)
    for col in ("action", "path", "class", "details"):
        table.add_column(col)
    for a in actions:
        if a.action == "unchanged" and not verbose:
            continue
        decided = a.question is not None and a.outcome.label not in ("apply", "merge")
        details = f"{a.reason} → {a.outcome.label}" if decided else a.reason
        stats = a.stats()
        if stats is not None:
            details += (
                f" [dim](unchanged {stats['unchanged']}, merged {stats['auto_merged']}, "
                f"conflicted {stats['conflicted']}, both added {stats['both_added']})[/]"
            )
        if a.from_path:
            details += f" [dim](from {a.from_path})[/]"
        if a.links_rewritten:
            details += f" [dim]({a.links_rewritten} link(s) rewritten)[/]"
        style = _ACTION_STYLE.get(a.action, "")
        table.add_row(f"[{style}]{a.action}[/]" if style else a.action, a.path, a.content_class, details)
    if table.row_count:
        console().print(table)


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
    both = [a for a in result.actions if a.merge is not None and a.merge.both_added]
    for a in both:
        assert a.merge is not None
        con.print(
            f"[cyan]both added here[/] {a.path}: {len(a.merge.both_added)} place(s), shard's lines first"
        )
    hook_lines(result.hooks, verbose=verbose)
    for w in result.warnings:
        con.print(f"[yellow]warning:[/] {w}")
