from __future__ import annotations

from pathlib import Path

import pytest

from tests.update.kit import Scenario


@pytest.fixture
def sc(tmp_path: Path) -> Scenario:
    return Scenario(tmp_path)
