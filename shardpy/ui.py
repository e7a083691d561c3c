"""What the flows need from a terminal, as an interface the CLI implements.

Flows decide; the UI only asks and tells. Tests and non-interactive runs
use :class:`Headless`, which never prompts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from shardpy.shard.schema import Schema

# The default to offer for a value, given the answers collected so far
# (computed defaults depend on earlier answers).
DefaultFor = Callable[[str, Mapping[str, Any]], Any]


@dataclass(frozen=True)
class ModuleChoice:
    id: str
    label: str
    files: int
    removable: bool
    new: bool = False


class UI(Protocol):
    interactive: bool

    def confirm(self, question: str, *, default: bool) -> bool: ...

    def choose(self, question: str, choices: list[tuple[str, str]], *, default: str) -> str: ...

    def ask_values(
        self, schema: Schema, keys: list[str], known: Mapping[str, Any], default_for: DefaultFor
    ) -> dict[str, Any]: ...

    def review_modules(self, choices: list[ModuleChoice], selected: set[str]) -> set[str]: ...

    def show_conflict(self, path: str, excerpts: list[str]) -> None: ...

    def edit_file(self, path: str, text: str) -> str | None: ...

    def progress(self, label: str, total: int) -> Callable[[int, int], None] | None: ...


@dataclass
class Headless:
    """A UI that never asks: every question takes its default answer."""

    interactive: bool = False

    def confirm(self, question: str, *, default: bool) -> bool:
        return default

    def choose(self, question: str, choices: list[tuple[str, str]], *, default: str) -> str:
        return default

    def ask_values(
        self, schema: Schema, keys: list[str], known: Mapping[str, Any], default_for: DefaultFor
    ) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        for key in keys:
            answers[key] = default_for(key, answers)
        return answers

    def review_modules(self, choices: list[ModuleChoice], selected: set[str]) -> set[str]:
        return selected

    def show_conflict(self, path: str, excerpts: list[str]) -> None:
        return None

    def edit_file(self, path: str, text: str) -> str | None:
        return None

    def progress(self, label: str, total: int) -> Callable[[int, int], None] | None:
        return None
