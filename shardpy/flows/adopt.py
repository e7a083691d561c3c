"""`shardpy adopt SOURCE`: bring an existing clone under management.

values and modules → render the target → (merge mode) detect the release
the vault came from and plan an update from it → decide per file by mode →
apply in one transaction (backups first) → state, caches, values file →
bootstrap and personalize hooks → re-hash.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from shardpy.apply.session import recover_first
from shardpy.apply.transaction import Op, RecoveryReport
from shardpy.errors import ShardpyError
from shardpy.flows.adoptapply import apply_adopt, refuse_managed
from shardpy.flows.choices import collect_values, load_prefill, parse_data, select_modules
from shardpy.flows.clonetemplates import clone_templates, template_ops
from shardpy.flows.discover import Detected, detect_base
from shardpy.flows.hookflow import run_first_hooks
from shardpy.flows.resolve import prepared
from shardpy.flows.source import Prepared
from shardpy.flows.vaultdisk import VaultDisk
from shardpy.flows.vaultfiles import action_ops, cache_ops, new_state, now_iso, state_op, values_file_op
from shardpy.hooks.runner import HookResult
from shardpy.merge.document import unified_diff
from shardpy.plan.actions import (
    ADDED,
    ADOPT_KEPT,
    ADOPT_REPLACED,
    ADOPT_SHARD_MAY_WIN,
    BOTH_CHANGED,
    DROPPED,
)
from shardpy.plan.adopt import Mode, plan_with_base, plan_without_base, tied
from shardpy.plan.links import rewrite_links
from shardpy.plan.update import FileAction, OnConflict
from shardpy.shard.migrations import check_scope, load_file_migrations, rename_map, select_migrations
from shardpy.shard.values import values_are_defaults
from shardpy.sources import ProgressFn, parse_source
from shardpy.ui import UI
from shardpy.vault.files import user_files
from shardpy.vault.state import State


@dataclass
class AdoptOptions:
    source: str
    dest: Path | None = None
    values_file: Path | None = None
    data: list[str] = field(default_factory=list)  # --data KEY=VALUE
    defaults: bool = False
    yes: bool = False
    mode: Mode | None = None
    from_version: str | None = None
    include_prerelease: bool = False
    on_conflict: OnConflict | None = None
    dry_run: bool = False
    no_hooks: bool = False
    trust: bool = False
    cwd: Path = field(default_factory=Path.cwd)


@dataclass
class AdoptResult:
    vault: Path
    shard: str
    version: str
    mode: str
    dry_run: bool
    actions: list[FileAction] = field(default_factory=list)
    detected: str | None = None
    detected_matched: int = 0
    detected_produced: int = 0
    detection_scores: dict[str, int] = field(default_factory=dict)
    left_alone: int = 0
    hooks: list[HookResult] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    recovery: RecoveryReport | None = None
    templates_rendered: dict[str, str] = field(default_factory=dict)  # clone's template → its rendered path

    def conflicts_left(self) -> list[str]:
        """Paths left in conflict (the rule is update's: FileAction.conflict_left); the CLI exits 3."""
        return [] if self.dry_run else [a.path for a in self.actions if a.conflict_left]

    def summary(self) -> dict[str, int]:
        out = {
            "matched": 0,
            "kept": 0,
            "replaced": 0,
            "merged": 0,
            "conflicted": 0,
            "installed": 0,
            "missing": 0,
        }
        for a in self.actions:
            if a.action == "unchanged":
                out["matched"] += 1
            elif a.action in ADDED:
                out["installed"] += 1
            elif a.action == "missing":
                out["missing"] += 1
            elif a.action == "conflict":
                out["conflicted"] += 1
            elif a.action == "merge":
                out["merged"] += 1
            elif a.outcome.write is not None and a.action in ADOPT_REPLACED:
                out["replaced"] += 1
            elif a.action in ADOPT_KEPT:
                out["kept"] += 1
        out["left_alone"] = self.left_alone
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "adopt",
            "vault": str(self.vault),
            "shard": self.shard,
            "version": self.version,
            "mode": self.mode,
            "dry_run": self.dry_run,
            "detected_version": self.detected,
            "detected_matched": self.detected_matched,
            "detected_produced": self.detected_produced,
            "detection_scores": self.detection_scores,
            "summary": self.summary(),
            "files": [a.to_json() for a in self.actions if a.action != "unchanged"],
            "hooks": [h.to_json() for h in self.hooks],
            "warnings": self.warnings,
            "templates_rendered": self.templates_rendered,
            "recovered": None if self.recovery is None else self.recovery.__dict__,
        }


def _mode(opts: AdoptOptions, ui: UI) -> Mode:
    if opts.mode is not None:
        return opts.mode
    if opts.yes or opts.defaults or not ui.interactive:
        return "keep-mine"
    return "ask"


