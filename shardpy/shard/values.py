"""Values: defaults (literal and computed), validation, the values file, and
value migrations between shard versions (CONTRACT §2, §10)."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.shard.render import render_expression
from shardpy.shard.schema import AddedChange, Schema, ValueDef, ValueMigration, is_computed
from shardpy.versions import parse_version

VALUES_FILE = "shard-values.yaml"


def _err(key: str, message: str, hint: str = "") -> ShardpyError:
    return ShardpyError(
        "VALUES_INVALID",
        f"Value '{key}': {message}",
        hint or f"Fix '{key}' in {VALUES_FILE} (or in the values file you passed).",
        details={"key": key},
    )


def coerce_computed(key: str, vdef: ValueDef, text: str) -> Any:
    """A computed default's rendered text, as a value of the declared type."""
    raw = text.strip()
    try:
        if vdef.type == "boolean":
            if raw.lower() not in ("true", "false"):
                raise ValueError(f"expected true or false, got {raw!r}")
            return raw.lower() == "true"
        if vdef.type == "number":
            number = float(raw)
            return int(number) if number.is_integer() and "." not in raw else number
        if vdef.type in ("list", "multiselect"):
            parsed = json.loads(raw or "[]")
            if not isinstance(parsed, list):
                raise ValueError("expected a JSON array")
            return parsed
    except (ValueError, json.JSONDecodeError) as exc:
        raise ShardpyError(
            "VALUES_COMPUTED_DEFAULT",
            f"Computed default of '{key}' did not give a {vdef.type}: {exc}",
            "Fix the expression in shard-schema.yaml (booleans must render true/false, lists a JSON array).",
            details={"key": key},
        ) from None
    return text


def check_value(key: str, vdef: ValueDef, value: Any) -> Any:
    """Validate one value against its definition; return it normalised."""
    t = vdef.type
    if t == "string":
        if not isinstance(value, str):
            raise _err(key, f"expected text, got {type(value).__name__} {value!r}", "Quote it in YAML.")
        return value
    if t == "number":
        return _check_number(key, vdef, value)
    if t == "boolean":
        if not isinstance(value, bool):
            raise _err(key, f"expected true or false, got {value!r}")
        return value
    allowed = [o.value for o in vdef.options or []]
    if t == "select":
        if value not in allowed or isinstance(value, bool) != any(isinstance(a, bool) for a in allowed):
            raise _err(key, f"{value!r} is not one of {allowed}")
        return value
    return _check_list(key, vdef, value, allowed)


def _check_number(key: str, vdef: ValueDef, value: Any) -> Any:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _err(key, f"expected a number, got {value!r}")
    if vdef.min is not None and value < vdef.min:
        raise _err(key, f"{value} is below the minimum {vdef.min:g}")
    if vdef.max is not None and value > vdef.max:
        raise _err(key, f"{value} is above the maximum {vdef.max:g}")
    return value


def _check_list(key: str, vdef: ValueDef, value: Any, allowed: list[Any]) -> Any:
    """A multiselect (items among ``allowed``) or a list of text or mappings, within min/max items."""
    if not isinstance(value, list):
        raise _err(key, f"expected a list, got {type(value).__name__}")
    if vdef.type == "multiselect":
        bad = [v for v in value if v not in allowed]
        if bad:
            raise _err(key, f"{bad} not among the options {allowed}")
    else:
        for item in value:
            if not isinstance(item, str | dict):
                raise _err(key, f"list items must be text or mappings, got {item!r}")
    if vdef.min is not None and len(value) < vdef.min:
        raise _err(key, f"needs at least {vdef.min:g} item(s)")
    if vdef.max is not None and len(value) > vdef.max:
        raise _err(key, f"allows at most {vdef.max:g} item(s)")
    return value


def resolve_defaults(schema: Schema, answers: Mapping[str, Any]) -> dict[str, Any]:
    """Fill every value not in ``answers`` with its default; computed defaults
    are evaluated against the answers and literal defaults known so far."""
    out: dict[str, Any] = {}
    pending: list[str] = []
    for key, vdef in schema.values.items():
        if key in answers:
            out[key] = answers[key]
        elif is_computed(vdef.default):
            pending.append(key)
        else:
            out[key] = _copy(vdef.default)
    for key in pending:
        out[key] = computed_default(schema, key, out)
    return {k: out[k] for k in schema.values}


