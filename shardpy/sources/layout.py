"""Where the shard sits inside a fetched source tree (CONTRACT §2).

The shard root is the directory holding ``.shardmind/shard.yaml``: the
source root itself, exactly one directory one level down, or the directory
``SOURCE//subdir`` names. Links are never followed while looking.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath

from shardpy.errors import ShardpyError

MANIFEST_REL = (".shardmind", "shard.yaml")
MIGRATIONS_DIRNAME = "migrations"


def has_manifest(directory: Path) -> bool:
    """True when ``directory/.shardmind/shard.yaml`` is a regular file reached without links."""
    current = directory
    for part in MANIFEST_REL:
        current = current / part
        try:
            st = os.lstat(current)
        except OSError:
            return False
        if stat.S_ISLNK(st.st_mode):
            return False
    return stat.S_ISREG(st.st_mode)


def _is_real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except OSError:
        return False


def vault_error(vault: Path, named: Path) -> ShardpyError:
    """A source that is an installed vault (or lies inside one): never shard content."""
    inside = "" if vault == named else f" ({named} lies inside it)"
    return ShardpyError(
        "SOURCE_IS_VAULT",
        f"{vault} is an installed vault, not a shard{inside}",
        f"To bring that vault up to date run `shardpy update` in {vault}; "
        "to install, name the shard it came from (`shardpy status` there shows it).",
        path=str(named),
    )


def refuse_vault(path: Path) -> None:
    """Refuse ``path`` as a source when it is, or lies inside, an installed vault."""
    from shardpy.vault.layout import find_vault_root

    vault = find_vault_root(path)
    if vault is not None:
        raise vault_error(vault, path.resolve())


def _refuse_vault_within(source_root: Path, shard_root: Path) -> None:
    from shardpy.vault.layout import STATE

    for directory in ignore_chain(source_root, shard_root):
        if (directory / STATE).is_file():
            raise vault_error(directory, shard_root)


def find_shard_root(source_root: Path, subdir: str | None) -> Path:
    root = _find_shard_root(source_root, subdir)
    _refuse_vault_within(source_root, root)
    return root


def _find_shard_root(source_root: Path, subdir: str | None) -> Path:
    if subdir is not None:
        return _explicit_root(source_root, subdir)
    if has_manifest(source_root):
        return source_root
    try:
        children = sorted(os.scandir(source_root), key=lambda e: e.name)
    except OSError as exc:
        raise ShardpyError(
            "SHARD_MANIFEST_MISSING",
            f"Cannot read the source directory {source_root}: {exc.strerror or exc}",
            "Check that the source is a readable directory.",
            path=str(source_root),
        ) from exc
    hits = [
        Path(entry.path)
        for entry in children
        if entry.name not in (".git", ".shardmind")
        and entry.is_dir(follow_symlinks=False)
        and has_manifest(Path(entry.path))
    ]
    if len(hits) == 1:
        return hits[0]
    if hits:
        names = [h.name for h in hits]
        raise ShardpyError(
            "SOURCE_AMBIGUOUS_SHARD",
            f"The source holds {len(hits)} shards: {', '.join(names)}",
            f"Name one with SOURCE//subdir, e.g. SOURCE//{names[0]}.",
            path=str(source_root),
            details={"candidates": names},
        )
    raise ShardpyError(
        "SHARD_MANIFEST_MISSING",
        f"No .shardmind/shard.yaml in {source_root} or in any directory directly below it",
        "A shard root holds .shardmind/shard.yaml; point at it, or name it with SOURCE//subdir.",
        path=str(source_root),
    )


def _explicit_root(source_root: Path, subdir: str) -> Path:
    rel = PurePosixPath(subdir.rstrip("/"))
    if (
        not subdir.strip("/")
        or rel.is_absolute()
        or any(p in ("..", ".") for p in rel.parts)
        or "\\" in subdir
    ):
        raise ShardpyError(
            "SOURCE_SUBDIR_INVALID",
            f"Refusing subdirectory {subdir!r}",
            "The //subdir must be a relative path inside the source, without '..'.",
            details={"subdir": subdir},
        )
    current = source_root
    for part in rel.parts:
        current = current / part
        try:
            st = os.lstat(current)
        except OSError as exc:
            raise ShardpyError(
                "SOURCE_SUBDIR_NOT_FOUND",
                f"The source has no directory {rel.as_posix()!r}",
                "Check the //subdir part of the source.",
                path=str(current),
            ) from exc
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise ShardpyError(
                "SOURCE_SUBDIR_INVALID",
                f"{rel.as_posix()!r} in the source is not a directory (links are not followed)",
                "The //subdir must name a real directory inside the source.",
                path=str(current),
            )
    if not has_manifest(current):
        raise ShardpyError(
            "SHARD_MANIFEST_MISSING",
            f"No .shardmind/shard.yaml in {rel.as_posix()!r}",
            "The //subdir must name the directory that holds .shardmind/shard.yaml.",
            path=str(current),
        )
    return current


def _chain_parts(source_root: Path, shard_root: Path) -> tuple[str, ...]:
    try:
        return shard_root.relative_to(source_root).parts
    except ValueError:
        raise ValueError(f"{shard_root} is not inside {source_root}") from None


def ignore_chain(source_root: Path, shard_root: Path) -> list[Path]:
    """Directories from the source root down to the shard root, both included."""
    chain = [source_root]
    for part in _chain_parts(source_root, shard_root):
        chain.append(chain[-1] / part)
    return chain


def migrations_dir(source_root: Path, shard_root: Path) -> Path | None:
    """The nearest ``migrations/`` directory on the chain, nearest the shard root first."""
    for directory in reversed(ignore_chain(source_root, shard_root)):
        candidate = directory / MIGRATIONS_DIRNAME
        if _is_real_dir(candidate):
            return candidate
    return None


COPIER_CONFIG_NAMES = ("copier.yml", "copier.yaml")


def is_copier_template(root: Path) -> bool:
    """copier.yml (or .yaml) at the root and no shardpy manifest. Here, not in
    sources/copier/, because every source's load asks it: a shard's commands
    never import copier's modules."""
    if (root / ".shardmind").exists():
        return False
    return any((root / name).is_file() for name in COPIER_CONFIG_NAMES)
