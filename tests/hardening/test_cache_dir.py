"""The user cache folder found without platformdirs is platformdirs' own answer (issue 29: its import
cost a one-shot search ~6 ms)."""

from __future__ import annotations

import sys
from pathlib import Path

import platformdirs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy import cachedir

PATHS = st.one_of(
    st.none(),
    st.sampled_from(["", "  ", "/", "/root", "/home/u/", "//srv//c", "rel", "rel/x", "~/c", "/tmp/a b"]),
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fast rule is Linux's")
@settings(max_examples=120, deadline=None)
@given(xdg=PATHS, home=PATHS)
def test_the_cache_folder_is_platformdirs_answer(xdg: str | None, home: str | None) -> None:
    with pytest.MonkeyPatch.context() as env:  # per example: hypothesis runs many in one test
        env.delenv("SHARDPY_CACHE_DIR", raising=False)
        for key, value in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
            if value is None:
                env.delenv(key, raising=False)
            else:
                env.setenv(key, value)
        fast = cachedir._linux_cache_dir()
        if fast is None:
            return  # platformdirs answers these itself
        assert fast == platformdirs.user_cache_dir("shardpy")
        assert cachedir.cache_dir() == Path(platformdirs.user_cache_dir("shardpy"))


def test_the_usual_cases_take_the_fast_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    if not sys.platform.startswith("linux"):
        pytest.skip("the fast rule is Linux's")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "/home/u")
    assert cachedir._linux_cache_dir() == "/home/u/.cache/shardpy"
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/u")
    assert cachedir._linux_cache_dir() == "/var/cache/u/shardpy"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative")
    assert cachedir._linux_cache_dir() is None  # platformdirs' own rule, by version
