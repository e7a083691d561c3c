"""Test-side reading of the flagship shard: which files it installs, which
module claims each, and a stand-in for `install` that lays out a vault the
way the contract says the engine must (so the agent scripts can be tested
on realistic vaults before the engine exists).

`claim` mirrors the contract's claim rule on purpose, independently of
shardpy's own walk: if the two ever disagree, one of them is wrong.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import shutil
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import pathspec
from ruamel.yaml import YAML

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARD_DIRNAME = "shard-template"
SHARD_ROOT = REPO_ROOT / SHARD_DIRNAME
MIGRATIONS = REPO_ROOT / "migrations"

TIER1_DIRS = frozenset({".shardmind", ".git", ".github"})
TIER1_FILES = frozenset(
    {".obsidian/workspace.json", ".obsidian/workspace-mobile.json", ".obsidian/graph.json"}
)


@contextlib.contextmanager
def no_bytecode() -> Iterator[None]:
    """Import the shard's own Python (vaultlib, _hooklib) without leaving
    __pycache__ in the shard source, whatever PYTHONDONTWRITEBYTECODE says."""
    previous = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = previous


def load_yaml(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text(encoding="utf-8"))


def schema(shard_root: Path = SHARD_ROOT) -> dict[str, Any]:
    data = load_yaml(shard_root / ".shardmind" / "shard-schema.yaml")
    assert isinstance(data, dict)
    return data


def manifest(shard_root: Path = SHARD_ROOT) -> dict[str, Any]:
    data = load_yaml(shard_root / ".shardmind" / "shard.yaml")
    assert isinstance(data, dict)
    return data


def vault_manifest(shard_root: Path = SHARD_ROOT) -> dict[str, Any]:
    data = json.loads((shard_root / "vault-manifest.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def strip_njk(rel: str) -> str:
    return rel[: -len(".njk")] if rel.endswith(".njk") else rel


def claim(rel: str, modules: dict[str, Any]) -> str | None:
    """The module a shard-root-relative source path belongs to (contract §2)."""
    out = strip_njk(rel)
    best: tuple[int, str] | None = None
    for mod_id, mod in modules.items():
        for entry in mod.get("paths") or []:
            if entry.endswith("/"):
                hit = out.startswith(entry) or rel.startswith(entry)
            else:
                hit = entry in (out, rel)
            # Most specific wins: an exact path beats any prefix; longer prefixes beat shorter.
            score = 10_000 if hit and not entry.endswith("/") else len(entry)
            if hit and (best is None or score > best[0]):
                best = (score, mod_id)
    if best is not None:
        return best[1]
    for mod_id, mod in modules.items():
        for base in mod.get("bases") or []:
            if out == f"bases/{base}.base":
                return mod_id
    parts = PurePosixPath(out).parts
    if len(parts) >= 2 and parts[-2].lower() in ("commands", "agents"):
        kind = parts[-2].lower()
        stem = PurePosixPath(parts[-1]).stem
        for mod_id, mod in modules.items():
            if stem.lower() in [n.lower() for n in mod.get(kind) or []]:
                return mod_id
    return None


def _ignore_specs(source_root: Path, shard_root: Path) -> list[tuple[str, Any]]:
    """(prefix of the shard root relative to the file's folder, spec), outermost first."""
    specs: list[tuple[str, Any]] = []
    rel = shard_root.relative_to(source_root)
    chain = [source_root, *(source_root.joinpath(*rel.parts[: i + 1]) for i in range(len(rel.parts)))]
    for folder in chain:
        f = folder / ".shardmindignore"
        if f.is_file():
            prefix = shard_root.relative_to(folder).as_posix()
            prefix = "" if prefix == "." else prefix + "/"
            specs.append(
                (prefix, pathspec.GitIgnoreSpec.from_lines(f.read_text(encoding="utf-8").splitlines()))
            )
    return specs


def _ignored(rel: str, is_dir: bool, specs: list[tuple[str, Any]]) -> bool:
    candidate = rel + "/" if is_dir else rel
    for prefix, spec in reversed(specs):  # nearer files win
        result = spec.check_file(prefix + candidate)
        if result.include is not None:
            return bool(result.include)
    return False


def installable_files(source_root: Path = REPO_ROOT, shard_root: Path = SHARD_ROOT) -> list[str]:
    """Every shard-root-relative file that survives Tier 1 and .shardmindignore."""
    specs = _ignore_specs(source_root, shard_root)
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(shard_root):
        base = Path(dirpath).relative_to(shard_root).as_posix()
        prefix = "" if base == "." else base + "/"
        keep = []
        for d in sorted(dirnames):
            rel = prefix + d
            if (not prefix and d in TIER1_DIRS) or d == ".git" or _ignored(rel, True, specs):
                continue
            keep.append(d)
        dirnames[:] = keep
        for name in filenames:
            rel = prefix + name
            if rel in TIER1_FILES or _ignored(rel, False, specs):
                continue
            out.append(rel)
    return sorted(out)


def defaults(shard_schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v["default"] for k, v in shard_schema["values"].items()}


def render(template_text: str, context: dict[str, Any]) -> str:
    from jinja2.sandbox import SandboxedEnvironment

    env = SandboxedEnvironment(
        autoescape=False, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True
    )
    return env.from_string(template_text).render(**context)


def render_context(
    shard_schema: dict[str, Any], values: dict[str, Any], included: list[str]
) -> dict[str, Any]:
    shard = manifest()
    now = dt.datetime(2026, 11, 29, tzinfo=dt.UTC)
    return {
        **values,
        "values": values,
        "included_modules": included,
        "shard": {"name": shard["name"], "version": shard["version"]},
        "install_date": now.isoformat(),
        "year": str(now.year),
    }


def shipped_text(rel: str, shard_root: Path = SHARD_ROOT) -> str:
    """Output ``rel`` as a defaults install writes it: a static file's text,
    or its ``.njk`` template rendered with the defaults (Home.md and
    brain/North Star.md are templates: the values reach them on update)."""
    if (shard_root / rel).is_file():
        return (shard_root / rel).read_text(encoding="utf-8")
    sch = schema(shard_root)
    template = (shard_root / f"{rel}.njk").read_text(encoding="utf-8")
    return render(template, render_context(sch, defaults(sch), list(sch["modules"])))


@dataclass
class Layout:
    root: Path
    values: dict[str, Any]
    modules: dict[str, str]


def lay_out_vault(
    dest: Path,
    *,
    values: dict[str, Any] | None = None,
    exclude: tuple[str, ...] = (),
    state: bool = True,
    source_root: Path = REPO_ROOT,
    shard_root: Path = SHARD_ROOT,
) -> Layout:
    """A vault as `install` lays it out: installable files of the included
    modules, templates rendered, plus .shardmind/state.json (modules only —
    what the scripts read) and shard-values.yaml. A test double, not the
    engine: hooks are not run here."""
    sch = schema(shard_root)
    vals = {**defaults(sch), **(values or {})}
    mods = {m: ("excluded" if m in exclude else "included") for m in sch["modules"]}
    included = [m for m, s in mods.items() if s == "included"]
    ctx = render_context(sch, vals, included)
    dest.mkdir(parents=True, exist_ok=True)
    for rel in installable_files(source_root, shard_root):
        owner = claim(rel, sch["modules"])
        if owner is not None and mods[owner] == "excluded":
            continue
        target = dest / strip_njk(rel)
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".njk"):
            target.write_text(render((shard_root / rel).read_text(encoding="utf-8"), ctx), encoding="utf-8")
        else:
            shutil.copyfile(shard_root / rel, target)
    if state:
        (dest / ".shardmind").mkdir(exist_ok=True)
        (dest / ".shardmind" / "state.json").write_text(
            json.dumps({"schema_version": 1, "modules": mods, "version": manifest(shard_root)["version"]}),
            encoding="utf-8",
        )
        lines = [f"{k}: {json.dumps(v)}" for k, v in vals.items()]
        (dest / "shard-values.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Layout(dest, vals, mods)


def _note(path: Path, i: int, task: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    body = f"---\ndate: 2026-01-01\ndescription: note {i}\ntags: [x]\n---\n# Note {i}\nSee [[Home]].\n"
    if task:
        body += f"- [ ] follow up on item {i} with the platform team before the quarterly review\n"
    path.write_text(body, encoding="utf-8")


def populate_heavy_vault(root: Path, count: int) -> int:
    """A heavy, realistic vault: many small project and area folders (each
    under the collapse threshold, so the listing really is large), a few big
    flat ones, open tasks in active projects. Returns the notes written."""
    plan = [
        ("work/archive/2025/Project {g:03d}", 8, 0.40),
        ("reference/Area {g:03d}", 8, 0.16),
        ("work/active/Initiative {g:03d}", 5, 0.06),
        ("work/meetings/2025-{g:02d}", 25, 0.24),
        ("org/people", 400, 0.08),
        ("thinking", 300, 0.06),
    ]
    written = 0
    for pattern, per_folder, share in plan:
        n = int(count * share)
        for i in range(n):
            folder = pattern.format(g=i // per_folder)
            _note(root / folder / f"Note {written:05d}.md", written, task=folder.startswith("work/active"))
            written += 1
    while written < count:
        _note(root / "thinking" / f"Extra {written:05d}.md", written)
        written += 1
    return written
