"""`shardpy update`: resolve the recorded source → values (migrations, new
keys) and modules → render → plan (pure) → decisions → apply in one
transaction → post-update / bootstrap hooks → re-hash."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.apply.session import Session, needs_recovery, session
from shardpy.apply.transaction import Op, RecoveryReport
from shardpy.errors import ShardpyError
from shardpy.flows.base import BaseRenderer
from shardpy.flows.choices import (
    check_module_flags,
    parse_data,
    select_modules,
)
from shardpy.flows.hookflow import hooks_allowed
from shardpy.flows.resolve import prepared
from shardpy.flows.source import Prepared
from shardpy.flows.updatecheck import remember
from shardpy.flows.updatesource import find_vault, source_spec
from shardpy.flows.vaultdisk import VaultDisk
from shardpy.flows.vaultfiles import (
    action_ops,
    cache_ops,
    copier_record,
    now_iso,
    save_state,
    stale_cache_ops,
    state_op,
    values_file_op,
)
from shardpy.fsutil import sha256_file
from shardpy.hooks.lifecycle import run_slots, stale_personalisation, update_slots
from shardpy.hooks.runner import HookResult
from shardpy.plan.actions import ADDED
from shardpy.plan.decide import EDIT, answer, answer_with_edit, open_questions
from shardpy.plan.links import rewrite_links
from shardpy.plan.moves import user_move_actions, user_moves
from shardpy.plan.update import ConflictStyle, FileAction, OnConflict, UpdateInputs, plan_update
from shardpy.shard.migrations import (
    FileMigration,
    check_scope,
    load_file_migrations,
    rename_map,
    select_migrations,
)
from shardpy.shard.produce import Output
from shardpy.shard.values import (
    read_values_file,
    values_are_defaults,
)
from shardpy.sources import ProgressFn
from shardpy.ui import UI
from shardpy.vault import layout
from shardpy.vault.state import State, load_state, local_record, values_hash
from shardpy.versions import is_version


@dataclass
class UpdateOptions:
    cwd: Path = field(default_factory=Path.cwd)
    release: str | None = None
    include_prerelease: bool = False
    yes: bool = False
    on_conflict: OnConflict | None = None
    style: ConflictStyle = "merge"
    add_modules: list[str] = field(default_factory=list)
    remove_modules: list[str] = field(default_factory=list)
    restore_missing: bool = False
    data: list[str] = field(default_factory=list)  # --data KEY=VALUE: answers changed by this update
    dry_run: bool = False
    no_hooks: bool = False
    trust: bool = False


@dataclass
class UpdateResult:
    vault: Path
    shard: str
    from_version: str
    to_version: str
    up_to_date: bool = False
    dry_run: bool = False
    actions: list[FileAction] = field(default_factory=list)
    values_applied: list[str] = field(default_factory=list)
    values_asked: list[str] = field(default_factory=list)
    values_changed: dict[str, dict[str, Any]] = field(default_factory=dict)
    modules_before: dict[str, str] = field(default_factory=dict)
    modules_after: dict[str, str] = field(default_factory=dict)
    migrations: list[str] = field(default_factory=list)
    hooks: list[HookResult] = field(default_factory=list)
    restored_by_hook_guard: list[str] = field(default_factory=list)
    saved_yours: dict[str, str] = field(default_factory=dict)  # path → your version's backup (theirs taken)
    warnings: list[str] = field(default_factory=list)
    recovery: RecoveryReport | None = None
    commit: str | None = None
    values_rewrite: bool = False
    links_before: set[str] = field(default_factory=set)  # paths state recorded as symbolic links

    def changed(self) -> list[FileAction]:
        return [a for a in self.actions if a.outcome.write is not None or a.outcome.delete]

    def conflicts_left(self) -> list[str]:
        """Paths whose conflict this update did not resolve with a side or a
        merge (kept yours, markers written, skipped): the CLI exits 3."""
        if self.dry_run:
            return []
        return [a.path for a in self.actions if a.conflict_left]

    def summary(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for a in self.actions:
            counts[a.action] = counts.get(a.action, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "command": "update",
            "vault": str(self.vault),
            "shard": self.shard,
            "from_version": self.from_version,
            "to_version": self.to_version,
            "commit": self.commit,
            "up_to_date": self.up_to_date,
            "dry_run": self.dry_run,
            "summary": self.summary(),
            "files": [a.to_json() for a in self.actions if a.action != "unchanged"],
            "unchanged": sum(1 for a in self.actions if a.action == "unchanged"),
            "values": {
                "migrated": self.values_applied,
                "asked": self.values_asked,
                "changed": self.values_changed,
            },
            "modules": {"before": self.modules_before, "after": self.modules_after},
            "migrations": self.migrations,
            "hooks": [h.to_json() for h in self.hooks],
            "hook_changes_restored": self.restored_by_hook_guard,
            "saved_yours": self.saved_yours,
            "warnings": self.warnings,
            "recovered": None if self.recovery is None else self.recovery.__dict__,
        }


def _current_values(vault: Path, state: State, warnings: list[str]) -> dict[str, Any]:
    if state.copier is not None:
        from shardpy.flows.copierprep import recorded_answers

        return recorded_answers(vault, state, warnings)
    try:
        return read_values_file(vault / layout.VALUES_FILE, display=layout.VALUES_FILE)
    except ShardpyError as exc:
        if exc.code != "VALUES_FILE_MISSING":
            raise
        warnings.append(
            f"{layout.VALUES_FILE} is missing; using the values recorded at the last install/update."
        )
        return dict(state.values)


def _with_data(prep: Prepared, current: dict[str, Any], opts: UpdateOptions) -> dict[str, Any]:
    """The current values with --data on top (the source kind types them: a copier template
    leaves text, which copier parses by the question's type)."""
    return prep.with_data(current, parse_data(opts.data))


def _values(
    prep: Prepared, state: State, current: dict[str, Any], opts: UpdateOptions, ui: UI, result: UpdateResult
) -> dict[str, Any]:
    answers = prep.update_answers(state, current, data=opts.data, yes=opts.yes, dry_run=opts.dry_run, ui=ui)
    result.values_asked = answers.asked
    result.values_applied = answers.migrated
    result.warnings.extend(answers.warnings)
    return answers.values


def _same_value(a: Any, b: Any) -> bool:
    """True when ``a`` and ``b`` are surely the same value to DeepDiff (same
    types, or numbers of equal value); False means "ask DeepDiff"."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    return isinstance(a, str | bytes | type(None)) and a == b


def value_changes(before: dict[str, Any], after: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per value key, what changed since the last render (old → new)."""
    if _same_value(before, after):
        return {}  # the usual update: no value changed, and deepdiff (~150 ms to import) is not needed
    # DeepDiff compares a mapping key by key: a key added or removed changed, a key whose
    # values are surely the same did not, and only the rest need deepdiff (an update that
    # just adds a value does not import it).
    changed: set[Any] = set(before.keys() ^ after.keys())
    unsure = [k for k in before if k in after and not _same_value(before[k], after[k])]
    if unsure:
        from deepdiff import DeepDiff

        diff = DeepDiff(
            {k: before[k] for k in unsure}, {k: after[k] for k in unsure}, ignore_numeric_type_changes=True
        )
        changed.update(diff.affected_root_keys)
    return {str(key): _change(before, after, key) for key in sorted(changed, key=str)}


def _change(before: dict[str, Any], after: dict[str, Any], key: Any) -> dict[str, Any]:
    """old and new value; ``added`` / ``removed`` when the key is new or gone (its old or
    new value is then no value, not null)."""
    change: dict[str, Any] = {"old": before.get(key), "new": after.get(key)}
    if key not in before:
        change["added"] = True
    if key not in after:
        change["removed"] = True
    return change


def _modules(prep: Prepared, state: State, opts: UpdateOptions, ui: UI) -> dict[str, str]:
    schema = prep.shard.schema
    check_module_flags(schema, opts.remove_modules, flag="--remove-module")
    current = {m: v for m, v in state.modules.items() if m in schema.modules}
    interactive_review = ui.interactive and not opts.yes
    return select_modules(
        schema,
        excluded=opts.remove_modules,
        added=opts.add_modules,
        counts=prep.module_counts(),
        review=interactive_review,
        ui=ui,
        current=current,
    )


def _migrations(
    prep: Prepared, state: State, result: UpdateResult, outputs: Iterable[str]
) -> list[FileMigration]:
    if not is_version(state.version) or state.version == prep.version:
        return []
    chosen = select_migrations(load_file_migrations(prep.shard.migrations_dir), state.version, prep.version)
    check_scope(chosen, set(state.files) | set(outputs))
    result.migrations = [f"{m.version}: {m.description or m.file}" for m in chosen]
    return chosen


def _decide(actions: list[FileAction], opts: UpdateOptions, ui: UI) -> None:
    """Ask the questions the plan left open (interactive, without --yes)."""
    if not ui.interactive or opts.yes:
        return
    for question in open_questions(actions, conflicts_answered=opts.on_conflict is not None):
        if question.show_conflicts:
            ui.show_conflict(question.path, question.conflicts())
        while True:
            choice = ui.choose(question.text, question.choices, default=question.default)
            if choice != EDIT:
                answer(question, choice)
                break
            edited = ui.edit_file(question.path, question.markers())
            if edited is not None:
                answer_with_edit(question, edited)
                break


def _ops(
    vault: Path,
    prep: Prepared,
    actions: list[FileAction],
    state: State,
    values_text_needed: bool,
    values: dict[str, Any],
    links_before: set[str],
) -> list[Op]:
    ops = _link_ops(action_ops(vault, actions), state, links_before)
    if values_text_needed and prep.writes_values_file:
        existing = None
        with contextlib.suppress(FileNotFoundError, UnicodeDecodeError):
            existing = (vault / layout.VALUES_FILE).read_text(encoding="utf-8")
        ops.append(values_file_op(prep.shard, values, existing))
    sources = {rec.template for rec in state.files.values()}
    ops.extend(cache_ops(prep.shard, sources, vault))
    ops.extend(stale_cache_ops(vault, sources))
    ops.append(
        Op.write(layout.UPDATE_CHECK, json.dumps({"checked_at": now_iso(), "latest": prep.version}).encode())
    )
    # The update's time is this machine's fact, not the vault's: state.json stays byte-identical
    # on two machines that ran the same update (docs/GIT.md).
    ops.append(Op.write(layout.LOCAL, local_record(prep.version, now_iso())))
    ops.append(state_op(state))
    return ops


def _link_ops(ops: list[Op], state: State, links_before: set[str]) -> list[Op]:
    """A copier template's symbolic links (recorded ``link`` in state) are made, replaced and
    removed as links, never written through (tests/hardening/test_copier_links.py)."""
    if not links_before and not any(rec.link for rec in state.files.values()):
        return ops
    out: list[Op] = []
    for op in ops:
        rec = state.files.get(op.path)
        if op.kind == "write" and op.data is not None and rec is not None and rec.link:
            out.append(Op.link(op.path, os.fsdecode(op.data)))
        elif op.kind == "write" and op.path in links_before:
            out.extend((Op.drop_link(op.path), op))  # the template turned its link into a file
        elif op.kind == "delete" and op.path in links_before:
            out.append(Op.drop_link(op.path))
        else:
            out.append(op)
    return out


@contextlib.contextmanager
def _maybe_session(vault: Path, dry_run: bool) -> Iterator[Session | None]:
    """A dry run with nothing to recover writes nothing: no lock (status-like speed)."""
    if dry_run and not needs_recovery(vault):
        yield None
        return
    with session(vault, "update") as s:
        yield s


def update(opts: UpdateOptions, ui: UI, *, progress: ProgressFn | None = None) -> UpdateResult:
    vault = find_vault(opts.cwd)
    with _maybe_session(vault, opts.dry_run) as writer:
        recovery = None if writer is None else writer.recovery
        state = load_state(vault)
        result = UpdateResult(
            vault, state.shard, state.version, state.version, dry_run=opts.dry_run, recovery=recovery
        )
        spec = source_spec(state, vault, release=opts.release, include_prerelease=opts.include_prerelease)
        with prepared(spec, include_prerelease=opts.include_prerelease, progress=progress) as prep:
            current = _with_data(prep, _current_values(vault, state, result.warnings), opts)
            prep.begin(vault, "update", trust=opts.trust, no_hooks=opts.no_hooks, recorded=state)
            _check_identity(prep, state)
            result.to_version = prep.version
            result.commit = prep.fetched.resolved.commit
            if _up_to_date(prep, state, current, opts, vault):
                result.up_to_date = True
                remember(vault, prep.version, now_iso())
                return result
            _plan(prep, state, current, opts, ui, result, vault)
            if opts.dry_run:
                remember(vault, prep.version, now_iso())  # status shows it: nothing was written
                return result
            assert writer is not None  # not a dry run: the session is held
            _apply_and_hooks(prep, state, opts, ui, result, writer)
        return result


def _check_identity(prep: Prepared, state: State) -> None:
    if prep.shard.manifest.identity != state.shard:
        raise ShardpyError(
            "UPDATE_SOURCE_CHANGED",
            f"The source now holds {prep.shard.manifest.identity}, but this vault has {state.shard}",
            "The recorded source changed identity; check `source` in .shardmind/state.json.",
        )


def _up_to_date(
    prep: Prepared, state: State, current: dict[str, Any], opts: UpdateOptions, vault: Path
) -> bool:
    same_source = (
        prep.version == state.version
        and prep.fetched.resolved.commit == state.resolved_commit
        and prep.archive_sha256 == state.archive_sha256
    )
    if not same_source or opts.add_modules or opts.remove_modules:
        return False
    if values_hash(current) != state.values_hash:
        return False
    return not (opts.restore_missing and any(sha256_file(vault / p) is None for p in state.files))


def _plan(
    prep: Prepared,
    state: State,
    current: dict[str, Any],
    opts: UpdateOptions,
    ui: UI,
    result: UpdateResult,
    vault: Path,
) -> None:
    values = _values(prep, state, current, opts, ui, result)
    result.values_changed = value_changes(state.values, prep.values_to_record(values))
    stale = stale_personalisation(prep.shard.manifest, result.values_changed)
    if stale is not None:
        result.warnings.append(stale)
    modules = _modules(prep, state, opts, ui)
    result.modules_before, result.modules_after = dict(state.modules), modules
    production = prep.render(values, modules, state.install_date)
    migrations = _migrations(prep, state, result, production.outputs)
    renames = rename_map(state.files, migrations)
    deselected = frozenset(
        m for m, v in state.modules.items() if v == "included" and modules.get(m) != "included"
    )
    disk = VaultDisk(vault, set(state.files) | set(production.outputs))
    base = BaseRenderer.from_vault(vault, state)
    inputs = UpdateInputs(
        old=state.files,
        outputs=production.outputs,
        disk=disk,
        base=base.render,
        content=prep.shard.content,
        shard_label=f"shard {prep.version}",
        renames=renames,
        deselected=deselected,
        on_conflict=opts.on_conflict or "keep",
        style=opts.style,
        restore_missing=opts.restore_missing,
        same_template=lambda old_path, out: _same_template(base, prep, old_path, out),
    )
    actions = plan_update(inputs)
    moves = user_moves(disk, state.files, migrations, production.outputs)
    actions.extend(user_move_actions(disk, moves))
    tracked = set(state.files) | set(production.outputs)
    # Links follow the renames the plan carries out: one it skipped (the new path is the user's
    # own file) pointed the user's links at that unrelated note (a helper's probe,
    # tests/update/test_update_flow.py).
    done = {(a.from_path, a.path) for a in actions if a.from_path}
    carried = {old: new for old, new in renames.items() if (old, new) in done}
    actions = rewrite_links(disk, actions, {**carried, **moves}, tracked)
    _decide(actions, opts, ui)
    result.actions = actions
    result.values_rewrite = values != current or bool(opts.data)  # --data is not in the file yet
    result.links_before = {p for p, rec in state.files.items() if rec.link}
    _new_state(prep, state, prep.values_to_record(values), modules, actions)


def _same_template(base: BaseRenderer, prep: Prepared, old_path: str, out: Output) -> bool:
    """The new shard renders ``out`` from the very template that rendered
    ``old_path`` last time (same source path, same bytes)."""
    rec = base.state.files.get(old_path)
    if rec is None or not out.template or rec.template != out.source:
        return False
    cached = base.template_bytes(old_path)
    try:
        return cached is not None and cached == prep.shard.read(out.source)
    except OSError:
        return False


def _new_state(
    prep: Prepared, state: State, values: dict[str, Any], modules: dict[str, str], actions: list[FileAction]
) -> None:
    """Turn ``state`` into the state after the update (applied last)."""
    files = {a.path: a.outcome.record for a in actions if a.outcome.record is not None}
    state.version = prep.version
    state.resolved_commit = prep.fetched.resolved.commit
    state.archive_sha256 = prep.archive_sha256
    state.values = values
    state.values_hash = values_hash(values)
    state.modules = modules
    state.files = {p: r for p, r in files.items() if r is not None}
    state.copier = copier_record(prep) or state.copier


def _apply_and_hooks(
    prep: Prepared, state: State, opts: UpdateOptions, ui: UI, result: UpdateResult, writer: Session
) -> None:
    vault = writer.vault
    previous = result.from_version
    old_fingerprint = state.hooks.get("bootstrap_fingerprint")
    ops = _ops(vault, prep, result.actions, state, result.values_rewrite, state.values, result.links_before)
    transaction = writer.run(ops, label="update", progress=ui.progress("Updating", len(ops)))
    # A conflict resolved with the shard's side replaced your version: it is in this
    # transaction's backups, and the result says where (tests/hardening/test_theirs_saved.py).
    result.saved_yours = {
        a.path: f"{transaction.backup_dir}/{a.path}"
        for a in result.actions
        if a.action == "conflict" and a.choice == "theirs"
    }
    prep.after_apply(vault, trust=opts.trust, no_hooks=opts.no_hooks, warnings=result.warnings)
    changed = bool(result.changed()) or previous != state.version
    slots = update_slots(prep.shard.manifest, changed=changed, recorded_fingerprint=old_fingerprint)
    if not hooks_allowed(
        prep, slots, no_hooks=opts.no_hooks, trust=opts.trust, ui=ui, warnings=result.warnings
    ):
        return
    new_files = sorted(a.path for a in result.actions if a.action in ADDED)
    removed = sorted(a.path for a in result.actions if a.outcome.delete and a.action != "moved")
    run = run_slots(
        slots,
        shard_root=prep.shard.root,
        vault_root=vault,
        state=state,
        values_are_defaults=values_are_defaults(prep.shard.schema, state.values),
        timeout_ms=prep.shard.manifest.hooks.timeout_ms,
        extra={"previous_version": previous, "new_files": new_files, "removed_files": removed},
        additive_new_files=set(new_files),
    )
    result.hooks = run.results
    result.restored_by_hook_guard = run.restored
    result.warnings.extend(run.guard_warnings())
    bootstrap = prep.shard.manifest.hooks.bootstrap
    if (
        bootstrap is not None
        and bootstrap.fingerprint
        and any(h.slot == "bootstrap" and h.status != "skipped" for h in run.results)
    ):
        state.hooks["bootstrap_fingerprint"] = bootstrap.fingerprint
    save_state(vault, state, command="update")
