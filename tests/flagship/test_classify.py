"""classify_message.py: signals per prompt, gated by installed modules."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from tests.flagship import payloads
from tests.flagship.conftest import run_script
from tests.flagship.shardtools import Layout

SCRIPT = "classify_message.py"

ALL_KINDS = (
    "We decided to go with Postgres instead of Mongo because of joins. "
    "The sev2 outage last night paged me twice. "
    "Got a shoutout from the VP for the launch. "
    "In my 1:1 with Priya she said the team is stretched. "
    "Priya prefers written updates. "
    "Turns out the cache silently drops writes over 1 MB."
)


def _ids(context: str) -> list[str]:
    return [line[2:].split(":", 1)[0] for line in context.splitlines() if line.startswith("- ")]


EVENT = {"claude": "UserPromptSubmit", "codex": "UserPromptSubmit", "gemini": "BeforeAgent"}


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_all_signals_fire_in_a_full_install(agent: str, make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    r = run_script(v.root, SCRIPT, payloads.prompt(agent, v.root, ALL_KINDS))
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert out["hookSpecificOutput"]["hookEventName"] == EVENT[agent]
    ids = _ids(out["hookSpecificOutput"]["additionalContext"])
    assert {"DECISION", "GOTCHA", "WIN", "INCIDENT", "PERSON_CONTEXT", "ONE_ON_ONE"} <= set(ids)
    assert "→ brain/Gotchas.md" in out["hookSpecificOutput"]["additionalContext"]


def test_only_installed_modules_signals_are_reported(make_vault: Callable[..., Layout]) -> None:
    v = make_vault(exclude=("perf", "incidents", "org", "one_on_ones"))
    ids = _ids(run_script(v.root, SCRIPT, payloads.prompt("claude", v.root, ALL_KINDS)).context())
    assert "DECISION" in ids and "GOTCHA" in ids
    assert not {"WIN", "INCIDENT", "PERSON_CONTEXT", "ONE_ON_ONE"} & set(ids)


def test_partial_exclusion_keeps_the_rest(make_vault: Callable[..., Layout]) -> None:
    v = make_vault(exclude=("incidents",))
    ids = _ids(run_script(v.root, SCRIPT, payloads.prompt("codex", v.root, ALL_KINDS)).context())
    assert "INCIDENT" not in ids
    assert {"WIN", "PERSON_CONTEXT", "ONE_ON_ONE"} <= set(ids)


def test_plain_clone_counts_every_module(make_vault: Callable[..., Layout]) -> None:
    v = make_vault(state=False)
    assert not (v.root / ".shardmind").exists()
    ids = _ids(run_script(v.root, SCRIPT, payloads.prompt("gemini", v.root, ALL_KINDS)).context())
    assert {"WIN", "INCIDENT", "PERSON_CONTEXT", "ONE_ON_ONE"} <= set(ids)


def test_corrupt_state_counts_every_module(make_vault: Callable[..., Layout]) -> None:
    v = make_vault(exclude=("perf",))
    (v.root / ".shardmind/state.json").write_text("{oops", encoding="utf-8")
    r = run_script(v.root, SCRIPT, payloads.prompt("claude", v.root, "got a shoutout for the launch"))
    assert _ids(r.context()) == ["WIN"]
    assert "state.json unreadable" in r.stderr


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("What's the weather like?", []),
        ("The payments service architecture needs a new data model", ["ARCHITECTURE"]),
        ("Shipped the billing export today, milestone done", ["PROJECT_UPDATE"]),
        ("This keeps happening every time we deploy on Fridays", ["PATTERN"]),
        ("We chose gRPC over REST", ["DECISION"]),
        ("prep for my one-on-one with Sam", ["ONE_ON_ONE"]),
    ],
)
def test_single_signals(prompt: str, expected: list[str], make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    r = run_script(v.root, SCRIPT, payloads.prompt("claude", v.root, prompt))
    if not expected:
        assert r.json() == {}
    else:
        assert _ids(r.context()) == expected


def test_slash_commands_and_empty_prompts_are_left_alone(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    for text in ("/incident-capture the sev1 outage", "", "   "):
        r = run_script(v.root, SCRIPT, payloads.prompt("claude", v.root, text))
        assert r.returncode == 0 and r.json() == {}


@pytest.mark.parametrize("raw", [b"", b"not json", b"[]", b'{"prompt": 42}', b"\x00\xff"])
def test_odd_input_is_a_quiet_no_op(raw: bytes, make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    r = run_script(v.root, SCRIPT, raw=raw)
    assert r.returncode == 0
    assert json.loads(r.stdout) == {}


def test_hints_are_hints(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    text = run_script(v.root, SCRIPT, payloads.prompt("claude", v.root, "we decided to use Kafka")).context()
    assert text.startswith("Vault signals in this prompt (hints only")


def test_broken_signal_table_degrades_to_nothing(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    table = v.root / ".claude/scripts/vaultlib/signals.json"
    data = json.loads(table.read_text())
    data["signals"][0]["patterns"].append("(unclosed")
    table.write_text(json.dumps(data))
    r = run_script(v.root, SCRIPT, payloads.prompt("claude", v.root, "we decided to use Kafka"))
    assert _ids(r.context()) == ["DECISION"]
    assert "bad pattern" in r.stderr
    table.write_text("{")
    r = run_script(v.root, SCRIPT, payloads.prompt("claude", v.root, "we decided to use Kafka"))
    assert r.returncode == 0 and r.json() == {}
