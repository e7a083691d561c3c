"""A shard's `path_match` globs cannot make `status` exponential (found beside
issue 24 item 13): the matcher keeps the meaning of the plain translation
(property-tested against it) and answers a hostile pattern on a long name at
once (a subprocess timeout guards against a hang; nothing is timed)."""

from __future__ import annotations

import re
import subprocess
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy.shard.rules import glob_regex
from tests.shardkit import REPO_ROOT


def plain(pattern: str) -> re.Pattern[str]:
    """The translation glob_regex used before: the meaning to keep."""
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("^" + "".join(out) + "$")


@settings(max_examples=400, deadline=None)
@given(st.text("ab*?/.", max_size=9), st.text("ab/.", max_size=10))
def test_same_meaning_as_the_plain_translation(pattern: str, path: str) -> None:
    assert bool(glob_regex(pattern).match(path)) == bool(plain(pattern).match(path))


def test_a_hostile_pattern_on_a_long_name_answers_at_once() -> None:
    code = (
        "from shardpy.shard.rules import glob_regex\n"
        "print(bool(glob_regex('*a*a*a*a*a*a*a*a*a*a*a*b').match('a' * 4000)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO_ROOT)},
        check=True,
    )
    assert done.stdout.strip() == "False"
