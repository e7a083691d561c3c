from __future__ import annotations

from pathlib import Path

import pytest

from tests.importers.fixtures import basic_memory_project


@pytest.fixture
def bm_project(tmp_path: Path) -> Path:
    return basic_memory_project(tmp_path / "bm")


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    v.mkdir()
    (v / "Home.md").write_text("# Home\n\nMy own note.\n", encoding="utf-8")
    return v
