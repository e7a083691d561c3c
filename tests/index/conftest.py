"""Every index test keeps its databases in its own temp cache folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _index_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(cache))
    monkeypatch.delenv("SHARDPY_SEARCH_REFRESH_SECONDS", raising=False)
    return cache


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def manifest(root: Path, data: dict[str, object]) -> None:
    (root / "vault-manifest.json").write_text(json.dumps(data), encoding="utf-8")
