"""Issue 26, item 17: a possessive finds the word (`zephyrometer's` was the
phrase "zephyrometer s"), and `strasse` finds "Straße" (the tokenizer folds
case, not the sharp s), through the CLI as a user types them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.shardkit import run_shardpy

NOTES = {
    "gear/Zephyrometer.md": "# Instruments\n\nThe zephyrometer measures the west wind.\n",
    "places/Berlin.md": "# Berlin\n\nDie Straße des 17. Juni runs through the Tiergarten.\n",
    "places/Basel.md": "# Basel\n\nThe Rheingasse is a Strasse by the river.\n",
}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("words")
    for rel, text in NOTES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _paths(vault: Path, query: str, first: int) -> set[str]:
    """The notes of the ``first`` lexical hits: the words themselves must match (a search by
    meaning would find these notes without the fix)."""
    proc = run_shardpy("search", query, "--vault", vault, "--mode", "lexical", "--json", cwd=vault)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return {hit["path"] for hit in json.loads(proc.stdout)["hits"][:first]}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("zephyrometer's", {"gear/Zephyrometer.md"}),
        ("zephyrometer’s wind", {"gear/Zephyrometer.md"}),
        ("strasse", {"places/Berlin.md", "places/Basel.md"}),
        ("Straße", {"places/Berlin.md", "places/Basel.md"}),
    ],
)
def test_words_as_people_type_them(vault: Path, query: str, expected: set[str]) -> None:
    assert _paths(vault, query, len(expected)) == expected
