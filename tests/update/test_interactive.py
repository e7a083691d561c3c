"""Interactive update decisions through the UI interface (a scripted UI
stands in for the terminal): conflicts, skip, edit, module questions."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

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


EDITOR_SCRIPT = """import sys
p = sys.argv[1]
data = open(p, "rb").read()
start, end = data.index(b"<<<<<<<"), data.index(b">>>>>>>")
end = data.index(b"\\n", end) + 1
open(p, "wb").write(data[:start] + b"RESOLVED\\r\\n" + data[end:])
"""


@pytest.mark.parametrize(
    ("editor", "want"),
    [("resolve", "line1\r\nRESOLVED\r\nline3\r\n"), ("false", None), ("true", None)],
    ids=["resolved", "editor-failed", "markers-left"],
)
def test_edit_in_editor_keeps_crlf_and_takes_only_a_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, editor: str, want: str | None
) -> None:
    """Read back as text, a CRLF file resolved in $EDITOR came back LF in every line; an editor
    that failed, or left the markers, had its file taken as the answer (exit 0, markers in the
    note). Such an answer is refused and the question asked again (None)."""
    import sys

    from shardpy.cli.prompts import TerminalUI

    if editor == "resolve":
        script = tmp_path / "resolve.py"
        script.write_text(EDITOR_SCRIPT, encoding="utf-8")
        editor = f"{sys.executable} {script}"
    monkeypatch.setenv("VISUAL", editor)
    text = "line1\r\n<<<<<<< yours\r\nmine\r\n=======\r\nshard\r\n>>>>>>> shard 1.1.0\r\nline3\r\n"
    assert TerminalUI().edit_file("brain/a.md", text) == want
