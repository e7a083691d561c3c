"""Issue 26, item 22: `update` on a terminal asks about modules only when the
release adds a removable one (marked new), never an unlabelled "Modules to
install" checkbox when no module changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardpy.ui import ModuleChoice
from tests.shardkit import Cli
from tests.update.kit import DEFAULT_MODULES, Scenario
from tests.update.test_interactive import ScriptedUI, run
from tests.update.test_table import base_files


class Recording(ScriptedUI):
    reviews: list[list[ModuleChoice]]

    def review_modules(self, choices: list[ModuleChoice], selected: set[str]) -> set[str]:
        self.reviews.append(choices)
        return selected


@pytest.fixture
def sc(tmp_path: Path, cli: Cli) -> Scenario:
    return Scenario(tmp_path, cli)


def test_no_module_question_when_no_module_changed(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    sc.shard("1.1.0", {**base_files(), "brain/Other.md": "other, changed\n"})
    ui = Recording([])
    ui.reviews = []
    run(sc, ui)
    assert ui.reviews == []
    assert sc.read("brain/Other.md") == "other, changed\n"


def test_a_new_removable_module_is_asked_and_marked(sc: Scenario) -> None:
    sc.shard("1.0.0", base_files())
    sc.install("--defaults")
    modules = {**DEFAULT_MODULES, "fresh": {"label": "Fresh", "paths": ["fresh/"], "removable": True}}
    sc.shard("1.1.0", {**base_files(), "fresh/f.md": "f\n"}, modules=modules)
    ui = Recording([])
    ui.reviews = []
    run(sc, ui)
    assert len(ui.reviews) == 1
    assert [c.id for c in ui.reviews[0] if c.new] == ["fresh"]
