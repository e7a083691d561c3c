"""One definition of a control character (shardpy/controls.py) behind every rule that shows,
drops or refuses one: Unicode's category Cc, C1 included. Four modules had their own rule, and two
of them let C1's CSI (U+009B, an escape sequence's start on some terminals) through."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardpy import controls
from shardpy.errors import ShardpyError
from shardpy.index.config import _pattern_problem
from shardpy.serve.exposure import is_clean_relpath
from shardpy.vault.manifest import _check_path
from tests.shardkit import REPO_ROOT


def _is_cc(char: str) -> bool:
    return unicodedata.category(char) == "Cc"


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40) | st.text(
    st.characters(max_codepoint=0xA0), max_size=40
)


@given(TEXT)
def test_a_control_character_is_unicodes_category_cc(text: str) -> None:
    assert controls.has_control(text) == any(_is_cc(c) for c in text)


@given(TEXT, st.booleans())
def test_escaped_leaves_no_control_and_is_idempotent(text: str, lines: bool) -> None:
    shown = controls.escaped(text, lines=lines)
    kept = {"\n"} if lines else set()
    assert all(not _is_cc(c) or c in kept for c in shown)
    assert controls.escaped(shown, lines=lines) == shown
    # Only the controls changed: the text without them is the same either way.
    assert re.sub(r"\\x[0-9a-f]{2}", "", shown).replace("\n", "") == re.sub(
        r"\\x[0-9a-f]{2}", "", controls.dropped(text)
    ).replace("\n", "")


@given(TEXT, st.booleans())
def test_dropped_keeps_everything_else_in_order(text: str, layout: bool) -> None:
    kept = {"\t", "\n"} if layout else set()
    assert controls.dropped(text, layout=layout) == "".join(c for c in text if not _is_cc(c) or c in kept)


@pytest.mark.parametrize("char", ["\x00", "\x1b", "\n", "\x7f", "\x85", "\x9b"])
def test_every_refusing_rule_refuses_c0_del_and_c1_alike(char: str) -> None:
    assert not is_clean_relpath(f"notes/a{char}b.md")
    assert _pattern_problem(f"work{char}/") == "holds a control character"
    with pytest.raises(ShardpyError):
        _check_path("folders.notes", f"notes{char}x")


def test_only_controls_py_spells_the_control_range() -> None:
    """A second spelling of the range is a second rule waiting to drift from the first."""
    spelled = re.compile(r"x1f|x9f|== \"\\x7f\"|ord\(c\) [<=]|range\(0, 9\)|range\(11, 32\)")
    lines = [
        f"{path.relative_to(REPO_ROOT).as_posix()}: {line.strip()}"
        for path in sorted((REPO_ROOT / "shardpy").rglob("*.py"))
        if path.name != "controls.py"
        for line in path.read_text(encoding="utf-8").splitlines()
        if spelled.search(line) and not _separator(line)
    ]
    assert lines == []


def _separator(line: str) -> bool:
    """The index joins a heading's levels with U+001F: a separator, not a rule about controls."""
    return "x1f" in line and re.sub(r'"\\x1f"|``\\x1f``', "", line).find("x1f") < 0
