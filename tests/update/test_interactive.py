"""Interactive update decisions through the UI interface (a scripted UI
stands in for the terminal): conflicts, skip, edit, module questions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from shardpy.flows.update import UpdateOptions, update
from shardpy.shard.schema import Schema
from shardpy.ui import ModuleChoice
from tests.update.kit import Scenario, chdir
from tests.update.test_table import NOTE_V1, base_files


@dataclass
class ScriptedUI:
    answers: list[str]
    edited: str | None = None
    interactive: bool = True
    asked: list[str] = field(default_factory=list)
    shown: list[str] = field(default_factory=list)

    def confirm(self, question: str, *, default: bool) -> bool:
        return default

    def choose(self, question: str, choices: list[tuple[str, str]], *, default: str) -> str:
        self.asked.append(question)
        assert self.answers, f"unexpected question: {question}"
        answer = self.answers.pop(0)
        assert answer in {c for c, _ in choices}, (answer, choices)
        return answer

    def ask_values(
        self, schema: Schema, keys: list[str], known: Mapping[str, Any], default_for: Callable[[str], Any]
    ) -> dict[str, Any]:
        return {k: default_for(k) for k in keys}

    def review_modules(self, choices: list[ModuleChoice], selected: set[str]) -> set[str]:
        return selected

    def show_conflict(self, path: str, excerpts: list[str]) -> None:
        self.shown.extend(excerpts)

    def edit_file(self, path: str, text: str) -> str | None:
        assert "<<<<<<< yours" in text
        return self.edited

    def progress(self, label: str, total: int) -> Callable[[int, int], None] | None:
        return None


def conflicted(sc: Scenario, version: str = "1.1.0") -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.write("brain/Note.md", NOTE_V1.replace("beta", "beta (mine)"))
    sc.shard(version, base_files(NOTE_V1.replace("beta", "beta (shard)")))


def run(sc: Scenario, ui: ScriptedUI, **opts: Any) -> Any:
    with chdir(sc.vault):
        return update(UpdateOptions(**opts), ui)


def test_conflict_shown_then_accept_shard(sc: Scenario) -> None:
    conflicted(sc)
    ui = ScriptedUI(["theirs"])
    run(sc, ui)
    assert any("beta (mine)" in e and "beta (shard)" in e for e in ui.shown)
    assert sc.read("brain/Note.md") == NOTE_V1.replace("beta", "beta (shard)")


def test_conflict_edit_in_editor(sc: Scenario) -> None:
    conflicted(sc)
    ui = ScriptedUI(["edit"], edited=NOTE_V1.replace("beta", "beta (resolved)"))
    run(sc, ui)
    assert sc.read("brain/Note.md") == NOTE_V1.replace("beta", "beta (resolved)")
    assert sc.ownership("brain/Note.md") == "modified"


def test_conflict_skip_asks_again_next_update(sc: Scenario) -> None:
    conflicted(sc)
    run(sc, ScriptedUI(["skip"]))
    assert sc.read("brain/Note.md") == NOTE_V1.replace("beta", "beta (mine)")
    sc.shard("1.2.0", {**base_files(NOTE_V1.replace("beta", "beta (shard)")), "brain/Other.md": "other 2\n"})
    ui = ScriptedUI(["markers"])
    run(sc, ui)
    assert ui.asked and "brain/Note.md" in ui.asked[0]
    assert "<<<<<<< yours\nbeta (mine)\n=======\nbeta (shard)\n>>>>>>> shard 1.2.0\n" in sc.read(
        "brain/Note.md"
    )


def test_keep_mine_is_not_asked_again(sc: Scenario) -> None:
    conflicted(sc)
    run(sc, ScriptedUI(["keep"]))
    sc.shard("1.2.0", {**base_files(NOTE_V1.replace("beta", "beta (shard)")), "brain/Other.md": "other 2\n"})
    ui = ScriptedUI([])
    run(sc, ui)
    assert ui.asked == []
    assert sc.read("brain/Note.md") == NOTE_V1.replace("beta", "beta (mine)")


def test_deselected_module_question_asked_once(sc: Scenario) -> None:
    sc.shard("1.0.0", {**base_files(), "extra/y.md": "y\n", "extra/z.md": "z\n"})
    sc.install("--defaults")
    ui = ScriptedUI(["keep"])
    run(sc, ui, remove_modules=["extra"])
    assert len(ui.asked) == 1
    assert sc.read("extra/y.md") == "y\n" and sc.read("extra/z.md") == "z\n"
    assert "extra/y.md" not in sc.state()["files"]


def test_on_conflict_flag_answers_every_conflict(sc: Scenario) -> None:
    conflicted(sc)
    ui = ScriptedUI([])
    run(sc, ui, on_conflict="theirs")
    assert ui.asked == []
    assert sc.read("brain/Note.md") == NOTE_V1.replace("beta", "beta (shard)")
