"""Finding the release an existing clone came from (adopt's merge base).

Every release up to the target is rendered with the adopting user's values
and scored by how many of its files the vault holds byte for byte; the
best score wins, ties towards the newer. A shard's `version_fingerprints`
(in vault-manifest.json) narrow the candidates first, so a long history
is not fetched whole. A release that predates the sidecar is read as
plain files.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.flows.source import Prepared
from shardpy.plan.adopt import Fingerprint, best_match, fingerprint_matches, score, version_key_matches
from shardpy.plan.update import DiskView
from shardpy.shard.loader import load_shard
from shardpy.shard.render import UNKNOWN_INSTALL_DATE
from shardpy.shard.schema import Schema
from shardpy.shard.values import check_value, resolve_defaults
from shardpy.shard.walk import walk_shard
from shardpy.sources import Release, SourceSpec, fetch, list_releases, parse_source, resolve
from shardpy.sources.layout import find_shard_root
from shardpy.sources.releases import available_versions, find_pinned, release_version, sort_releases
from shardpy.versions import parse_version, version_from_tag


@dataclass
class Detected:
    version: str
    matched: int
    produced: int
    base: dict[str, bytes]
    migrations_dir: Path | None = None
    scores: dict[str, int] = field(default_factory=dict)
    note: str = ""


def _fingerprints(prep: Prepared) -> dict[str, Fingerprint]:
    path = prep.shard.root / "vault-manifest.json"
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    fps = raw.get("version_fingerprints") if isinstance(raw, dict) else None
    if not isinstance(fps, dict):
        return {}
    out: dict[str, Fingerprint] = {}
    for key, spec in fps.items():
        if isinstance(spec, dict):
            exists = tuple(str(p) for p in spec.get("exists", []) if isinstance(p, str))
            missing = tuple(str(p) for p in spec.get("missing", []) if isinstance(p, str))
            out[str(key)] = Fingerprint(exists, missing)
    return out


def _present(vault: Path, fps: dict[str, Fingerprint]) -> dict[str, bool]:
    paths = {p for fp in fps.values() for p in (*fp.exists, *fp.missing)}
    return {p: (vault / p.rstrip("/")).exists() for p in paths}


def _values_for(schema: Schema, values: dict[str, Any]) -> dict[str, Any]:
    """The adopting user's answers, as far as an older schema knows them."""
    known: dict[str, Any] = {}
    for key, vdef in schema.values.items():
        if key in values:
            try:
                known[key] = check_value(key, vdef, values[key])
            except ShardpyError:
                continue
    return resolve_defaults(schema, known)


def release_outputs(
    root: Path, subdir: str | None, values: dict[str, Any], modules: dict[str, str]
) -> tuple[dict[str, bytes], Path | None]:
    """path → bytes a fetched release produces with these answers."""
    try:
        shard_root = find_shard_root(root, subdir)
    except ShardpyError:
        shard_root = None
    if shard_root is not None:
        try:
            shard = load_shard(root, shard_root)
        except ShardpyError:
            shard = None
        if shard is not None:
            included = [k for k in shard.schema.modules if modules.get(k, "included") == "included"]
            vals = _values_for(shard.schema, values)
            try:
                production = shard.produce(vals, included, UNKNOWN_INSTALL_DATE)
            except ShardpyError:
                production = None
            if production is not None:
                return {p: o.data for p, o in production.outputs.items()}, shard.migrations_dir
    base_root = root / subdir if subdir else root
    files = walk_shard(root, base_root, Schema())
    return {f.path: (base_root / f.path).read_bytes() for f in files}, None


def _candidates(prep: Prepared, releases: list[Release], vault: Path) -> list[Release]:
    target = parse_version(prep.version)
    seen: set[str] = set()
    usable: list[Release] = []
    for r in sort_releases(releases):  # v5.1 and 5.1.0 name one release: the first spelling is read
        if r.version is not None and parse_version(r.version) <= target and r.version not in seen:
            usable.append(r)
            seen.add(r.version)
    fps = _fingerprints(prep)
    if fps:
        present = _present(vault, fps)
        keys = [k for k, fp in fps.items() if fingerprint_matches(fp, present)]
        narrowed = [r for r in usable if any(version_key_matches(k, r.version or "") for k in keys)]
        if narrowed:
            return narrowed
    return usable


def detect_base(
    prep: Prepared,
    vault: Path,
    disk: DiskView,
    values: dict[str, Any],
    modules: dict[str, str],
    *,
    from_version: str | None,
    warnings: list[str],
) -> Detected | None:
    history = history_spec(prep)
    releases = list_releases(history)
    candidates = (
        [_pinned(releases, from_version)] if from_version is not None else _candidates(prep, releases, vault)
    )
    if not candidates:
        return None
    scored: dict[str, tuple[int, dict[str, bytes], Path | None]] = {}
    for release in candidates:
        try:
            outputs, mig = _fetch_outputs(prep, history, release, values, modules)
        except ShardpyError as exc:
            warnings.append(f"release {release.tag} could not be read for base detection: {exc.message}")
            continue
        scored[release_version(release)] = (score(outputs, disk), outputs, mig)
    order = sorted(scored, key=_order_key)
    scores = {v: s for v, (s, _, _) in scored.items()}
    best = (
        release_version(candidates[0]) if from_version is not None and scored else best_match(scores, order)
    )
    if best is None or best not in scored:
        return None
    matched, outputs, mig = scored[best]
    return Detected(best, matched, len(outputs), outputs, mig, scores)


def _pinned(releases: list[Release], from_version: str) -> Release:
    """The release ``--from-version`` names, spelled as ``@version`` may be."""
    release = find_pinned(releases, from_version)
    if release is None:
        raise ShardpyError(
            "ADOPT_VERSION_NOT_FOUND",
            f"--from-version {from_version}: the source has no such release",
            "Releases: " + (", ".join(available_versions(releases, limit=50)) or "none") + ".",
            details={"available": available_versions(releases, limit=50)},
        )
    return release


def _order_key(version: str) -> tuple[int, Any]:
    """Oldest first; a tag that names no version sorts before every release."""
    parsed = version_from_tag(version)
    return (0, version) if parsed is None else (1, parsed)


def history_spec(prep: Prepared) -> SourceSpec:
    """Where the releases are: the source itself, or — for a local folder
    that is a git work tree — its git history (the folder is the target)."""
    spec = prep.spec.with_version(None, None)
    if spec.kind == "local" and (Path(spec.location) / ".git").exists():
        return parse_source(f"git+{spec.location}", cwd=Path(spec.location))
    return spec


def _fetch_outputs(
    prep: Prepared, history: SourceSpec, release: Release, values: dict[str, Any], modules: dict[str, str]
) -> tuple[dict[str, bytes], Path | None]:
    if release.version == prep.version:
        shard = prep.shard
        included = [k for k in shard.schema.modules if modules.get(k, "included") == "included"]
        production = shard.produce(values, included, UNKNOWN_INSTALL_DATE)
        return {p: o.data for p, o in production.outputs.items()}, shard.migrations_dir
    resolved = resolve(history.with_version(release.tag, None))
    fetched = fetch(resolved)
    try:
        outputs, _mig = release_outputs(fetched.root, fetched.subdir, values, modules)
        return outputs, None
    finally:
        fetched.cleanup()
