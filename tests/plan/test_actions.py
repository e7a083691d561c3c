"""The one action vocabulary (shardpy/plan/actions.py) and its one table style map.

mypy --strict checks the rest: a word in a subset but not in the vocabulary
(``_in_vocabulary``), a misspelt group member or style key, and any ``==``
against a word no Literal holds (strict equality) are type errors.
"""

from __future__ import annotations

from typing import get_args

from shardpy.cli.table import ACTION_STYLE, action_cell
from shardpy.plan import actions
from shardpy.plan.actions import FileActionKind
from shardpy.plan.importplan import NoteRow, Step
from shardpy.plan.install import PlannedFile
from shardpy.plan.update import FileAction, Outcome

VOCABULARY = get_args(FileActionKind)


def test_every_word_is_listed_once() -> None:
    assert len(VOCABULARY) == len(set(VOCABULARY))


def test_every_subset_word_is_in_the_vocabulary() -> None:
    for command, words in actions.SUBSETS.items():
        assert words, command
        assert set(words) <= set(VOCABULARY), command


def test_every_word_belongs_to_a_command() -> None:
    used = {w for words in actions.SUBSETS.values() for w in words}
    assert used == set(VOCABULARY)


def test_the_subsets_are_the_commands_literals() -> None:
    assert actions.SUBSETS["update"] == get_args(actions.ActionKind)
    assert actions.SUBSETS["install"] == ("create", "replace", "identical")
    # the order the import summary (and its JSON) lists the counts in
    summary_order = ("create", "update", "unchanged", "merge", "conflict", "collision", "error")
    assert summary_order == actions.IMPORT_ACTIONS
    assert set(get_args(actions.WriteKind)) <= set(actions.IMPORT_ACTIONS)
    assert {"create", "update", "merge", "conflict"} == actions.WRITE_KINDS


def test_every_word_has_one_meaning() -> None:
    assert set(actions.MEANING) == set(VOCABULARY)
    for word, meaning in actions.MEANING.items():
        assert meaning.strip(), word


def test_every_word_has_a_table_style() -> None:
    assert set(ACTION_STYLE) == set(VOCABULARY)


def test_the_update_table_keeps_its_colours() -> None:
    styled = {w: s for w, s in ACTION_STYLE.items() if s}
    assert styled == {
        "add": "green",
        "update": "cyan",
        "merge": "cyan",
        "conflict": "bold red",
        "delete": "red",
        "orphan": "yellow",
        "keep": "magenta",
        "missing": "yellow",
        "restore": "green",
        "links": "blue",
        "move": "blue",
        "moved": "blue",
    }


def test_two_words_for_one_concept_never_meet_in_one_command() -> None:
    for word, same in actions.SAME_AS.items():
        assert {word, same} <= set(VOCABULARY)
        for command, words in actions.SUBSETS.items():
            assert not (word in words and same in words), (command, word, same)


def test_the_groups_are_inside_their_subsets() -> None:
    update = set(get_args(actions.ActionKind))
    for group in (
        actions.ADDED,
        actions.DROPPED,
        actions.BOTH_CHANGED,
        actions.ADOPT_REPLACED,
        actions.ADOPT_KEPT,
        actions.ADOPT_SHARD_MAY_WIN,
    ):
        assert group and group <= update
    for group in (actions.IMPORTED, actions.IMPORT_FAILED, actions.WRITE_KINDS):
        assert group and group <= set(actions.IMPORT_ACTIONS)


def _file_action(kind: actions.ActionKind) -> FileAction:
    return FileAction("a/b.md", kind, "why", "content", None, {"apply": Outcome("x")}, "apply")


def test_every_plan_entry_names_its_action_and_target() -> None:
    row = NoteRow("create", "note", None, "n", "src.md", "Imported/n.md", 0)
    step = Step(0, "create", "note", "src.md", "Imported/n.md", None, "0" * 64, "1" * 64, "k", "2" * 64)
    planned = PlannedFile("x.md", None, True, "content", "identical")
    entries: list[actions.PlannedAction] = [_file_action("add"), row, step, planned]
    assert [(e.action, e.target) for e in entries] == [
        ("add", "a/b.md"),
        ("create", "Imported/n.md"),
        ("create", "Imported/n.md"),
        ("identical", "x.md"),
    ]


def test_action_cell_colours_by_the_one_map() -> None:
    # A styled run (text, style), no longer console markup (cli/table.py's Cell).
    assert action_cell(_file_action("conflict")) == (("conflict", "bold red"),)
    assert action_cell(_file_action("unchanged")) == "unchanged"
