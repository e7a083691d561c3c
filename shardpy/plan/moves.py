"""After the update planner: user files inside a folder a file migration
renames go along with the folder. Pure: the vault is seen through the
planner's :class:`~shardpy.plan.update.DiskView`."""

from __future__ import annotations

from collections.abc import Collection

from shardpy.plan.update import DiskView, FileAction, Outcome
from shardpy.shard.migrations import FileMigration, rename_map


def user_moves(
    disk: DiskView, tracked: Collection[str], migrations: list[FileMigration], outputs: Collection[str]
) -> dict[str, str]:
    """Old path → new path of the user's own files (not ``tracked``) inside
    folders ``migrations`` move; never onto a produced file or anything on disk."""
    folders = [r.source for m in migrations for r in m.renames if r.folder]
    if not folders:
        return {}
    found = [rel for folder in folders for rel in disk.files_under(folder) if rel not in tracked]
    moves = rename_map(found, migrations)
    return {a: b for a, b in moves.items() if b not in outputs and not disk.exists(b)}


def user_move_actions(disk: DiskView, moves: dict[str, str]) -> list[FileAction]:
    """Two actions per move: the file written at its new path, removed at its old."""
    actions: list[FileAction] = []
    for old, new in sorted(moves.items()):
        data = disk.stored(old)
        if data is None:
            continue  # gone since the folder was listed: nothing to move
        actions.append(
            FileAction(
                new,
                "move",
                f"your file moved with its folder from {old}",
                "user_content",
                None,
                {"apply": Outcome("move", write=data)},
                "apply",
                from_path=old,
            )
        )
        actions.append(
            FileAction(
                old,
                "moved",
                f"moved to {new}",
                "user_content",
                None,
                {"apply": Outcome("move away", delete=True)},
                "apply",
            )
        )
    return actions