def computed_default(schema: Schema, key: str, known: Mapping[str, Any]) -> Any:
    vdef = schema.values[key]
    if not is_computed(vdef.default):
        return _copy(vdef.default)
    text = render_expression(str(vdef.default), known, name=f"shard-schema.yaml values.{key}.default")
    return check_value(key, vdef, coerce_computed(key, vdef, text))


def _copy(value: Any) -> Any:
    return json.loads(json.dumps(value)) if isinstance(value, list | dict) else value


def refuse_unknown(schema: Schema, keys: Iterable[str]) -> None:
    """VALUES_UNKNOWN_KEY for a key the shard does not declare (every command's one rule)."""
    unknown = [k for k in keys if k not in schema.values]
    if unknown:
        raise ShardpyError(
            "VALUES_UNKNOWN_KEY",
            f"Unknown value '{unknown[0]}'" + (f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""),
            f"The shard declares: {', '.join(schema.values) or 'no values'}.",
            details={"keys": unknown},
        )


def validate_values(
    schema: Schema, values: Mapping[str, Any], *, allow_unknown: bool = False
) -> dict[str, Any]:
    """Check a complete set of values; unknown keys are an error unless allowed."""
    if not allow_unknown:
        refuse_unknown(schema, values)
    return {k: check_value(k, schema.values[k], values[k]) for k in schema.values if k in values}


def problems(schema: Schema, values: Mapping[str, Any]) -> list[str]:
    """Every reason ``values`` is not valid, for status (never raises)."""
    out: list[str] = []
    for key in values:
        if key not in schema.values:
            out.append(f"unknown value '{key}'")
    for key, vdef in schema.values.items():
        if key not in values:
            out.append(f"'{key}' is missing")
            continue
        try:
            check_value(key, vdef, values[key])
        except ShardpyError as exc:
            out.append(exc.message)
    return out


def same_value(a: Any, b: Any) -> bool:
    """Deep equality as a shard author means it: list order counts, a boolean
    never equals a number, and 3 equals 3.0 (YAML and JSON have one number
    type as far as a shard is concerned)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    return type(a) is type(b) and bool(a == b)


def values_are_defaults(schema: Schema, values: Mapping[str, Any]) -> bool:
    """Invariant 2: deep equality with every default (order-exact)."""
    defaults = resolve_defaults(schema, {})
    return all(k in values and same_value(defaults[k], values[k]) for k in schema.values)


# --- the values file --------------------------------------------------------


def _yaml() -> Any:
    from ruamel.yaml import YAML

    yaml = YAML(typ="rt")
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def read_values_file(path: Path, *, display: str | None = None) -> dict[str, Any]:
    """The plain values in a YAML file (missing → typed error)."""
    from shardpy.shard.yamlio import load_yaml_file, to_plain

    shown = display or path.name
    data = load_yaml_file(
        path,
        display=shown,
        code="VALUES_FILE_INVALID",
        missing_code="VALUES_FILE_MISSING",
        missing_hint=f"Check the path: {path} should be a YAML file of value names and answers.",
    )
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ShardpyError(
            "VALUES_FILE_INVALID", f"{shown} must be a mapping of value names to values", "", path=shown
        )
    plain = to_plain(data)
    assert isinstance(plain, dict)
    return plain


def _comment_for(vdef: ValueDef) -> str:
    parts = [vdef.message or ""]
    if vdef.hint:
        parts.append(vdef.hint)
    if vdef.options:
        parts.append("one of: " + ", ".join(str(o.value) for o in vdef.options))
    return " — ".join(p for p in parts if p)


def render_values_file(
    schema: Schema, values: Mapping[str, Any], *, identity: str, existing: str | None = None
) -> str:
    """The values file text. Rewrites keep the user's comments and order."""
    yaml = _yaml()
    if existing is not None:
        from shardpy.yamlsafe import load

        doc = load(existing, yaml)
        if not isinstance(doc, dict):
            doc = None
    else:
        doc = None
    if doc is None:
        from ruamel.yaml.comments import CommentedMap

        doc = CommentedMap()
        doc.yaml_set_start_comment(
            f"Values for {identity}: your answers, used to render the shard's templates.\n"
            "Edit them here any time; `shardpy update` re-renders the files that use them."
        )
    for key in [k for k in doc if k not in values]:
        del doc[key]
    for key, value in values.items():
        if key in doc:
            if doc[key] != value:
                doc[key] = value
        else:
            doc[key] = value
            vdef = schema.values.get(key)
            comment = _comment_for(vdef) if vdef is not None else ""
            if comment:
                doc.yaml_set_comment_before_after_key(key, before=comment)
    stream = StringIO()
    yaml.dump(doc, stream)
    return stream.getvalue()


