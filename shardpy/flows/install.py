"""`shardpy install`: resolve → collect values and modules → render →
plan → (dry run stops) → apply in one transaction → hooks → re-hash."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.apply.destination import install_folder
from shardpy.apply.session import recover_first, session
from shardpy.apply.transaction import Op, RecoveryReport
from shardpy.errors import ShardpyError
from shardpy.flows.choices import select_modules
from shardpy.flows.hookflow import run_first_hooks
from shardpy.flows.resolve import prepared, spec_for
from shardpy.flows.source import Prepared
from shardpy.flows.vaultdisk import DestDisk
from shardpy.flows.vaultfiles import cache_ops, new_state, now_iso, state_op, values_file_op
from shardpy.hooks.lifecycle import install_slots
from shardpy.hooks.runner import HookResult
from shardpy.plan.install import PlannedFile, backup_names, plan_install
from shardpy.plan.records import record_for
from shardpy.shard.produce import Production
from shardpy.shard.values import values_are_defaults
from shardpy.sources import ProgressFn
from shardpy.ui import UI
from shardpy.vault import layout
from shardpy.vault.state import State


@dataclass
class InstallOptions:
    dest: Path
    source: str | None = None
    defaults: bool = False
    values_file: Path | None = None
    data: list[str] = field(default_factory=list)  # --data KEY=VALUE
    yes: bool = False
    exclude: list[str] = field(default_factory=list)
    dry_run: bool = False
    trust: bool = False
    no_hooks: bool = False
    backup: bool = False
    include_prerelease: bool = False
    cwd: Path = field(default_factory=Path.cwd)


@dataclass
class InstallResult:
    dry_run: bool
    shard: str
    version: str
    source: str
    dest: Path
    files: list[PlannedFile]
    skipped: dict[str, list[str]]
    values: dict[str, Any]
    modules: dict[str, str]
    hooks_planned: list[str]
    hooks: list[HookResult] = field(default_factory=list)
    backups: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    recovery: RecoveryReport | None = None
    copier: bool = False  # a copier template: a project, not an Obsidian vault

    def counts(self) -> dict[str, int]:
        return {
            "rendered": sum(1 for f in self.files if f.rendered),
            "copied": sum(1 for f in self.files if not f.rendered),
            "skipped_by_module": sum(len(v) for v in self.skipped.values()),
        }

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "install",
            "dry_run": self.dry_run,
            "shard": self.shard,
            "version": self.version,
            "source": self.source,
            "dest": str(self.dest),
            "counts": self.counts(),
            "values": self.values,
            "modules": self.modules,
            "files": [f.__dict__ for f in self.files],
            "skipped_by_module": self.skipped,
            "backups": self.backups,
            "hooks_planned": self.hooks_planned,
            "hooks": [h.to_json() for h in self.hooks],
            "warnings": self.warnings,
            "recovered": None if self.recovery is None else self.recovery.__dict__,
        }


def _check_dest(dest: Path) -> None:
    if dest.exists() and not dest.is_dir():
        raise ShardpyError(
            "INSTALL_DEST_NOT_DIRECTORY", f"{dest} is not a directory", "Choose a folder for the vault."
        )
    if (dest / layout.STATE).exists():
        raise ShardpyError(
            "VAULT_ALREADY_INSTALLED",
            f"{dest} already holds a shardpy vault",
            "Run `shardpy update` there to upgrade it, or choose an empty folder.",
        )


def _decide_backups(colliding: list[str], opts: InstallOptions, ui: UI) -> None:
    if not colliding:
        return
    listing = ", ".join(colliding[:5]) + (f" and {len(colliding) - 5} more" if len(colliding) > 5 else "")
    if opts.backup:
        return
    if ui.interactive and not (opts.defaults or opts.yes):
        if ui.confirm(
            f"{len(colliding)} existing file(s) would be replaced ({listing}). Back them up and go on?",
            default=False,
        ):
            return
        from shardpy.errors import Cancelled

        raise Cancelled("install cancelled: existing files were left alone")
    raise ShardpyError(
        "INSTALL_COLLISION",
        f"The destination already has {len(colliding)} file(s) the shard would write: {listing}",
        "Pass --backup to move them to <path>.shardpy-backup-<time> first, or choose an empty folder.",
        details={"paths": colliding},
    )


def _ops(
    dest: Path,
    prep: Prepared,
    production: Production,
    colliding: list[str],
    identical: set[str],
    state: State,
    stamp: str,
) -> tuple[list[Op], dict[str, str]]:
    backups = backup_names(colliding, production.outputs, stamp, DestDisk(dest))
    ops: list[Op] = [Op.move(p, b) for p, b in backups.items()]
    ops.extend(
        Op.link(p, os.fsdecode(o.data)) if o.link else Op.write(p, o.data, o.mode)
        for p, o in sorted(production.outputs.items())
        if p not in identical
    )
    if prep.writes_values_file:
        ops.append(values_file_op(prep.shard, state.values, None))
    ops.extend(cache_ops(prep.shard, {o.source for o in production.outputs.values()}))
    ops.append(state_op(state))
    return ops, backups


def install(opts: InstallOptions, ui: UI, *, progress: ProgressFn | None = None) -> InstallResult:
    dest = opts.dest if opts.dest.is_absolute() else (opts.cwd / opts.dest)
    dest = Path(os.path.abspath(dest))
    # An install killed earlier in this folder is undone before anything is
    # planned: the plan must see the folder as the user left it.
    recovery = recover_first(dest, "install")
    _check_dest(dest)
    spec = spec_for(opts.source, cwd=opts.cwd)
    with prepared(spec, include_prerelease=opts.include_prerelease, progress=progress) as prep:
        schema = prep.shard.schema
        use_defaults = opts.defaults or opts.yes
        values = _values(prep, opts, dest, use_defaults, ui)
        modules = select_modules(
            schema, excluded=opts.exclude, counts=prep.module_counts(), review=not use_defaults, ui=ui
        )
        install_date = now_iso()
        production = prep.render(values, modules, install_date)
        plan = plan_install(
            production.outputs,
            DestDisk(dest) if dest.exists() else None,
            classify=prep.shard.content.classify,
            also_written=[layout.VALUES_FILE],
        )
        colliding, identical = plan.colliding, set(plan.identical)
        defaults = values_are_defaults(schema, values)
        slots = install_slots(prep.shard.manifest, values_are_defaults=defaults)
        result = InstallResult(
            dry_run=opts.dry_run,
            shard=prep.shard.manifest.identity,
            version=prep.version,
            source=spec.display() if spec.kind != "bundled" else "(bundled flagship)",
            dest=dest,
            files=plan.files,
            skipped=_skipped(production),
            values=prep.values_to_record(values),
            modules=modules,
            hooks_planned=[] if opts.no_hooks else [s.name for s in slots],
            recovery=recovery,
            copier=prep.makes_project,
        )
        if opts.dry_run:
            return result
        _decide_backups(colliding, opts, ui)
        files = {p: record_for(o, prep.shard.content) for p, o in production.outputs.items()}
        state = new_state(prep, prep.values_to_record(values), modules, install_date, files)
        stamp = install_date.replace(":", "").replace("-", "")
        ops, result.backups = _ops(dest, prep, production, colliding, identical, state, stamp)
        _apply(dest, ops, result, ui)
        result.hooks = run_first_hooks(
            prep,
            dest,
            state,
            values_are_defaults=defaults,
            no_hooks=opts.no_hooks,
            trust=opts.trust,
            ui=ui,
            warnings=result.warnings,
        )
        prep.after_apply(dest, trust=opts.trust, no_hooks=opts.no_hooks, warnings=result.warnings)
        return result


def _values(prep: Prepared, opts: InstallOptions, dest: Path, use_defaults: bool, ui: UI) -> dict[str, Any]:
    """The answers, by the source kind's rules (a shard's schema values, a copier template's
    questions)."""
    prep.begin(dest, "copy", trust=opts.trust, no_hooks=opts.no_hooks)
    return prep.collect(
        values_file=opts.values_file, data=opts.data, last={}, use_defaults=use_defaults, ui=ui
    )


def _skipped(production: Production) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in production.skipped:
        out.setdefault(f.module or "", []).append(f.output)
    return out


def _apply(dest: Path, ops: list[Op], result: InstallResult, ui: UI) -> None:
    with install_folder(dest) as sidecar_existed, session(dest, "install") as s:
        if s.recovery is not None:
            # Another command died here after this install was planned:
            # the plan may be stale, so start again rather than guess.
            raise ShardpyError(
                "INSTALL_RETRY",
                "An interrupted shardpy command in this folder was just rolled back",
                "Nothing was installed; run the same install again.",
            )
        _check_dest(dest)
        s.run(
            ops,
            label="install",
            progress=ui.progress("Installing", len(ops)),
            remove_sidecar_on_rollback=not sidecar_existed,
        )
