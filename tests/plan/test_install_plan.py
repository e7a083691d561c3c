"""The install plan is pure over a destination view (issue 27: every plan in
plan/): the same decisions flows/install.py took reading the disk itself,
checked here on an in-memory folder."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_bytes
from shardpy.plan.install import EntryKind, backup_names, plan_install
from shardpy.shard.produce import Output


@dataclass
class Folder:
    """A destination as a map: path → bytes (a file) or None (a folder)."""

    entries: dict[str, bytes | None] = field(default_factory=dict)

    def kind(self, path: str) -> EntryKind:
        if path not in self.entries:
            return "missing"
        return "folder" if self.entries[path] is None else "file"

    def hash(self, path: str) -> str | None:
        data = self.entries.get(path)
        return None if data is None else sha256_bytes(data)

    def lexists(self, path: str) -> bool:
        return path in self.entries


def out(path: str, data: bytes = b"x\n") -> Output:
    return Output(path, path, data, None, False)


OUTPUTS = {p: out(p) for p in ("a.md", "brain/b.md", "brain/c.md", "docs/d.md")}


def test_create_replace_identical_and_a_file_in_the_way() -> None:
    dest = Folder({"a.md": b"x\n", "brain": None, "brain/b.md": b"mine\n", "docs": b"a file\n"})
    plan = plan_install(OUTPUTS, dest, classify=lambda p: "infrastructure", also_written=["values.yaml"])
    actions = {f.path: f.action for f in plan.files}
    assert actions == {
        "a.md": "identical",
        "brain/b.md": "replace",
        "brain/c.md": "create",
        "docs/d.md": "create",
    }
    assert plan.colliding == ["brain/b.md", "docs"] and plan.identical == {"a.md"}


def test_no_destination_yet_creates_everything() -> None:
    plan = plan_install(OUTPUTS, None, classify=lambda p: "user_content")
    assert {f.action for f in plan.files} == {"create"} and plan.colliding == []


def test_a_folder_where_a_file_goes_is_refused() -> None:
    with pytest.raises(ShardpyError) as info:
        plan_install(OUTPUTS, Folder({"a.md": None}), classify=str)
    assert info.value.code == "INSTALL_COLLISION" and info.value.path == "a.md"


def test_backup_names_never_take_a_name_in_use() -> None:
    dest = Folder({"a.md": b"old\n", "a.md.shardpy-backup-T": b"earlier\n"})
    names = backup_names(["a.md", "b.md"], ["b.md.shardpy-backup-T"], "T", dest)
    assert names == {"a.md": "a.md.shardpy-backup-T-2", "b.md": "b.md.shardpy-backup-T-2"}
