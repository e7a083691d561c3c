"""``shard-schema.yaml``: values, groups, modules, signals, frontmatter rules,
value migrations (CONTRACT §2). Validated with pydantic; every error names
the key and the line."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from shardpy.errors import ShardpyError
from shardpy.shard.yamlio import line_of, load_validated, pydantic_error, to_plain
from shardpy.versions import is_version

RESERVED_VALUE_KEYS = frozenset({"shard", "install_date", "year", "included_modules", "values"})
SCHEMA_HINT = "Fix .shardmind/shard-schema.yaml (see docs/SHARDS.md for every rule)."
ValueType = Literal["string", "number", "boolean", "select", "multiselect", "list"]


def is_computed(value: Any) -> bool:
    """A computed default is a string template expression (``{{ … }}``)."""
    return isinstance(value, str) and value.lstrip().startswith("{{")


class Option(BaseModel):
    model_config = ConfigDict(extra="allow")
    value: str | int | float | bool
    label: str | None = None
    description: str | None = None
    default: bool | None = None

    @property
    def display(self) -> str:
        return self.label or str(self.value)


class ValueDef(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: ValueType
    default: Any = None
    required: bool = False
    message: str | None = None
    hint: str | None = None
    placeholder: str | None = None
    options: list[Option] | None = None
    min: float | None = None
    max: float | None = None
    group: str | None = None

    @model_validator(mode="after")
    def _consistent(self) -> ValueDef:
        if self.type in ("select", "multiselect") and not self.options:
            raise ValueError(f"options: required and non-empty for type {self.type!r}")
        if self.min is not None and self.max is not None and self.min > self.max:
            raise ValueError("min must be less than or equal to max")
        per_option = [o for o in self.options or [] if o.default is not None]
        if per_option and self.type != "multiselect":
            raise ValueError("per-option `default` is only valid for type multiselect")
        if per_option and self.default is None:
            # `options: [{value: a, default: true}, …]` is the default spelled per option.
            self.default = [o.value for o in self.options or [] if o.default]
        if self.default is None and "default" not in self.model_fields_set:
            return self  # reported with its own code (SHARD_SCHEMA_DEFAULT_MISSING) by the cross-checks
        if not is_computed(self.default):
            self._check_default()
        return self

    def _check_default(self) -> None:
        d = self.default
        expected = {
            "string": isinstance(d, str),
            "select": isinstance(d, str | int | float) and not isinstance(d, bool),
            "boolean": isinstance(d, bool),
            "number": isinstance(d, int | float) and not isinstance(d, bool) and math.isfinite(d),
            "multiselect": isinstance(d, list),
            "list": isinstance(d, list),
        }[self.type]
        if not expected:
            raise ValueError(f"default {d!r} does not match type {self.type!r}")
        allowed = [o.value for o in self.options or []]
        if self.type == "select" and d not in allowed:
            raise ValueError(f"default {d!r} is not one of options[].value: {allowed}")
        if self.type == "multiselect":
            bad = [x for x in d if x not in allowed]
            if bad:
                raise ValueError(f"default contains values not in options[].value: {bad}")
        if self.type == "number":
            if self.min is not None and d < self.min:
                raise ValueError(f"default {d} is below min {self.min}")
            if self.max is not None and d > self.max:
                raise ValueError(f"default {d} is above max {self.max}")


class Group(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    label: str
    description: str | None = None


class Module(BaseModel):
    model_config = ConfigDict(extra="allow")
    label: str
    paths: list[str] = Field(default_factory=list)
    commands: list[str] = Field(default_factory=list)
    agents: list[str] = Field(default_factory=list)
    bases: list[str] = Field(default_factory=list)
    removable: bool = False

    @field_validator("paths")
    @classmethod
    def _relative(cls, paths: list[str]) -> list[str]:
        for p in paths:
            if not p or p.startswith("/") or ".." in p.split("/"):
                raise ValueError(f"module path {p!r} must be relative to the shard root")
        return paths


class Signal(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    description: str
    routes_to: str
    core: bool = False
    module: str | None = None


class FrontmatterRule(BaseModel):
    model_config = ConfigDict(extra="allow")
    required: list[str] = Field(default_factory=list)
    path_match: str | None = None


class RenameChange(BaseModel):
    type: Literal["rename"]
    old: str
    new: str


class AddedChange(BaseModel):
    type: Literal["added"]
    key: str
    default: Any = None


class RemovedChange(BaseModel):
    type: Literal["removed"]
    key: str


class TypeChangedChange(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    type: Literal["type_changed"]
    key: str
    from_: str = Field(alias="from")
    to: str
    transform: str


Change = Annotated[
    RenameChange | AddedChange | RemovedChange | TypeChangedChange, Field(discriminator="type")
]


class ValueMigration(BaseModel):
    from_version: str
    changes: list[Change] = Field(default_factory=list)

    @field_validator("from_version", mode="before")
    @classmethod
    def _semver(cls, value: Any) -> str:
        if not is_version(str(value)):
            raise ValueError(f"from_version {value!r} is not a semantic version")
        return str(value)


class Schema(BaseModel):
    model_config = ConfigDict(extra="allow")
    schema_version: int = 1
    values: dict[str, ValueDef] = Field(default_factory=dict)
    groups: list[Group] = Field(default_factory=list)
    modules: dict[str, Module] = Field(default_factory=dict)
    signals: list[Signal] = Field(default_factory=list)
    frontmatter: dict[str, FrontmatterRule] = Field(default_factory=dict)
    migrations: list[ValueMigration] = Field(default_factory=list)

    @field_validator("schema_version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != 1:
            raise ValueError(f"schema_version {value} is not supported (expected 1)")
        return value

    @field_validator("frontmatter", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {k: {"required": v} if isinstance(v, list) else v for k, v in value.items()}

    def group_order(self) -> list[str]:
        return [g.id for g in self.groups]

    def defaults(self) -> dict[str, Any]:
        """Literal defaults (computed ones are resolved in shard.values)."""
        return {k: v.default for k, v in self.values.items()}

    def removable_modules(self) -> list[str]:
        return [k for k, m in self.modules.items() if m.removable]


def _fail(message: str, raw: Any, loc: list[str | int], *, display: str) -> ShardpyError:
    return ShardpyError(
        "SHARD_SCHEMA_INVALID",
        f"{display}: {'.'.join(map(str, loc))}: {message}",
        SCHEMA_HINT,
        path=display,
        line=line_of(raw, loc),
        details={"key": ".".join(map(str, loc))},
    )


def _cross_checks(schema: Schema, raw: Any, *, display: str) -> None:
    raw_values = raw.get("values") or {}
    for key, val in schema.values.items():
        if key in RESERVED_VALUE_KEYS:
            raise ShardpyError(
                "SHARD_SCHEMA_RESERVED_NAME",
                f"{display}: values.{key}: '{key}' is reserved by the render context",
                f"Rename it; reserved names: {', '.join(sorted(RESERVED_VALUE_KEYS))}.",
                path=display,
                line=line_of(raw, ["values", key]),
            )
        has_per_option = any(o.default is not None for o in val.options or [])
        if "default" not in (raw_values.get(key) or {}) and not has_per_option:
            raise ShardpyError(
                "SHARD_SCHEMA_DEFAULT_MISSING",
                f"{display}: values.{key} has no default",
                "Every value needs a default of its type ('' for string, false, 0, [] or an option) "
                "so that `install --defaults` works.",
                path=display,
                line=line_of(raw, ["values", key]),
            )
        if val.group is not None and val.group not in {g.id for g in schema.groups}:
            raise _fail(
                f"group {val.group!r} is not declared in groups",
                raw,
                ["values", key, "group"],
                display=display,
            )
    module_ids = set(schema.modules)
    for i, sig in enumerate(schema.signals):
        if sig.module is not None and sig.module not in module_ids:
            raise _fail(
                f"module {sig.module!r} is not declared", raw, ["signals", i, "module"], display=display
            )


def _normalise_multiselect(schema: Schema) -> None:
    for val in schema.values.values():
        if val.type == "multiselect" and any(o.default is not None for o in val.options or []):
            val.default = [o.value for o in val.options or [] if o.default]
            for o in val.options or []:
                o.default = None


def parse_schema(raw: Any, *, display: str) -> Schema:
    if not isinstance(raw, dict):
        raise ShardpyError(
            "SHARD_SCHEMA_INVALID", f"{display} must be a YAML mapping", SCHEMA_HINT, path=display
        )
    try:
        schema = Schema.model_validate(to_plain(raw))
    except ValidationError as exc:
        raise pydantic_error(
            exc, raw, display=display, code="SHARD_SCHEMA_INVALID", hint=SCHEMA_HINT
        ) from None
    _cross_checks(schema, raw, display=display)
    _normalise_multiselect(schema)
    return schema


def load_schema(path: Path, *, display: str = ".shardmind/shard-schema.yaml") -> Schema:
    return load_validated(
        path,
        lambda raw: parse_schema({} if raw is None else raw, display=display),
        display=display,
        code="SHARD_SCHEMA_INVALID",
        missing_code="SHARD_SCHEMA_MISSING",
    )
