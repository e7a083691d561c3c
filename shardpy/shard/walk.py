"""Which source files a shard installs (CONTRACT §3) and which module owns each.

The walk is the one place that decides what a shard produces: Tier-1
exclusions, `.shardmindignore` files (gitignore semantics with negation,
nearer files win, from the source root down), symbolic links refused, and
module claims in the contract's priority order.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.shard.schema import Schema

IGNORE_FILE = ".shardmindignore"
TEMPLATE_SUFFIX = ".njk"
# Tier 1 (not configurable), compared case-insensitively. Directories are
# matched at the shard root, except `.git`, which is skipped at any depth
# (nested checkouts).
TIER1_ROOT_DIRS = frozenset({".shardmind", ".git", ".github"})
TIER1_FILES = frozenset(
    {".obsidian/workspace.json", ".obsidian/workspace-mobile.json", ".obsidian/graph.json"}
)


@dataclass(frozen=True)
class SourceFile:
    """A file of the shard source that survives Tier-1 and ignore rules."""

    path: str  # shard-root-relative source path (POSIX)
    output: str  # the installed path: `path` with `.njk` stripped
    module: str | None  # owning module, None = always installs
    template: bool  # `.njk`: rendered; otherwise copied byte for byte
    iterator: str | None  # list value an `_each` template iterates over


def strip_template_suffix(path: str) -> str:
    return path[: -len(TEMPLATE_SUFFIX)] if path.endswith(TEMPLATE_SUFFIX) else path


def is_tier1(rel: str, is_dir: bool) -> bool:
    lowered = rel.lower()
    name = lowered.rsplit("/", 1)[-1]
    if is_dir:
        # `.shardmind` at any depth: an engine folder inside the content (a planted journal,
        # state or backups) would be installed into the vault and trusted as the engine's own.
        return ("/" not in lowered and lowered in TIER1_ROOT_DIRS) or name in (".git", ".shardmind")
    return lowered in TIER1_FILES or name == ".git"  # `.git` file of a worktree/submodule


class IgnoreRules:
    """Stacked `.shardmindignore` specs; the nearest file with a match decides."""

    def __init__(self) -> None:
        # (directory prefix relative to the shard root, or the shard root's
        # path relative to an ancestor with a leading marker) → spec
        self._specs: list[tuple[str, str, Any]] = []

    def add(self, *, base: str, prefix: str, lines: Iterable[str]) -> None:
        """``base``: shard-root-relative dir the file applies to ('' = root);
        ``prefix``: shard root's path relative to the file's dir (ancestors)."""
        import pathspec

        spec = pathspec.GitIgnoreSpec.from_lines(list(lines))
        self._specs.append((base, prefix, spec))

    def ignored(self, rel: str, is_dir: bool) -> bool:
        candidate = rel + "/" if is_dir else rel
        for base, prefix, spec in reversed(self._specs):
            if base and not candidate.startswith(base + "/"):
                continue
            local = candidate[len(base) + 1 :] if base else prefix + candidate
            result = spec.check_file(local)
            if result.include is not None:
                return bool(result.include)
        return False


def _read_ignore(path: Path) -> list[str] | None:
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return None
    except (UnicodeDecodeError, IsADirectoryError):
        raise ShardpyError(
            "SHARD_IGNORE_INVALID",
            f"{path.name} is not a UTF-8 text file",
            "Save .shardmindignore as UTF-8 text.",
            path=str(path),
        ) from None


def _ancestor_rules(source_root: Path, shard_root: Path) -> IgnoreRules:
    from shardpy.sources.layout import ignore_chain

    rules = IgnoreRules()
    for directory in ignore_chain(source_root, shard_root)[
        :-1
    ]:  # the shard root's own file is added by the walk
        lines = _read_ignore(directory / IGNORE_FILE)
        if lines is not None:
            prefix = shard_root.relative_to(directory).as_posix() + "/"
            rules.add(base="", prefix=prefix, lines=lines)
    return rules


def _refuse_special(rel: str, mode: int) -> None:
    if stat.S_ISLNK(mode):
        raise ShardpyError(
            "SHARD_SYMLINK",
            f"The shard source contains a symbolic link: {rel}",
            "Shards may not contain links (one could point outside your vault); "
            "report this to the shard's author.",
            path=rel,
        )
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ShardpyError(
            "SHARD_SPECIAL_FILE",
            f"The shard source contains a device, socket or pipe: {rel}",
            "A shard may hold only regular files and folders; report this to its author.",
            path=rel,
        )


def refuse_engine_name(rel: str) -> None:
    """A shard never ships files named like the engine's own records (a temporary file, a
    collision backup, the vault's values file): installed, they would pass for the engine's."""
    from shardpy.fsutil import TMP_MARK
    from shardpy.vault.layout import VALUES_FILE

    lowered = rel.lower()
    name = lowered.rsplit("/", 1)[-1]
    if name.startswith(TMP_MARK) or ".shardpy-backup-" in name or lowered == VALUES_FILE:
        raise ShardpyError(
            "SHARD_ENGINE_FILE",
            f"The shard contains a file named like one of shardpy's own records: {rel}",
            "Shards may not ship temporary files, backups or shard-values.yaml; "
            "report this to the shard's author (or list the file in .shardmindignore).",
            path=rel,
        )


def _walk_files(shard_root: Path, rules: IgnoreRules) -> Iterator[str]:
    stack: list[str] = [""]
    while stack:
        rel_dir = stack.pop()
        directory = shard_root / rel_dir if rel_dir else shard_root
        lines = _read_ignore(directory / IGNORE_FILE)
        if lines is not None and rel_dir:
            rules.add(base=rel_dir, prefix="", lines=lines)
        elif lines is not None:
            rules.add(base="", prefix="", lines=lines)
        subdirs: list[str] = []
        with os.scandir(directory) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
                mode = entry.stat(follow_symlinks=False).st_mode
                is_dir = stat.S_ISDIR(mode)
                _refuse_special(rel, mode)  # before any exclusion: a link is refused wherever it is
                if is_tier1(rel, is_dir):
                    continue
                if rules.ignored(rel, is_dir):
                    continue
                if is_dir:
                    subdirs.append(rel)
                else:
                    refuse_engine_name(rel)
                    yield rel
        stack.extend(reversed(subdirs))


def _path_claim(rel: str, output: str, schema: Schema) -> str | None:
    best: tuple[int, int, str] | None = None  # (exact?, length, module)
    for module_id, module in schema.modules.items():
        for entry in module.paths:
            for candidate in (rel, output):
                if candidate == entry.rstrip("/") and not entry.endswith("/"):
                    score = (1, len(entry), module_id)
                elif candidate.startswith(entry if entry.endswith("/") else entry + "/"):
                    score = (0, len(entry), module_id)
                else:
                    continue
                if best is None or score[:2] > best[:2]:
                    best = score
    return best[2] if best else None


def _name_claim(output: str, schema: Schema) -> str | None:
    parts = PurePosixPath(output).parts
    if len(parts) >= 2 and parts[-2].lower() in ("commands", "agents"):
        kind = parts[-2].lower()
        stem = PurePosixPath(parts[-1]).stem
        for module_id, module in schema.modules.items():
            if stem in (module.commands if kind == "commands" else module.agents):
                return module_id
    return None


def claim_module(rel: str, schema: Schema) -> str | None:
    """The module a source path belongs to, in the contract's priority order."""
    output = strip_template_suffix(rel)
    by_path = _path_claim(rel, output, schema)
    if by_path is not None:
        return by_path
    for module_id, module in schema.modules.items():
        for base_id in module.bases:
            if output == f"bases/{base_id}.base":
                return module_id
    return _name_claim(output, schema)


def iterator_of(rel: str) -> str | None:
    """`team/_each.md.njk` iterates over the list value named by its folder."""
    p = PurePosixPath(rel)
    if not p.name.startswith("_each") or len(p.parts) < 2:
        return None
    return p.parts[-2]


def walk_shard(source_root: Path, shard_root: Path, schema: Schema) -> list[SourceFile]:
    """Every installable source file of the shard, in a stable order."""
    rules = _ancestor_rules(source_root, shard_root)
    files: list[SourceFile] = []
    for rel in _walk_files(shard_root, rules):
        template = rel.endswith(TEMPLATE_SUFFIX)
        files.append(
            SourceFile(
                path=rel,
                output=strip_template_suffix(rel),
                module=claim_module(rel, schema),
                template=template,
                iterator=iterator_of(rel) if template else None,
            )
        )
    files.sort(key=lambda f: f.path)
    return files
