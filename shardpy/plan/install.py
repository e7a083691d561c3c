"""The install plan: what each produced file does to the destination folder.

Pure over a :class:`DestView` (the flow builds one, ``flows.destdisk.DestDisk``):
planning reads the destination only through it and writes nothing. The plan
says, per output, whether it is created, replaces what is there (after a
backup), or is already there byte for byte; which existing paths are in the way
(a file where the shard needs a folder counts as one); and the backup name each
replaced path gets. ``flows/install.py`` turns it into the transaction's ops.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal, Protocol

from shardpy.errors import ShardpyError
from shardpy.plan.actions import InstallAction
from shardpy.shard.produce import Output

EntryKind = Literal["missing", "file", "folder", "other"]


class DestView(Protocol):
    """Every fact about the destination that planning may use."""

    def kind(self, path: str) -> EntryKind:
        """What is at ``path`` itself (never following a link); a link anywhere on the
        way, the entry included, is refused (``PATH_SYMLINK``): never written through."""
        ...

    def hash(self, path: str) -> str | None:
        """sha256 of the file at ``path`` (None: no readable file)."""
        ...

    def lexists(self, path: str) -> bool: ...


@dataclass
class PlannedFile:
    path: str
    module: str | None
    rendered: bool
    content_class: str
    action: InstallAction  # plan.actions: write it, back up what is there and write, or nothing

    @property
    def target(self) -> str:
        """The path, under the name every plan's entry has (``plan.actions.PlannedAction``)."""
        return self.path


@dataclass(frozen=True)
class InstallPlan:
    files: list[PlannedFile]
    colliding: list[str]  # existing paths replaced (after a backup), in plan order
    identical: frozenset[str]  # outputs already there byte for byte: not written


def plan_install(
    outputs: Mapping[str, Output],
    dest: DestView | None,
    *,
    classify: Callable[[str], str],
    also_written: Iterable[str] = (),
) -> InstallPlan:
    """The plan for ``outputs`` into ``dest`` (None: the folder does not exist yet).
    ``also_written``: paths the install writes besides the outputs (the values file)."""
    colliding, identical = _collisions(dest, outputs, also_written) if dest is not None else ([], set())
    files = [
        PlannedFile(
            p,
            o.module,
            o.template,
            classify(p),
            "replace" if p in colliding else "identical" if p in identical else "create",
        )
        for p, o in sorted(outputs.items())
    ]
    return InstallPlan(files, colliding, frozenset(identical))


def _collisions(
    dest: DestView, outputs: Mapping[str, Output], also_written: Iterable[str]
) -> tuple[list[str], set[str]]:
    """Existing paths the install would replace (different bytes) and those
    that already hold exactly the bytes it would write."""
    colliding: list[str] = []
    identical: set[str] = set()
    for path in [*sorted(outputs), *also_written]:
        kind = dest.kind(path)  # refuses links on the way: never write through one
        blocker = _file_in_the_way(dest, path)
        if blocker is not None:
            # A file where the shard needs a folder: replaced (after a backup) like any collision.
            if blocker not in colliding:
                colliding.append(blocker)
            continue
        if kind == "folder":
            raise ShardpyError(
                "INSTALL_COLLISION",
                f"{path} exists in the destination as a folder, where the shard installs a file",
                "Move that folder away or install into another directory.",
                path=path,
            )
        if kind == "missing":
            continue
        out = outputs.get(path)
        if out is not None and dest.hash(path) == out.sha256:
            identical.add(path)
        else:
            colliding.append(path)
    return colliding, identical


def _file_in_the_way(dest: DestView, path: str) -> str | None:
    """The first parent of ``path`` that exists in the destination as something
    other than a folder, if any."""
    parts = path.split("/")[:-1]
    for i in range(len(parts)):
        rel = "/".join(parts[: i + 1])
        kind = dest.kind(rel)
        if kind == "missing":
            return None
        if kind != "folder":
            return rel
    return None


def backup_names(colliding: list[str], outputs: Iterable[str], stamp: str, dest: DestView) -> dict[str, str]:
    """Each replaced path → ``<path>.shardpy-backup-<stamp>``, numbered when that
    name is taken (by an output, another backup, or anything in the folder)."""
    taken = set(outputs)
    names: dict[str, str] = {}
    for path in colliding:
        name = f"{path}.shardpy-backup-{stamp}"
        n = 1
        while name in taken or dest.lexists(name):
            n += 1
            name = f"{path}.shardpy-backup-{stamp}-{n}"
        names[path] = name
        taken.add(name)
    return names
