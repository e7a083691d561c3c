"""Item 13: the wizard shows (Y/n) beside a shard's hint, an empty answer
does not leave the placeholder on screen as if it were the answer, Ctrl-C
exits 130 saying nothing was written, and --help shows no Python type names."""

from __future__ import annotations

import io
import os
import pty
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output.plain_text import PlainTextOutput

from shardpy.cli.prompts import TerminalUI
from shardpy.flows.choices import collect_values
from shardpy.shard.schema import parse_schema
from tests.shardkit import child_env, make_shard, shardpy_argv

ENTER = "\r"
SCHEMA: dict[str, Any] = {
    "values": {
        "name": {"type": "string", "default": "", "placeholder": "Ada Lovelace", "message": "Your name?"},
        "search": {"type": "boolean", "default": True, "message": "Enable search?", "hint": "uses qmd"},
        "strict": {"type": "boolean", "default": False, "message": "Strict mode?", "hint": "slower"},
    }
}


@pytest.fixture
def terminal() -> Iterator[tuple[TerminalUI, Any, io.StringIO]]:
    screen = io.StringIO()
    with create_pipe_input() as pipe:
        yield TerminalUI(prompt_kwargs={"input": pipe, "output": PlainTextOutput(screen)}), pipe, screen


def test_yes_no_shows_its_default_beside_the_hint_and_no_stale_placeholder(
    terminal: tuple[TerminalUI, Any, io.StringIO],
) -> None:
    ui, pipe, screen = terminal
    pipe.send_text(ENTER + ENTER + ENTER)
    values = collect_values(
        parse_schema(SCHEMA, display="s"), prefill={}, ask=None, use_defaults=False, ui=ui
    )
    assert values == {"name": "", "search": True, "strict": False}
    shown = screen.getvalue()
    assert "(Y/n) (uses qmd)" in shown and "(y/N) (slower)" in shown
    # The placeholder shows while typing; the answered line (drawn last, before the
    # next question) shows what was stored: nothing.
    answered = shown[: shown.index("Enable search?")].rsplit("Your name?", 1)[1]
    assert "Ada Lovelace" not in answered


def test_ctrl_c_at_a_prompt_exits_130_and_writes_nothing(tmp_path: Path) -> None:
    shard = make_shard(tmp_path / "shard", schema=SCHEMA, files={"a.md": "a\n"})
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        shardpy_argv("install", shard, tmp_path / "vault"),
        stdin=follower,
        stdout=follower,
        stderr=follower,
        env=child_env({"TERM": "xterm"}),
        cwd=tmp_path,
    )
    os.close(follower)
    seen = b""
    deadline = time.monotonic() + 60
    while b"Your name?" not in seen and time.monotonic() < deadline:
        try:
            seen += os.read(leader, 4096)
        except OSError:
            break
    assert b"Your name?" in seen, seen
    os.write(leader, b"\x03")
    code = proc.wait(timeout=60)
    try:
        while chunk := os.read(leader, 4096):
            seen += chunk
    except OSError:
        pass
    os.close(leader)
    assert code == 130
    assert b"nothing was written" in seen
    assert not (tmp_path / "vault").exists()


@pytest.mark.parametrize("command", ["install", "update", "adopt", "import"])
def test_help_shows_no_python_type_names(tmp_path: Path, command: str) -> None:
    done = subprocess.run(
        [*shardpy_argv(command, "--help")], env=child_env(), capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 0
    assert "<bool>" not in done.stdout and "list[" not in done.stdout, done.stdout


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip("pty-driven")
