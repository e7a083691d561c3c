"""The alias bomb the YAML tests feed every reader."""

from __future__ import annotations

from pathlib import Path


def _bomb() -> str:
    lines = ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    prev = "a"
    for name in "bcdefghi":
        lines.append(f"{name}: &{name} [{', '.join(['*' + prev] * 9)}]")
        prev = name
    return "\n".join(lines) + "\n"


BOMB = _bomb()
BOMB_LINE = 2  # the first alias


def bomb_under(path: Path) -> str:
    """The file's YAML (a mapping) with the bomb's keys added below it."""
    return path.read_text() + BOMB
