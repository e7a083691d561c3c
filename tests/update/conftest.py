from __future__ import annotations

from pathlib import Path

import pytest

from tests.shardkit import Cli
from tests.update.kit import Scenario


@pytest.fixture
def sc(tmp_path: Path, cli: Cli) -> Scenario:
    return Scenario(tmp_path, cli)
