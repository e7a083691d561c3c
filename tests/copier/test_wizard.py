"""copier's questions shown through shardpy's UI (the wizard): each question
becomes a typed prompt, copier parses and validates the answer, a rejected
answer is asked again, `when` hides a question, a secret is never recorded."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from shardpy.flows.install import InstallOptions, install
from shardpy.shard.schema import Schema
from shardpy.ui import DefaultFor, Headless


@dataclass
class ScriptedUI(Headless):
    """Answers from a script (a list per question: later items answer a re-ask)."""

    script: dict[str, list[Any]] = field(default_factory=dict)
    asked: list[tuple[str, str, Any]] = field(default_factory=list)
    interactive: bool = True

    def ask_values(
        self, schema: Schema, keys: list[str], known: Mapping[str, Any], default_for: DefaultFor
    ) -> dict[str, Any]:
        (key,) = keys
        vdef = schema.values[key]
        self.asked.append((key, vdef.type, vdef.default))
        answers = self.script.get(key)
        return {key: answers.pop(0) if answers else default_for(key, {})}


def test_every_question_through_the_ui(template: Path, tmp_path: Path) -> None:
    ui = ScriptedUI(
        script={
            "project_name": ["", "Gamma"],  # the validator refuses "", the wizard asks again
            "count": [12.0],
            "use_ci": [False],
            "license": ["GPL-3.0"],
            "features": [["lint"]],
            "token": ["hunter2"],
        }
    )
    dest = tmp_path / "proj"
    result = install(InstallOptions(dest=dest, source=f"{template}@v1.0.0", cwd=tmp_path), ui)
    types = {key: kind for key, kind, _ in ui.asked}
    assert types == {
        "project_name": "string",
        "slug": "string",
        "count": "number",
        "ratio": "number",
        "use_ci": "boolean",
        "license": "select",
        "features": "multiselect",
        "extra": "string",
        "settings": "string",
        "src_dir": "string",
        "token": "string",
    }  # ci_name is not asked: `when: use_ci` is false
    assert [k for k, _, _ in ui.asked].count("project_name") == 2
    defaults = {key: default for key, _, default in ui.asked}
    assert defaults["slug"] == "gamma-app"  # computed from the answer before it
    assert defaults["extra"] == '{"a": 1, "b": ["x", "y"]}'
    answers = (dest / ".copier-answers.yml").read_text()
    assert "project_name: Gamma\n" in answers and "count: 12\n" in answers and "hunter2" not in answers
    assert "token-length 7" in (dest / "config.txt").read_text()
    assert "hunter2" not in json.dumps(result.to_json())
    assert not any(p.startswith("ci-") for p in (f.path for f in result.files))
