"""``shard.yaml``: identity, requirements, hooks (CONTRACT §2)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from shardpy import SHARDMIND_CONTRACT_VERSION, __version__
from shardpy.errors import ShardpyError
from shardpy.shard.yamlio import line_of, load_validated, pydantic_error, to_plain
from shardpy.versions import RangeError, is_version, parse_range, satisfies

NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
KNOWN_KEYS = {
    "apiVersion",
    "name",
    "namespace",
    "version",
    "description",
    "persona",
    "license",
    "homepage",
    "requires",
    "dependencies",
    "hooks",
}
MANIFEST_HINT = "Fix .shardmind/shard.yaml (see docs/SHARDS.md for every key)."


def _script_path(value: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError("a hook script must be a non-empty path")
    if value.startswith("/") or ".." in value.split("/") or "\\" in value:
        raise ValueError(f"hook script {value!r} must be a relative path inside the shard")
    return value


class HookScript(BaseModel):
    model_config = ConfigDict(extra="forbid")
    script: str
    fingerprint: str | None = None

    @field_validator("script")
    @classmethod
    def _script(cls, value: str) -> str:
        return _script_path(value)


class Hooks(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    post_install: str | None = Field(None, alias="post-install")
    bootstrap: HookScript | None = None
    personalize: str | None = None
    post_update: str | None = Field(None, alias="post-update")
    timeout_ms: int = Field(30000, ge=1000, le=600000)

    @field_validator("bootstrap", mode="before")
    @classmethod
    def _bootstrap_shape(cls, value: Any) -> Any:
        return {"script": value} if isinstance(value, str) else value

    @field_validator("post_install", "personalize", "post_update")
    @classmethod
    def _paths(cls, value: str | None) -> str | None:
        return None if value is None else _script_path(value)


class Dependency(BaseModel):
    model_config = ConfigDict(extra="allow")
    namespace: str
    name: str
    version: str


class Manifest(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    api_version: str = Field(alias="apiVersion")
    name: str
    namespace: str
    version: str
    description: str | None = None
    persona: str | None = None
    license: str | None = None
    homepage: str | None = None
    requires: dict[str, str] = Field(default_factory=dict)
    dependencies: list[Dependency] = Field(default_factory=list)
    hooks: Hooks = Field(default_factory=Hooks)

    @field_validator("api_version")
    @classmethod
    def _api(cls, value: str) -> str:
        if value != "v1":
            raise ValueError(f"apiVersion must be 'v1' (got {value!r})")
        return value

    @field_validator("name", "namespace")
    @classmethod
    def _names(cls, value: str) -> str:
        if not NAME_RE.match(value):
            raise ValueError(f"{value!r} must be lowercase letters, digits and single hyphens")
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _version(cls, value: Any) -> str:
        text = str(value)
        if not is_version(text) or text.startswith("v"):
            raise ValueError(f"version {text!r} is not a semantic version like 1.2.3")
        return text

    @field_validator("requires", mode="before")
    @classmethod
    def _requires(cls, value: Any) -> dict[str, str]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("requires must be a mapping of name → semver range")
        return {str(key): str(rng) for key, rng in value.items()}

    @property
    def identity(self) -> str:
        return f"{self.namespace}/{self.name}"

    def unknown_keys(self) -> list[str]:
        return sorted(k for k in (self.model_extra or {}) if k not in KNOWN_KEYS)


def check_engine(manifest: Manifest, *, display: str) -> None:
    """Refuse a shard whose engine range shardpy's contract level does not meet."""
    for key, ours in (("shardmind", SHARDMIND_CONTRACT_VERSION), ("shardpy", __version__)):
        rng = manifest.requires.get(key)
        if rng is not None and not satisfies(ours, rng):
            raise ShardpyError(
                "SHARD_ENGINE_UNSUPPORTED",
                f"{manifest.identity} requires {key} {rng}; shardpy provides {key} contract {ours}",
                "Upgrade shardpy (pip install -U shardpy) or install an older release of the shard.",
                path=display,
            )


def _check_ranges(manifest: Manifest, raw: Any, *, display: str) -> None:
    # Checked after the model so the error can point at the range's own line.
    for key, rng in manifest.requires.items():
        try:
            parse_range(rng)
        except RangeError as exc:
            raise ShardpyError(
                "SHARD_MANIFEST_INVALID",
                f"{display}: requires.{key}: {exc}",
                MANIFEST_HINT,
                path=display,
                line=line_of(raw, ["requires", key]),
                details={"key": f"requires.{key}"},
            ) from None


def parse_manifest(raw: Any, *, display: str) -> Manifest:
    if not isinstance(raw, dict):
        raise ShardpyError(
            "SHARD_MANIFEST_INVALID", f"{display} must be a YAML mapping", MANIFEST_HINT, path=display
        )
    try:
        manifest = Manifest.model_validate(to_plain(raw))
    except ValidationError as exc:
        raise pydantic_error(
            exc, raw, display=display, code="SHARD_MANIFEST_INVALID", hint=MANIFEST_HINT
        ) from None
    _check_ranges(manifest, raw, display=display)
    check_engine(manifest, display=display)
    return manifest


def load_manifest(path: Path, *, display: str = ".shardmind/shard.yaml") -> Manifest:
    return load_validated(
        path,
        lambda raw: parse_manifest(raw, display=display),
        display=display,
        code="SHARD_MANIFEST_INVALID",
        missing_code="SHARD_MANIFEST_MISSING",
    )
