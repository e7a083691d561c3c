from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.merge.gitref import GitRef


@pytest.fixture(scope="session")
def gitref(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GitRef]:
    path: Path = tmp_path_factory.mktemp("gitref")
    yield GitRef(path)
