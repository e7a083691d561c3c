"""A plan's steps made again for ``--apply``, bytes and all, each checked against the plan.

The import's plan (``plan/importplan.py``) keeps each step's identity, not
its bytes: planning writes nothing (issue 27), and 20,000 notes' bytes held
until the journal exists would cost tens of MB. Once the run's journal exists,
the apply stage (``flows/importflow.py``) takes the steps from here: the
second pass runs again over the records that have a step, through the one
function that decides a record's fate (``decide.plan_record``, in worker
processes when it pays), this time making the bytes. A step that comes out
other than planned (another action, another ``pre_sha`` or render key: its
source or its vault file changed since the plan was made) is refused: it is
not journaled, so not written, and its plan row says why (``checked``).

This module writes nothing either: it yields the steps; the flow journals them.
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import cast

from shardpy.importers.decide import Outcome, Work
from shardpy.importers.models import Record
from shardpy.importers.pool import collector_settled, plan_all
from shardpy.plan.actions import WriteKind
from shardpy.plan.importplan import NoteRow, Progress, Step, StepWrite

# A planned note whose step would now differ: not written this run (see ``checked``).
CHANGED_MEANWHILE = "changed in the vault while importing: left as it is"


@dataclass(slots=True)
class Replay:
    """A ``plan.importplan.StepSource``: the plan's second pass again, over its steps' records."""

    work: Work  # the plan's second pass, its records those with a step, making bytes ("bytes")
    rows: list[NoteRow]  # their plan rows, in step order (``rows[i].step == i``)

    def __call__(self, progress: Progress | None) -> Generator[StepWrite, None, None]:
        total = len(self.rows)
        done = 0
        with collector_settled() as settle:
            settle()  # the planning state stays out of the collector's sight (pool.collector_settled)
            for lo, part in plan_all(self.work):
                for i, outcome in enumerate(part, lo):
                    made = checked(self.work.records[i], self.rows[i], outcome)
                    if made is not None:
                        yield made
                done += len(part)
                if progress is not None:
                    progress("record", done, total)


def checked(rec: Record, row: NoteRow, outcome: Outcome) -> StepWrite | None:
    """The step ``outcome`` makes, if it is the one ``row`` planned; else None, and ``row`` says why.

    A step made other than planned (its source changed since it was read, its vault file since the
    plan looked at it) is not written this run, as a note changed while the notes are written is
    left alone (flows/importflow._fold_outcomes): its row takes the new outcome when that writes
    nothing (an error, a collision), else says the note changed meanwhile.
    """
    action, _, detail, _, _, _, made = outcome
    if isinstance(made, tuple) and len(made) == 7 and row.step is not None:
        pre_sha, new_sha, render_key, base_sha, new, pre, base = made
        if action == row.action and pre_sha == row.pre_sha and render_key == row.render_key:
            step = Step(
                row.step,
                cast(WriteKind, action),  # a step is made only for an action that writes (decide._Emit)
                rec.kind,
                rec.source_path,
                rec.target,
                pre_sha,
                new_sha,
                rec.source_hash,
                render_key,
                base_sha,
            )
            return step, new, pre, base
    row.step = None
    row.observations = 0
    if made is None:
        row.action, row.detail = action, detail
    else:
        row.action, row.detail = "conflict", CHANGED_MEANWHILE
    return None
