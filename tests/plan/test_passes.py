"""The passes after the update planner, pure: an in-memory vault as the DiskView."""

from __future__ import annotations

from dataclasses import dataclass, field

from shardpy.fsutil import sha256_bytes
from shardpy.plan.decide import EDIT, answer, answer_with_edit, open_questions
from shardpy.plan.links import rewrite_links
from shardpy.plan.moves import user_move_actions, user_moves
from shardpy.plan.update import FileAction, Outcome
from shardpy.shard.migrations import FileMigration, Rename
from shardpy.vault.state import FileRecord


@dataclass
class MemoryVault:
    """Every DiskView read, from a dict of path → bytes."""

    files: dict[str, bytes] = field(default_factory=dict)

    def hash(self, path: str) -> str | None:
        data = self.files.get(path)
        return None if data is None else sha256_bytes(data)

    def read(self, path: str) -> bytes:
        return self.files[path]

    def stored(self, path: str) -> bytes | None:
        return self.files.get(path)

    def exists(self, path: str) -> bool:
        return path in self.files or any(p.startswith(path + "/") for p in self.files)

    def files_under(self, folder: str) -> list[str]:
        return [p for p in self.files if p.startswith(folder)]

    def notes(self) -> list[str]:
        return [p for p in self.files if p.endswith(".md")]


def act(path: str, kind: str = "keep", **outcome: object) -> FileAction:
    record = FileRecord(template=path, rendered_hash="0" * 64)
    return FileAction(
        path, kind, "why", "user_content", None, {"apply": Outcome("x", record=record, **outcome)}, "apply"
    )  # type: ignore[arg-type]


def test_links_rewritten_in_planned_bytes_kept_files_and_untracked_notes() -> None:
    disk = MemoryVault(
        {"kept.md": b"[[Old]]", "mine.md": b"see [[Old]]", "plain.md": b"none", "bin.md": b"\xff[[Old]]"}
    )
    planned = [act("new.md", "update", write=b"to [[Old]]"), act("kept.md"), act("gone.md", delete=True)]
    out = rewrite_links(disk, planned, {"Old.md": "New.md"}, tracked={"kept.md", "new.md", "gone.md"})
    assert planned[0].outcome.write == b"to [[Old]]"  # a new list: the planner's actions are not changed
    by_path = {a.path: a for a in out}
    assert by_path["new.md"].outcome.write == b"to [[New]]"
    assert by_path["kept.md"].outcome.write == b"[[New]]"
    assert by_path["gone.md"].outcome.delete and by_path["gone.md"].outcome.write is None
    assert by_path["mine.md"].action == "links" and by_path["mine.md"].links_rewritten == 1
    assert "plain.md" not in by_path and "bin.md" not in by_path
    assert rewrite_links(disk, planned, {}, tracked=set()) is planned


def test_user_files_move_with_their_folder_unless_the_target_is_taken() -> None:
    disk = MemoryVault({"a/mine.md": b"m", "a/tracked.md": b"t", "a/taken.md": b"x", "b/taken.md": b"y"})
    migrations = [FileMigration("1.1.0", "", (Rename("a/", "b/"),), "m.yaml")]
    moves = user_moves(disk, {"a/tracked.md"}, migrations, outputs={})
    assert moves == {"a/mine.md": "b/mine.md"}
    assert user_moves(disk, set(), migrations, outputs={"b/mine.md": None}).get("a/mine.md") is None
    actions = user_move_actions(disk, moves)
    assert [(a.path, a.action, a.from_path) for a in actions] == [
        ("b/mine.md", "move", "a/mine.md"),
        ("a/mine.md", "moved", None),
    ]
    assert actions[0].outcome.write == b"m" and actions[1].outcome.delete


def test_questions_one_per_group_conflicts_skipped_when_answered_edit_offered() -> None:
    two = {"apply": Outcome("delete"), "keep": Outcome("keep")}
    mod_a = FileAction(
        "m/a.md", "delete", "", "infrastructure", "m", dict(two), "apply", question="q", group="g"
    )
    mod_b = FileAction(
        "m/b.md", "delete", "", "infrastructure", "m", dict(two), "apply", question="q", group="g"
    )
    sides = {k: Outcome(k, write=k.encode()) for k in ("keep", "theirs", "markers")}
    conflict = FileAction("c.md", "conflict", "", "user_content", None, sides, "keep", question="c?")
    questions = open_questions([mod_a, conflict, mod_b], conflicts_answered=False)
    assert [q.actions for q in questions] == [(mod_a, mod_b), (conflict,)]
    assert [k for k, _ in questions[1].choices] == ["keep", "theirs", "markers", EDIT]
    answer(questions[0], "keep")
    assert mod_a.choice == mod_b.choice == "keep"
    answer_with_edit(questions[1], "resolved\n")
    assert conflict.choice == EDIT and conflict.outcome.write == b"resolved\n"
    assert [q.actions for q in open_questions([mod_a, conflict], conflicts_answered=True)] == [(mod_a,)]
