"""Collecting values and module selections (install, update, adopt)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.shard.schema import Schema, ValueDef
from shardpy.shard.values import (
    VALUES_FILE,
    check_value,
    computed_default,
    read_values_file,
    refuse_unknown,
    resolve_defaults,
    validate_values,
)
from shardpy.ui import UI, ModuleChoice


def parse_data(pairs: list[str]) -> dict[str, str]:
    """``--data KEY=VALUE`` (repeatable) as raw text per key; the last one wins."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ShardpyError(
                "DATA_INVALID",
                f"--data {pair!r} is not KEY=VALUE",
                "Write each answer as --data name=value (repeat --data for more).",
                details={"pair": pair},
            )
        out[key] = value
    return out


def data_values(schema: Schema, data: Mapping[str, str]) -> dict[str, Any]:
    """``--data`` answers typed as YAML scalars (as copier reads them), except
    that a text value stays the text typed (``--data zip=01234``)."""
    from shardpy.shard.yamlio import parse_yaml_text, to_plain

    # install, adopt and update alike: an answer to no question is refused, never
    # dropped with a warning (tests/hardening/test_data_keys.py).
    refuse_unknown(schema, data)
    out: dict[str, Any] = {}
    for key, text in data.items():
        vdef = schema.values.get(key)
        if vdef is not None and vdef.type == "string":
            out[key] = text
            continue
        parsed = to_plain(parse_yaml_text(text, display=f"--data {key}", code="DATA_INVALID")) if text else ""
        out[key] = text if isinstance(parsed, dict | list) and vdef is None else parsed
        if vdef is not None:
            _check_data(key, vdef, out[key])
    return out


def _check_data(key: str, vdef: ValueDef, value: Any) -> None:
    """A bad --data answer is named as the flag it came from, not as a line of
    shard-values.yaml (tests/hardening/test_data_keys.py)."""
    try:
        check_value(key, vdef, value)
    except ShardpyError as exc:
        raise ShardpyError(
            exc.code, exc.message, f"Fix --data {key}=… on the command line.", details=exc.details
        ) from None