def adopt(opts: AdoptOptions, ui: UI, *, progress: ProgressFn | None = None) -> AdoptResult:
    vault = Path(os.path.abspath(opts.dest if opts.dest is not None else opts.cwd))
    if not vault.is_dir():
        raise ShardpyError(
            "ADOPT_NOT_A_DIRECTORY", f"{vault} is not a directory", "Run adopt inside your vault."
        )
    recovery = recover_first(vault, "adopt")
    refuse_managed(vault)
    mode = _mode(opts, ui)
    spec = parse_source(opts.source, cwd=opts.cwd)
    with prepared(spec, include_prerelease=opts.include_prerelease, progress=progress) as prep:
        result = AdoptResult(
            vault, prep.shard.manifest.identity, prep.version, mode, opts.dry_run, recovery=recovery
        )
        own = prep.adopt_own(opts, ui, vault, result, progress=progress, prepare=prepared)
        if own is not None:
            return own  # the source kind adopts its own way (a copier project: from its answers)
        values, modules = _answers(prep, opts, ui)
        install_date = now_iso()
        production = prep.render(values, modules, install_date)
        overlay, templates = clone_templates(prep, vault, production, (values, modules, install_date))
        disk = VaultDisk(vault, set(production.outputs), overlay)
        actions = _plan(prep, vault, disk, values, modules, production.outputs, mode, opts, result)
        _decide(actions, mode, opts, ui, disk)
        result.actions = actions
        result.templates_rendered = {templates[p]: p for p in sorted(templates)}
        touched = (
            {a.path for a in actions}
            | {a.from_path for a in actions if a.from_path}
            | set(templates.values())
        )
        result.left_alone = sum(1 for _ in user_files(vault, touched))
        if opts.dry_run:
            return result
        files = {a.path: a.outcome.record for a in actions if a.outcome.record is not None}
        state = new_state(prep, values, modules, install_date, files)
        ops = _ops(prep, vault, actions, state) + template_ops(actions, overlay, templates)
        apply_adopt(vault, ops, ui)
        result.hooks = run_first_hooks(
            prep,
            vault,
            state,
            values_are_defaults=values_are_defaults(prep.shard.schema, values),
            no_hooks=opts.no_hooks,
            trust=opts.trust,
            ui=ui,
            warnings=result.warnings,
            command="adopt",
        )
        return result


def _answers(prep: Prepared, opts: AdoptOptions, ui: UI) -> tuple[dict[str, Any], dict[str, str]]:
    schema = prep.shard.schema
    use_defaults = opts.defaults or opts.yes
    prefill = load_prefill(schema, opts.values_file, parse_data(opts.data))
    values = collect_values(schema, prefill=prefill, ask=None, use_defaults=use_defaults, ui=ui)
    modules = select_modules(schema, excluded=[], counts=prep.module_counts(), review=not use_defaults, ui=ui)
    return values, modules


def _plan(
    prep: Prepared,
    vault: Path,
    disk: VaultDisk,
    values: dict[str, Any],
    modules: dict[str, str],
    outputs: dict[str, Any],
    mode: Mode,
    opts: AdoptOptions,
    result: AdoptResult,
) -> list[FileAction]:
    detected: Detected | None = None
    if mode in ("merge", "ask") or opts.from_version is not None:
        detected = detect_base(
            prep, vault, disk, values, modules, from_version=opts.from_version, warnings=result.warnings
        )
        if detected is None:
            result.warnings.append(
                "No earlier release matched this vault: differing files are decided without a merge base."
            )
    if detected is None:
        return plan_without_base(
            outputs, disk, prep.shard.content, "use-shard" if mode == "use-shard" else "keep-mine"
        )
    result.detected, result.detected_matched, result.detected_produced = (
        detected.version,
        detected.matched,
        detected.produced,
    )
    result.detection_scores = detected.scores
    others = tied(detected.scores, detected.version)
    if others:
        result.warnings.append(
            f"Releases {', '.join([detected.version, *others])} match this vault equally; merging from "
            f"the oldest, {detected.version} (--from-version picks another)."
        )
    migrations = select_migrations(
        load_file_migrations(prep.shard.migrations_dir), detected.version, prep.version
    )
    check_scope(migrations, set(detected.base) | set(outputs))
    renames = rename_map(detected.base, migrations)
    actions = plan_with_base(
        outputs,
        detected.base,
        disk,
        prep.shard.content,
        shard_label=f"shard {prep.version}",
        renames=renames,
        on_conflict=opts.on_conflict or "keep",
    )
    actions = [_for_mode(a, mode) for a in actions]
    if renames:
        tracked = set(outputs) | set(detected.base)
        actions = rewrite_links(disk, actions, renames, tracked)
    return actions


def _for_mode(action: FileAction, mode: Mode) -> FileAction:
    """An update planned from the detected base, seen through the mode."""
    if action.action in DROPPED:
        # Files the shard stopped producing are left alone by adopt.
        return replace(
            action,
            action="left",
            outcomes={"apply": replace(action.outcome, delete=False, record=None)},
            choice="apply",
            question=None,
        )
    if (
        mode == "use-shard"
        and action.action in ADOPT_SHARD_MAY_WIN
        and action.content_class != "user_content"
    ):
        theirs = action.outcomes.get("theirs")
        if theirs is not None:
            return replace(action, choice="theirs")
    if mode == "keep-mine" and action.action in BOTH_CHANGED and "keep" in action.outcomes:
        return replace(action, choice="keep")
    return action


def _decide(actions: list[FileAction], mode: Mode, opts: AdoptOptions, ui: UI, disk: VaultDisk) -> None:
    if mode != "ask" or not ui.interactive or opts.yes:
        return
    for action in actions:
        if action.question is None:
            continue
        choices = [(k, v.label) for k, v in action.outcomes.items()]
        if action.merge is not None and action.merge.has_conflicts:
            ui.show_conflict(action.path, action.merge.describe_conflicts())
        elif "theirs" in action.outcomes and (mine := disk.stored(action.path)) is not None:
            shard = action.outcomes["theirs"].write or b""
            ui.show_conflict(action.path, [unified_diff(mine, shard, old_label="yours", new_label="shard")])
        action.choice = ui.choose(action.question, choices, default=action.choice)


def _ops(prep: Prepared, vault: Path, actions: list[FileAction], state: State) -> list[Op]:
    ops = action_ops(vault, actions)
    ops.append(values_file_op(prep.shard, state.values, None))
    ops.extend(cache_ops(prep.shard, {rec.template for rec in state.files.values()}))
    ops.append(state_op(state))
    return ops
