from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitsync.kit import git_env
from tests.shardkit import Cli
from tests.sync.kit import Fleet


@pytest.fixture
def fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli) -> Fleet:
    git_env(monkeypatch, tmp_path / "home")
    return Fleet(tmp_path, cli)
