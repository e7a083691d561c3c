"""Properties of merge3 on random line edits, and agreement with ``git merge-file``."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from shardpy.merge.text import merge3, merge3_git
from shardpy.merge.xdiff import changed_flags, split_lines
from tests.merge.gitref import GitRef
from tests.merge.strategies import edited, join, texts, triples

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
GIT = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(st.data())
def test_one_side_unchanged_or_both_alike_gives_that_side(data: st.DataObject) -> None:
    base_lines = data.draw(texts())
    base = join(base_lines, True)
    x = join(data.draw(edited(base_lines)), data.draw(st.booleans()))
    for style in ("merge", "diff3"):
        assert merge3(base, base, x, style=style).text == x  # type: ignore[arg-type]
        assert merge3(base, x, base, style=style).text == x  # type: ignore[arg-type]
        same = merge3(base, x, x, style=style)  # type: ignore[arg-type]
        assert same.text == x and same.clean


def _strip(lines: list[str]) -> list[str]:
    return [line.removesuffix("\n") for line in lines]


def _is_subsequence(needle: list[str], hay: list[str]) -> bool:
    it = iter(hay)
    return all(any(h == n for h in it) for n in needle)


def _kept_and_added(base: str, side: str) -> tuple[list[str], list[str], bytearray]:
    b, s = split_lines(base), split_lines(side)
    bflags, sflags = changed_flags(b, s)
    added = [line for k, line in enumerate(s) if sflags[k + 1]]
    return b, added, bflags


@FAST
@given(triples())
def test_nothing_is_lost_and_kept_lines_stay_in_order(abc: tuple[str, str, str]) -> None:
    # merge3's contract is LF-normalised text (git writes CRLF markers otherwise).
    base, user, shard = (t.replace("\r\n", "\n") for t in abc)
    for style in ("merge", "diff3"):
        result = merge3(base, user, shard, style=style)  # type: ignore[arg-type]
        out = _strip(split_lines(result.text))
        b, user_added, user_base_flags = _kept_and_added(base, user)
        _, shard_added, shard_base_flags = _kept_and_added(base, shard)
        # Every line either side added or changed is in the output, in that side's order.
        assert _is_subsequence(_strip(user_added), out)
        assert _is_subsequence(_strip(shard_added), out)
        markers = sum(1 for line in out if line[:7] in ("<<<<<<<", "=======", ">>>>>>>", "|||||||"))
        content = len(out) - markers
        base_shown = sum(len(c.base) for c in result.conflicts) if style == "diff3" else 0
        s = result.stats
        assert s.unchanged + s.auto_merged + s.conflicted + s.both_added + base_shown == content
        if result.clean:
            assert not result.conflicts and markers == 0
            kept = [
                line for k, line in enumerate(b) if not user_base_flags[k + 1] and not shard_base_flags[k + 1]
            ]
            # Lines both sides kept from the base appear once each, in the base's order.
            assert s.unchanged == len(kept)
            assert _is_subsequence(_strip(kept), out)
        else:
            assert result.conflicts and s.conflicted > 0


@GIT
@given(triples())
def test_agrees_with_git_merge_file(gitref: GitRef, abc: tuple[str, str, str]) -> None:
    base, user, shard = abc
    for style in ("merge", "diff3"):
        result = merge3(base, user, shard, style=style, shard_label="shard 1.2.0")  # type: ignore[arg-type]
        expected, git_conflicts = gitref.merge_file(base, user, shard, style=style, label="shard 1.2.0")  # type: ignore[arg-type]
        if git_conflicts == 0:
            # Where git merges cleanly we must be byte-identical and clean.
            event(f"{style}: git clean")
            assert result.clean and not result.both_added
            assert result.text == expected
        elif not result.both_added:
            # No both-added region: every conflict is git's, written as git writes it.
            event(f"{style}: git conflict, no both-added")
            assert result.text == expected
            assert len(result.conflicts) == git_conflicts
        else:
            event(f"{style}: both-added applied")
            # What stays a conflict always replaced or deleted base lines.
            assert all(c.base for c in result.conflicts)
        # Without the both-added rule the engine is git, conflicts included.
        plain = merge3_git(base, user, shard, style=style, shard_label="shard 1.2.0")  # type: ignore[arg-type]
        assert plain.text == expected
        assert len(plain.conflicts) == git_conflicts


def _note(rng: random.Random, size: int) -> list[str]:
    words = ["alpha", "beta", "gamma", "delta", "note", "task", "idea", "link"]
    pool = ["\n", "---\n", "- [ ] todo\n", "}\n"]
    return [
        rng.choice(pool) if rng.random() < 0.3 else " ".join(rng.choices(words, k=rng.randint(1, 4))) + "\n"
        for _ in range(size)
    ]


def _edit(rng: random.Random, lines: list[str], count: int, tag: str) -> list[str]:
    out = list(lines)
    for n in range(count):
        k = rng.randrange(len(out))
        roll = rng.random()
        if roll < 0.4:
            out[k] = f"{tag} {n}\n"
        elif roll < 0.7:
            out.insert(k, f"{tag} {n}\n" if rng.random() < 0.7 else rng.choice(lines))
        else:
            del out[k]
    return out


def _check_large(gitref: GitRef, seed: int, size: int, edits: int) -> None:
    rng = random.Random(seed)
    lines = _note(rng, size)
    base = "".join(lines)
    user = "".join(_edit(rng, lines, edits, "user"))
    shard = "".join(_edit(rng, lines, edits, "shard"))
    for style in ("merge", "diff3"):
        expected, conflicts = gitref.merge_file(base, user, shard, style=style)  # type: ignore[arg-type]
        plain = merge3_git(base, user, shard, style=style)  # type: ignore[arg-type]
        assert plain.text == expected
        assert min(len(plain.conflicts), 127) == conflicts


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_git_on_long_notes(gitref: GitRef, seed: int) -> None:
    _check_large(gitref, seed, size=2000, edits=60)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_git_on_1mb_notes(gitref: GitRef, seed: int) -> None:
    _check_large(gitref, seed, size=40_000, edits=1500)
