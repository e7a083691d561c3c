"""Fixtures shared by every test (builders live in tests/shardkit.py)."""

from __future__ import annotations

import pytest

from tests.shardkit import Cli


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    # A developer's own settings must not leak into the tests.
    for key in ("SHARDPY_TEST_APPLY_DELAY", "SHARDPY_HOOK_CONTEXT", "SHARDPY_HOOK", "NO_COLOR"):
        monkeypatch.delenv(key, raising=False)


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch) -> Cli:
    return Cli(monkeypatch)
