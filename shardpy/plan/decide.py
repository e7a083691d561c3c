"""The questions an update plan leaves open, and what an answer does to it.

The planner computes every outcome of an open action and its default
choice; here is which questions that makes (a deselected module's files are
one question), what each offers, and how an answer (or an edit of the
conflict markers) becomes the action's choice. Pure: the flow only asks
them through the UI.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from shardpy.plan.update import FileAction

EDIT = "edit"  # the extra choice on a conflict with markers: open them in $EDITOR


@dataclass(frozen=True)
class Question:
    """One question: the actions its answer decides (more than one for a group)."""

    actions: tuple[FileAction, ...]
    text: str
    choices: list[tuple[str, str]]
    default: str
    show_conflicts: bool  # show the merge's conflict excerpts before asking

    @property
    def path(self) -> str:
        return self.actions[0].path

    def conflicts(self) -> list[str]:
        merge = self.actions[0].merge
        return merge.describe_conflicts() if merge is not None else []

    def markers(self) -> str:
        """The conflict-marker version of the file, as text to edit."""
        return (self.actions[0].outcomes["markers"].write or b"").decode("utf-8", "replace")


def open_questions(actions: list[FileAction], *, conflicts_answered: bool) -> list[Question]:
    """The questions to ask, in plan order; ``conflicts_answered``: --on-conflict
    chose for every conflict, so none is asked."""
    groups: dict[str, list[FileAction]] = {}
    for action in actions:
        if action.question is not None and action.group is not None:
            groups.setdefault(action.group, []).append(action)
    questions: list[Question] = []
    for action in actions:
        if action.question is None:
            continue
        if action.group is not None:
            members = groups[action.group]
            if members[0] is action:  # asked once, where the group first appears
                questions.append(_group_question(members))
        elif not (action.action == "conflict" and conflicts_answered):
            questions.append(_question(action))
    return questions


def _group_question(members: list[FileAction]) -> Question:
    first = members[0]
    choices = [(k, v.label) for k, v in first.outcomes.items()]
    return Question(tuple(members), first.question or "", choices, first.choice, show_conflicts=False)


def _question(action: FileAction) -> Question:
    choices = [(k, v.label) for k, v in action.outcomes.items()]
    if action.action == "conflict" and "markers" in action.outcomes:
        choices.insert(3, (EDIT, "open in $EDITOR"))
    has_conflicts = action.merge is not None and action.merge.has_conflicts
    return Question((action,), action.question or "", choices, action.choice, show_conflicts=has_conflicts)


def answer(question: Question, choice: str) -> None:
    """The user chose ``choice`` (one of the question's keys other than EDIT)."""
    for action in question.actions:
        action.choice = choice


def answer_with_edit(question: Question, edited: str) -> None:
    """The user resolved the conflict by editing the markers into ``edited``."""
    action = question.actions[0]
    markers = action.outcomes["markers"]
    action.outcomes[EDIT] = replace(markers, label="your edit", write=edited.encode("utf-8"))
    action.choice = EDIT