# --- value migrations -------------------------------------------------------


@dataclass
class MigrationResult:
    values: dict[str, Any]
    applied: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def _transform(expression: str, value: Any) -> Any:
    """Evaluate a ``type_changed`` transform in the template sandbox.

    ShardMind writes transforms as JavaScript expressions; the common forms
    (``Number(value)``, ``String(value)``, ``cond ? a : b``) are accepted.
    """
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    ternary = re.match(r"^(.+?)\?(.+?):(.+)$", expression)
    if ternary and " if " not in expression:
        cond, yes, no = (p.strip() for p in ternary.groups())
        expression = f"({yes}) if ({cond}) else ({no})"
    expression = expression.replace("===", "==").replace("!==", "!=")
    env = ImmutableSandboxedEnvironment()
    helpers = {
        "Number": lambda v: float(v) if "." in str(v) else int(v),
        "String": lambda v: "" if v is None else str(v).lower() if isinstance(v, bool) else str(v),
        "Boolean": bool,
        "parseInt": lambda v: int(float(v)),
        "parseFloat": float,
        "true": True,
        "false": False,
        "null": None,
    }
    return env.compile_expression(expression, undefined_to_none=False)(value=value, **helpers)


def select_migrations(migrations: list[ValueMigration], current: str, target: str) -> list[ValueMigration]:
    """Those with ``current < from_version <= target``, in version order."""
    cur, tgt = parse_version(current), parse_version(target)
    chosen = [m for m in migrations if cur < parse_version(m.from_version) <= tgt]
    return sorted(chosen, key=lambda m: parse_version(m.from_version))


def _add(change: AddedChange, vals: dict[str, Any], tag: str, result: MigrationResult) -> None:
    if change.key in vals:
        return
    if is_computed(change.default):
        # Computed on this machine (the flagship's command_found('qmd'), issue 29): left out here,
        # the value is asked like any new one, its computed default offered (--yes takes it) -
        # never the expression itself, nor a value another machine computed
        # (tests/update/test_update_flow.py).
        result.applied.append(f"{tag} added '{change.key}' (asked, its default computed here)")
        return
    vals[change.key] = _copy(change.default)
    result.applied.append(f"{tag} added '{change.key}'")


def apply_value_migrations(
    values: Mapping[str, Any], current: str, target: str, migrations: list[ValueMigration]
) -> MigrationResult:
    result = MigrationResult(values=dict(values))
    vals = result.values
    for migration in select_migrations(migrations, current, target):
        tag = f"[{migration.from_version}]"
        for change in migration.changes:
            if change.type == "rename":
                if change.old not in vals:
                    result.warnings.append(f"{tag} rename: '{change.old}' not present; skipped")
                elif change.new in vals:
                    result.warnings.append(f"{tag} rename: '{change.new}' already has a value; kept both")
                else:
                    vals[change.new] = vals.pop(change.old)
                    result.applied.append(f"{tag} renamed '{change.old}' to '{change.new}'")
            elif change.type == "added":
                _add(change, vals, tag, result)
            elif change.type == "removed":
                if change.key in vals:
                    del vals[change.key]
                    result.applied.append(f"{tag} removed '{change.key}'")
            else:
                if change.key not in vals:
                    result.warnings.append(f"{tag} type_changed: '{change.key}' not present; skipped")
                    continue
                try:
                    vals[change.key] = _transform(change.transform, vals[change.key])
                    result.applied.append(
                        f"{tag} converted '{change.key}' from {change.from_} to {change.to}"
                    )
                except Exception as exc:  # a shard's expression: any failure keeps the old value
                    result.warnings.append(
                        f"{tag} type_changed: transform for '{change.key}' failed ({exc}); kept the old value"
                    )
    return result
