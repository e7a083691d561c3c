"""The diff engine against git's own diff: the alignment must be git's, hunk for hunk."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardpy.merge import xdiff
from shardpy.merge.xdiff import Change, diff, split_lines
from tests.merge.gitref import GitRef
from tests.merge.strategies import edited, join, texts


def _diff(a: str, b: str) -> list[tuple[int, int, int, int]]:
    return [tuple(c) for c in diff(split_lines(a), split_lines(b))]


def test_split_lines_keeps_newlines_and_partial_last_line() -> None:
    assert split_lines("") == []
    assert split_lines("a\nb\n") == ["a\n", "b\n"]
    assert split_lines("a\nb") == ["a\n", "b"]
    assert split_lines("\n\n") == ["\n", "\n"]
    # Only LF splits: CR, form feed and Unicode separators stay inside lines.
    assert split_lines("a\rb\x0cc\u2028d\n") == ["a\rb\x0cc\u2028d\n"]


_BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "a", "b "]


@given(st.lists(st.sampled_from(_BREAKS), max_size=12).map("".join))
def test_split_lines_is_lf_records_whatever_other_breaks_the_text_holds(text: str) -> None:
    # split_lines takes str.splitlines' answer when "\n" is the only break in the text (the
    # driver's cost, issue 30): every other break str.splitlines knows must stay inside a record.
    parts = text.split("\n")
    records = [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    assert split_lines(text) == records


def test_simple_hunks() -> None:
    assert _diff("a\nb\nc\n", "a\nb\nc\n") == []
    assert _diff("a\nb\nc\n", "a\nX\nc\n") == [(1, 1, 1, 1)]
    assert _diff("a\nc\n", "a\nb\nc\n") == [(1, 1, 0, 1)]
    assert _diff("a\nb\nc\n", "") == [(0, 0, 3, 0)]
    assert Change(1, 2, 3, 4).chg2 == 4


def test_missing_final_newline_is_a_different_line() -> None:
    assert _diff("a\nb\n", "a\nb") == [(1, 1, 1, 1)]


def test_slides_insertions_like_git(gitref: GitRef) -> None:
    # An inserted block inside a run of equal lines: git puts it at a specific place.
    old = "x\na\nb\na\nb\ny\n"
    new = "x\na\nb\na\nb\na\nb\ny\n"
    assert _diff(old, new) == gitref.hunks(old, new)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_matches_git_diff_on_small_files(gitref: GitRef, data: st.DataObject) -> None:
    base = data.draw(texts(max_lines=20))
    other = data.draw(edited(base, max_edits=8))
    old = join(base, data.draw(st.integers(0, 4)) > 0)
    new = join(other, data.draw(st.integers(0, 4)) > 0)
    assert _diff(old, new) == gitref.hunks(old, new)


def _random_pair(rng: random.Random, size: int, alphabet: int, edits: int) -> tuple[str, str]:
    a = [f"l{rng.randrange(alphabet)}\n" for _ in range(size)]
    b = list(a)
    for _ in range(edits):
        op = rng.random()
        if op < 0.3 and b:
            del b[rng.randrange(len(b))]
        elif op < 0.6:
            b.insert(rng.randint(0, len(b)), f"l{rng.randrange(alphabet * 2)}\n")
        elif op < 0.8 and b:
            k = rng.randrange(len(b))
            b[k : k + rng.randint(1, 30)] = [
                f"n{rng.randrange(alphabet)}\n" for _ in range(rng.randint(0, 30))
            ]
        elif b:
            b[rng.randrange(len(b))] = f"l{rng.randrange(alphabet)}\n"
    return "".join(a), "".join(b)


@pytest.mark.parametrize(
    ("seed", "size", "alphabet", "edits"),
    [
        (1, 400, 6, 60),  # very repetitive: exercises the many-match discarding
        (2, 1500, 40, 150),
        (3, 3000, 3000, 500),  # long edit distance: git's cost cut-offs kick in
        (4, 2500, 15, 700),
    ],
)
def test_matches_git_diff_on_large_files(
    gitref: GitRef, monkeypatch: pytest.MonkeyPatch, seed: int, size: int, alphabet: int, edits: int
) -> None:
    cut_offs = 0
    real_split = xdiff._split

    def counting_split(*args: Any) -> tuple[int, int, bool, bool]:
        nonlocal cut_offs
        result = real_split(*args)
        # min_lo != min_hi only when a cost cut-off picked a non-optimal split.
        cut_offs += result[2] != result[3]
        return result

    monkeypatch.setattr(xdiff, "_split", counting_split)
    rng = random.Random(seed)
    for _ in range(3):
        old, new = _random_pair(rng, size, alphabet, edits)
        assert _diff(old, new) == gitref.hunks(old, new)
    if edits >= 500:
        assert cut_offs > 0, "the heuristic paths were not exercised"