def load_prefill(
    schema: Schema, values_file: Path | None, data: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """--values FILE, with --data pairs on top (a pair wins over the file)."""
    raw = read_values_file(values_file, display=str(values_file)) if values_file is not None else {}
    raw.update(data_values(schema, data or {}))
    return validate_values(schema, raw)


def ordered_keys(schema: Schema, keys: list[str]) -> list[str]:
    """Wizard order: by group as declared, then declaration order."""
    groups = schema.group_order()
    position = {k: i for i, k in enumerate(schema.values)}

    def rank(key: str) -> tuple[int, int]:
        group = schema.values[key].group
        return (groups.index(group) if group in groups else len(groups), position[key])

    return sorted(keys, key=rank)


# What to pass when there is no terminal to ask on: each command names its own flags.
FRESH_ANSWERS_HINT = "Pass --defaults (or --yes) to take the defaults, or --values FILE with the answers."
UPDATE_ANSWERS_HINT = (
    f"Pass --yes to take the defaults of the new values, or add their answers to {VALUES_FILE} first."
)


def collect_values(
    schema: Schema,
    *,
    prefill: Mapping[str, Any],
    ask: list[str] | None,
    use_defaults: bool,
    ui: UI,
    missing_hint: str = FRESH_ANSWERS_HINT,
) -> dict[str, Any]:
    """Answers for every value: prefilled ones as given, the rest asked (in
    group order) or defaulted; never hangs without a terminal (``missing_hint``
    then says what the calling command takes instead)."""
    answers: dict[str, Any] = dict(prefill)
    pending = [k for k in (ask if ask is not None else list(schema.values)) if k not in answers]
    if pending and not use_defaults:
        if not ui.interactive:
            raise ShardpyError(
                "VALUES_MISSING",
                f"No answer for {', '.join(pending)} and no terminal to ask on",
                missing_hint,
                details={"keys": pending},
            )

        def default_for(key: str, so_far: Mapping[str, Any]) -> Any:
            # A computed default is shown resolved against the answers given so far.
            return computed_default(schema, key, resolve_defaults(schema, {**answers, **so_far}))

        asked = ui.ask_values(schema, ordered_keys(schema, pending), answers, default_for)
        for key, value in asked.items():
            answers[key] = check_value(key, schema.values[key], value)
    return resolve_defaults(schema, answers)


def check_module_flags(schema: Schema, ids: list[str], *, flag: str) -> None:
    for module_id in ids:
        module = schema.modules.get(module_id)
        if module is None:
            raise ShardpyError(
                "MODULE_UNKNOWN",
                f"{flag} {module_id}: the shard has no module '{module_id}'",
                f"Modules: {', '.join(schema.modules) or 'none'}.",
            )
        if not module.removable:
            raise ShardpyError(
                "MODULE_NOT_REMOVABLE",
                f"{flag} {module_id}: module '{module_id}' is always installed",
                f"Removable modules: {', '.join(schema.removable_modules()) or 'none'}.",
            )


def select_modules(
    schema: Schema,
    *,
    excluded: list[str],
    counts: Mapping[str, int],
    review: bool,
    ui: UI,
    current: Mapping[str, str] | None = None,
    added: list[str] | None = None,
) -> dict[str, str]:
    """id → included/excluded. Flags first, then an interactive review of
    removable modules (new ones are marked) when ``review`` is set."""
    check_module_flags(schema, excluded, flag="--exclude-module")
    check_module_flags(schema, added or [], flag="--add-module")
    selected = {m for m in schema.modules if (current or {}).get(m, "included") == "included"}
    selected -= set(excluded)
    selected |= set(added or [])
    # On update only a release that adds a removable module asks (the new ones are marked);
    # no module changed, no question (tests/hardening/test_update_prompts.py).
    new_ones = [m for m in schema.removable_modules() if current is not None and m not in current]
    if review and ui.interactive and schema.removable_modules() and (current is None or new_ones):
        choices = [
            ModuleChoice(
                m,
                schema.modules[m].label,
                counts.get(m, 0),
                True,
                new=current is not None and m not in current,
            )
            for m in schema.removable_modules()
        ]
        kept = ui.review_modules(choices, selected & set(schema.removable_modules()))
        selected = {m for m in schema.modules if not schema.modules[m].removable} | kept
    return {m: ("included" if m in selected else "excluded") for m in schema.modules}


@dataclass
class UpdateAnswers:
    """An update's answers and what to say about them (``update --json``'s values block)."""

    values: dict[str, Any]
    asked: list[str] = field(default_factory=list)
    migrated: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def update_values(
    schema: Schema, old_version: str, new_version: str, current: dict[str, Any], *, yes: bool, ui: UI
) -> UpdateAnswers:
    """A shard's update answers: ``current`` migrated from ``old_version`` to ``new_version``,
    values the schema dropped said and dropped, the new ones asked (or defaulted with --yes)."""
    from shardpy.shard.values import apply_value_migrations
    from shardpy.versions import is_version

    out = UpdateAnswers({})
    migrated = current
    if is_version(old_version) and old_version != new_version:
        mig = apply_value_migrations(current, old_version, new_version, schema.migrations)
        migrated = mig.values
        out.migrated = mig.applied
        out.warnings.extend(mig.warnings)
    dropped = [k for k in migrated if k not in schema.values]
    if dropped:
        out.warnings.append(f"values no longer in the schema were dropped: {', '.join(dropped)}")
    known = validate_values(schema, {k: v for k, v in migrated.items() if k in schema.values})
    out.asked = [k for k in schema.values if k not in known]
    out.values = collect_values(
        schema, prefill=known, ask=out.asked, use_defaults=yes, ui=ui, missing_hint=UPDATE_ANSWERS_HINT
    )
    return out
