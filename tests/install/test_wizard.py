"""The install wizard, driven through prompt_toolkit pipe input: one prompt
per value type, group order, validation with re-prompt, computed defaults
shown resolved, and the module review with file counts."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.plain_text import PlainTextOutput

from shardpy.cli.prompts import TerminalUI
from shardpy.errors import Cancelled
from shardpy.flows.choices import collect_values, ordered_keys
from shardpy.flows.install import InstallOptions, install
from shardpy.shard.schema import parse_schema
from tests.shardkit import make_shard, read_json

UP, DOWN, ENTER, SPACE, CLEAR = "\x1b[A", "\x1b[B", "\r", " ", "\x15"  # CLEAR: Ctrl-U (erase the line)

SCHEMA: dict[str, Any] = {
    "groups": [
        {"id": "who", "label": "About you", "description": "Two questions"},
        {"id": "setup", "label": "Setup"},
    ],
    "values": {
        # declared out of group order on purpose
        "size": {
            "type": "number",
            "default": 3,
            "min": 1,
            "max": 10,
            "group": "setup",
            "message": "Team size?",
        },
        "user_name": {
            "type": "string",
            "default": "",
            "placeholder": "Jane Example",
            "group": "who",
            "message": "Your name?",
        },
        "greeting": {
            "type": "string",
            "default": "{{ 'Hi ' ~ user_name }}",
            "group": "who",
            "message": "Greeting?",
        },
        "enabled": {"type": "boolean", "default": True, "group": "setup", "message": "Enable search?"},
        "purpose": {
            "type": "select",
            "default": "eng",
            "group": "setup",
            "message": "Purpose?",
            "options": [{"value": "eng", "label": "Engineering"}, {"value": "res", "label": "Research"}],
        },
        "tags": {
            "type": "multiselect",
            "default": ["a"],
            "group": "setup",
            "message": "Tags?",
            "options": [{"value": "a"}, {"value": "b"}, {"value": "c"}],
        },
        "teams": {"type": "list", "default": ["core"], "group": "setup", "message": "Teams?"},
        "ungrouped": {"type": "string", "default": "u", "message": "Last?"},
    },
    "modules": {
        "core": {"label": "Core notes", "paths": ["core/"], "removable": False},
        "people": {"label": "People", "paths": ["people/"], "removable": True},
        "perf": {"label": "Performance", "paths": ["perf/"], "removable": True},
    },
}

# One answer per prompt, in wizard order (group "who", then "setup", then ungrouped).
KEYS = (
    "Ada" + ENTER,  # user_name (empty default: the placeholder shows)
    ENTER,  # greeting: accept the computed default, resolved from the answer above
    "0" + ENTER + CLEAR + "11" + ENTER + CLEAR + "7" + ENTER,  # size: 0 and 11 are refused, 7 accepted
    "n",  # enabled: confirm answers on the key press
    DOWN + ENTER,  # purpose: second option
    DOWN + SPACE + ENTER,  # tags: keep a, add b
    CLEAR + "core, ops" + ENTER,  # teams
    ENTER,  # ungrouped
)
EXPECTED = {
    "user_name": "Ada",
    "greeting": "Hi Ada",
    "size": 7,
    "enabled": False,
    "purpose": "res",
    "tags": ["a", "b"],
    "teams": ["core", "ops"],
    "ungrouped": "u",
}


@pytest.fixture
def terminal() -> Iterator[tuple[TerminalUI, Any, io.StringIO]]:
    screen = io.StringIO()
    with create_pipe_input() as pipe:
        yield TerminalUI(prompt_kwargs={"input": pipe, "output": PlainTextOutput(screen)}), pipe, screen


def test_group_order() -> None:
    schema = parse_schema(SCHEMA, display="s")
    assert ordered_keys(schema, list(schema.values)) == [
        "user_name",
        "greeting",
        "size",
        "enabled",
        "purpose",
        "tags",
        "teams",
        "ungrouped",
    ]


def test_every_value_type_with_validation_and_computed_default(
    terminal: tuple[TerminalUI, Any, io.StringIO], capsys: pytest.CaptureFixture[str]
) -> None:
    ui, pipe, screen = terminal
    pipe.send_text("".join(KEYS))
    schema = parse_schema(SCHEMA, display="s")
    values = collect_values(schema, prefill={}, ask=None, use_defaults=False, ui=ui)
    assert values == EXPECTED
    shown = screen.getvalue()
    assert "Jane Example" in shown, "the placeholder of an empty string prompt"
    assert "Hi Ada" in shown, "the computed default is offered resolved"
    assert shown.index("Your name?") < shown.index("Team size?") < shown.index("Last?")
    headers = capsys.readouterr().err
    assert headers.index("About you — Two questions") < headers.index("Setup")


def test_prefilled_values_are_not_asked(terminal: tuple[TerminalUI, Any, io.StringIO]) -> None:
    ui, pipe, screen = terminal
    pipe.send_text(ENTER)  # greeting only
    schema = parse_schema(SCHEMA, display="s")
    prefill = {k: v for k, v in EXPECTED.items() if k != "greeting"}
    values = collect_values(schema, prefill=prefill, ask=None, use_defaults=False, ui=ui)
    assert values == EXPECTED
    assert "Your name?" not in screen.getvalue()


def test_full_install_with_wizard_and_module_review(
    tmp_path: Path, terminal: tuple[TerminalUI, Any, io.StringIO], monkeypatch: pytest.MonkeyPatch
) -> None:
    ui, pipe, screen = terminal
    shard = make_shard(
        tmp_path / "shard",
        schema=SCHEMA,
        files={
            "core/a.md": "a\n",
            "people/p1.md": "p\n",
            "people/p2.md.njk": "{{ user_name }}\n",
            "perf/brag.md": "b\n",
            "Home.md.njk": "{{ greeting }} ({{ purpose }}, {{ size }})\n",
        },
    )
    # the values, then the module review: uncheck People (first removable), keep Performance
    pipe.send_text("".join(KEYS) + SPACE + ENTER)
    reviewed: list[Any] = []
    real_review = ui.review_modules

    def review(choices: list[Any], selected: set[str]) -> set[str]:
        reviewed.append(([(c.id, c.label, c.files) for c in choices], selected))
        return real_review(choices, selected)

    monkeypatch.setattr(ui, "review_modules", review)
    vault = tmp_path / "vault"
    result = install(InstallOptions(dest=vault, source=str(shard), cwd=tmp_path), ui)
    assert result.values == EXPECTED
    assert reviewed == [([("people", "People", 2), ("perf", "Performance", 1)], {"people", "perf"})]
    assert result.modules == {"core": "included", "people": "excluded", "perf": "included"}
    shown = screen.getvalue()
    assert "Performance (1 file)" in shown, "each module is listed with its file count"
    assert "Core notes" not in shown, "only removable modules are reviewed"
    assert (vault / "Home.md").read_text() == "Hi Ada (res, 7)\n"
    assert not (vault / "people").exists()
    assert read_json(vault / ".shardmind/state.json")["values"] == EXPECTED


def test_ctrl_c_at_a_prompt_cancels_and_writes_nothing(
    tmp_path: Path, terminal: tuple[TerminalUI, Any, io.StringIO]
) -> None:
    ui, pipe, _ = terminal
    shard = make_shard(tmp_path / "shard", schema=SCHEMA, files={"a.md": "a\n"})
    pipe.send_text("Ada" + ENTER + "\x03")  # Ctrl-C at the second prompt
    # An interrupt (exit 130), not a cancel (exit 0): issue 12 item 13.
    with pytest.raises(KeyboardInterrupt, match="nothing was written"):
        install(InstallOptions(dest=tmp_path / "vault", source=str(shard), cwd=tmp_path), ui)
    assert not (tmp_path / "vault").exists()


def _colliding(tmp_path: Path) -> tuple[Path, Path]:
    """A shard writing a.md, and a vault folder that already holds the user's a.md."""
    shard = make_shard(tmp_path / "shard", files={"a.md": "new\n"})
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "a.md").write_text("mine\n")
    return shard, vault


def test_collision_prompt_backs_up_when_the_user_agrees(
    tmp_path: Path, terminal: tuple[TerminalUI, Any, io.StringIO]
) -> None:
    ui, pipe, _ = terminal
    shard, vault = _colliding(tmp_path)
    pipe.send_text("y")
    result = install(InstallOptions(dest=vault, source=str(shard), cwd=tmp_path), ui)
    assert (vault / result.backups["a.md"]).read_text() == "mine\n"
    assert (vault / "a.md").read_text() == "new\n"


def test_collision_prompt_declined_cancels(
    tmp_path: Path, terminal: tuple[TerminalUI, Any, io.StringIO]
) -> None:
    ui, pipe, _ = terminal
    shard, vault = _colliding(tmp_path)
    pipe.send_text("n")
    with pytest.raises(Cancelled):
        install(InstallOptions(dest=vault, source=str(shard), cwd=tmp_path), ui)
    assert sorted(p.name for p in vault.iterdir()) == ["a.md"]
    assert (vault / "a.md").read_text() == "mine\n"
