"""Status's checks of a vault's shard files, kept between runs (issue 25: status --verbose).

The values check (``shard-values.yaml`` against the cached schema), the
manifest's unknown keys and the frontmatter rules that verbose status checks
every note against are functions of three small files' bytes and of the code
that reads them. Reading them builds the schema's and the manifest's pydantic
models, which costs more than a whole plain ``status`` (pydantic's import
alone). So the verdicts are kept in the user cache folder, one JSON file per
vault, under the digest of those bytes and of the deciding code's identity
(shardpy's version, each deciding module's size and modification time, and
where pydantic and ruamel are installed): a run whose digest matches uses
them, any other computes them as before (:func:`compute`) and keeps them.

The file is derived data: anything unreadable or malformed in it is ignored
and rewritten; a verdict is kept only when the files still hold the bytes
digested before it was computed (tests/install/test_status_checks.py).
"""

from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shardpy.errors import ShardpyError
from shardpy.vault import layout

if TYPE_CHECKING:
    from shardpy.shard.rules import RuleSpec

VERSION = 1
# The files the verdicts are computed from, relative to the vault.
INPUTS = (layout.CACHED_SCHEMA, layout.VALUES_FILE, layout.CACHED_MANIFEST)
# The code that decides them: shardpy's modules (relative to the package) and the libraries.
CODE = (
    "flows/statuschecks.py",
    "shard/schema.py",
    "shard/values.py",
    "shard/manifest.py",
    "shard/yamlio.py",
    "shard/rules.py",
    "yamlsafe.py",
    "versions.py",
    "errors.py",
)
LIBRARIES = ("pydantic", "pydantic_core", "ruamel.yaml")


@dataclass
class Checks:
    """What status reports from the shard files."""

    problems: list[str] = field(default_factory=list)  # why the values are not valid
    warnings: list[str] = field(default_factory=list)  # the cached manifest's
    rules: list[RuleSpec] | None = None  # None: no note is checked (no schema, or no rule in it)


def compute(vault: Path) -> Checks:
    """The verdicts read from the files themselves (the schema's and manifest's models)."""
    from shardpy.shard.rules import rule_specs
    from shardpy.shard.schema import load_schema
    from shardpy.shard.values import problems, read_values_file

    out = Checks(warnings=manifest_warnings(vault))
    try:
        schema = load_schema(vault / layout.CACHED_SCHEMA)
    except ShardpyError as exc:
        out.problems.append(f"cached schema unreadable: {exc.message}")
        return out
    out.rules = rule_specs(schema) or None
    try:
        values = read_values_file(vault / layout.VALUES_FILE, display=layout.VALUES_FILE)
    except ShardpyError as exc:
        out.problems.append(exc.message)
        return out
    out.problems.extend(problems(schema, values))
    return out


def manifest_warnings(vault: Path) -> list[str]:
    """Keys of the cached shard.yaml that shardpy does not know are kept and ignored;
    verbose status says so (CONTRACT §2)."""
    from shardpy.shard.manifest import load_manifest

    try:
        manifest = load_manifest(vault / layout.CACHED_MANIFEST, display=layout.CACHED_MANIFEST)
    except ShardpyError as exc:
        return [f"{layout.CACHED_MANIFEST}: [{exc.code}] {exc.message}"]
    unknown = manifest.unknown_keys()
    if unknown:
        return [f"shard.yaml has keys shardpy does not use (ignored): {', '.join(unknown)}"]
    return []


def checks(vault: Path) -> Checks:
    """:func:`compute`'s answer, kept between runs while the files and the code are the same."""
    key = digest(vault)
    if key is None:  # an input or the code cannot be stat-ed or read: nothing is kept
        return compute(vault)
    path = cache_file(vault)
    kept = _load(path, key)
    if kept is not None:
        return kept
    found = compute(vault)
    if digest(vault) == key:  # a file changed while it was read: the verdict may be the new bytes'
        _save(path, key, found)
    return found


def digest(vault: Path) -> str | None:
    """The key of the verdicts: the inputs' bytes and the deciding code's identity."""
    from shardpy import __version__
    from shardpy.fsutil import sha256_bytes

    parts: list[Any] = [VERSION, __version__]
    package = Path(__file__).resolve().parent.parent
    try:
        for rel in CODE:
            st = os.stat(package / rel)
            parts.append([rel, st.st_size, st.st_mtime_ns])
        for name in LIBRARIES:
            parts.append([name, *_installed(name)])
        head = json.dumps(parts).encode()
        blobs = [head]
        for rel in INPUTS:
            blobs.append(b"\0" + rel.encode() + b"\0" + _bytes(vault / rel))
    except (OSError, ValueError, ImportError):
        return None
    return sha256_bytes(b"".join(blobs))


def _installed(name: str) -> list[Any]:
    """Where a library is installed and its main file's size and modification time."""
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        return ["absent"]
    st = os.stat(spec.origin)
    return [spec.origin, st.st_size, st.st_mtime_ns]


def _bytes(path: Path) -> bytes:
    """A file's bytes; a missing file is told apart from an empty one."""
    try:
        return b"1" + path.read_bytes()
    except FileNotFoundError:
        return b"0"


def cache_file(vault: Path) -> Path:
    from shardpy.cachedir import cache_dir
    from shardpy.notes.keycache import vault_key

    return cache_dir() / "status" / f"checks-{vault_key(vault)}.json"


def _load(path: Path, key: str) -> Checks | None:
    try:
        data = json.loads(path.read_bytes())
        if not isinstance(data, dict) or data.get("v") != VERSION or data.get("key") != key:
            return None
        return _checks_of(data["checks"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _strings(value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise TypeError("not a list of strings")
    return value


def _rule(value: Any) -> RuleSpec:
    if not isinstance(value, list) or len(value) != 3:
        raise TypeError("not a rule")
    name, required, path_match = value
    if not isinstance(name, str) or not (path_match is None or isinstance(path_match, str)):
        raise TypeError("not a rule")
    return name, _strings(required), path_match


def _checks_of(data: Any) -> Checks:
    """The kept verdicts, checked to be of their types (TypeError otherwise)."""
    if not isinstance(data, dict):
        raise TypeError("not a mapping")
    rules = data["rules"]
    if rules is not None and not isinstance(rules, list):
        raise TypeError("rules not a list")
    return Checks(
        _strings(data["problems"]),
        _strings(data["warnings"]),
        None if rules is None else [_rule(r) for r in rules],
    )


def _save(path: Path, key: str, found: Checks) -> None:
    """Keep the verdicts (through keycache's writer of status's kept files)."""
    from shardpy.notes.keycache import keep

    keep(path, {"v": VERSION, "key": key, "checks": asdict(found)})
