"""File migrations (CONTRACT §10, beyond ShardMind): renames and moves of
files and folders between shard versions.

One YAML file per target version in the shard's `migrations/` directory:

    version: 1.0.0
    description: why things moved
    renames:
      - {from: ".claude/commands/standup.md", to: ".claude/commands/daily-standup.md"}
      - {from: "notes/old/", to: "notes/new/"}     # a folder: both ends end with "/"

A migration applies when an update (or adopt) crosses into its version:
``old < version <= new``; several apply in version order, so renames chain.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.fsutil import check_relpath
from shardpy.shard.yamlio import line_of, load_yaml_file, to_plain
from shardpy.versions import is_version, parse_version


@dataclass(frozen=True)
class Rename:
    source: str
    target: str

    @property
    def folder(self) -> bool:
        return self.source.endswith("/")

    def apply(self, path: str) -> str | None:
        """The new path of ``path`` under this rename, or None if untouched."""
        if self.folder:
            return self.target + path[len(self.source) :] if path.startswith(self.source) else None
        return self.target if path == self.source else None


@dataclass(frozen=True)
class FileMigration:
    version: str
    description: str
    renames: tuple[Rename, ...]
    file: str


def _bad(display: str, raw: Any, loc: list[str | int], message: str) -> ShardpyError:
    return ShardpyError(
        "MIGRATION_INVALID",
        f"{display}: {'.'.join(map(str, loc)) or '(root)'}: {message}",
        "Fix the migration file (see docs/MIGRATIONS.md).",
        path=display,
        line=line_of(raw, loc),
    )


# Folders a migration may never move from or into: the engine's own, version control's.
_FORBIDDEN = frozenset({".shardmind", ".git", ".hg", ".svn", ".jj"})


def _engine_problem(path: str) -> str | None:
    from shardpy.fsutil import TMP_MARK
    from shardpy.vault.layout import VALUES_FILE

    parts = [p.lower() for p in path.rstrip("/").split("/")]
    if any(p in _FORBIDDEN for p in parts):
        return f"{path!r} lies in an engine or version-control folder"
    if parts == [VALUES_FILE] or any(p.startswith(TMP_MARK) for p in parts):
        return f"{path!r} is one of shardpy's own files"
    return None


def _rename(display: str, raw: Any, i: int, entry: Any) -> Rename:
    if (
        not isinstance(entry, dict)
        or not isinstance(entry.get("from"), str)
        or not isinstance(entry.get("to"), str)
    ):
        raise _bad(display, raw, ["renames", i], "each rename needs `from` and `to` paths")
    source, target = str(entry["from"]), str(entry["to"])
    for value in (source, target):
        try:
            check_relpath(value.rstrip("/"))
        except ShardpyError:
            raise _bad(display, raw, ["renames", i], f"unsafe path {value!r}") from None
    for value in (source, target):
        problem = _engine_problem(value)
        if problem:
            raise _bad(display, raw, ["renames", i], problem)
    if source.endswith("/") != target.endswith("/"):
        raise _bad(
            display, raw, ["renames", i], "a folder rename needs a trailing '/' on both `from` and `to`"
        )
    if source == target:
        raise _bad(display, raw, ["renames", i], "`from` and `to` are the same")
    return Rename(source, target)


def parse_migration(raw: Any, *, display: str, fallback_version: str) -> FileMigration:
    if not isinstance(raw, dict):
        raise _bad(display, raw, [], "a migration file is a mapping with `version` and `renames`")
    version = str(raw.get("version", fallback_version))
    if not is_version(version):
        raise _bad(display, raw, ["version"], f"{version!r} is not a semantic version")
    renames = raw.get("renames") or []
    if not isinstance(renames, list):
        raise _bad(display, raw, ["renames"], "`renames` must be a list")
    plain = to_plain(raw)
    return FileMigration(
        version=version.removeprefix("v"),
        description=str(plain.get("description") or ""),
        renames=tuple(_rename(display, raw, i, e) for i, e in enumerate(renames)),
        file=display,
    )


def load_file_migrations(directory: Path | None) -> list[FileMigration]:
    if directory is None or not directory.is_dir():
        return []
    out: list[FileMigration] = []
    for path in sorted(directory.iterdir()):
        if path.suffix not in (".yaml", ".yml") or not path.is_file() or path.is_symlink():
            continue
        display = f"migrations/{path.name}"
        raw = load_yaml_file(
            path, display=display, code="MIGRATION_INVALID", missing_code="MIGRATION_INVALID"
        )
        out.append(parse_migration(raw, display=display, fallback_version=path.stem))
    return sorted(out, key=lambda m: parse_version(m.version))


def _in_produced(path: str, produced: set[str]) -> bool:
    if path.endswith("/"):
        return any(p.startswith(path) for p in produced)
    return path in produced


def check_scope(migrations: Iterable[FileMigration], produced: set[str]) -> None:
    """A rename touching a dot folder (``.claude/``, ``.obsidian/``) must move the shard's own
    produced paths (old or new version): a hidden folder is otherwise the user's or a tool's."""
    for migration in migrations:
        for rename in migration.renames:
            for value in (rename.source, rename.target):
                hidden = any(p.startswith(".") for p in value.rstrip("/").split("/"))
                if hidden and not _in_produced(value, produced):
                    raise ShardpyError(
                        "MIGRATION_INVALID",
                        f"{migration.file}: the rename {rename.source} -> {rename.target} reaches into "
                        f"the hidden folder {value!r}, which the shard does not produce",
                        "A migration may move only the shard's own paths or visible user folders; "
                        "report this to the shard's author.",
                        path=migration.file,
                    )


def select_migrations(migrations: Iterable[FileMigration], old: str, new: str) -> list[FileMigration]:
    lo, hi = parse_version(old), parse_version(new)
    return [m for m in migrations if lo < parse_version(m.version) <= hi]


def rename_path(path: str, migrations: Iterable[FileMigration]) -> str:
    """Where ``path`` ends up after every migration, applied in order."""
    for migration in migrations:
        for rename in migration.renames:
            moved = rename.apply(path)
            if moved is not None:
                path = moved
                break
    return path


def rename_map(paths: Iterable[str], migrations: list[FileMigration]) -> dict[str, str]:
    """old path → new path, for the paths that move."""
    out: dict[str, str] = {}
    for path in paths:
        moved = rename_path(path, migrations)
        if moved != path:
            out[path] = moved
    return out
