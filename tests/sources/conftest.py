"""Hermetic fixtures for source tests: git repos, tarballs and a GitHub API stub on 127.0.0.1."""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sources.support import GIT_ENV, ShardRepo, StubGitHub, build_shard_repo


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Cache and temp dirs under tmp_path; no proxies, tokens or user git config leak in."""
    for name in (
        "GITHUB_TOKEN",
        "SHARDPY_GITHUB_API_BASE",
        "SHARDPY_REGISTRY_INDEX_URL",
        "SHARDPY_MAX_ARCHIVE_BYTES",
        "SHARDPY_MAX_ARCHIVE_ENTRIES",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "ALL_PROXY",
        "http_proxy",
        "https_proxy",
        "all_proxy",
    ):
        monkeypatch.delenv(name, raising=False)
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    yield scratch


@pytest.fixture
def scratch(_isolated: Path) -> Path:
    """The temp dir fetches use; empty again after cleanup or a failure."""
    return _isolated


@pytest.fixture(scope="session")
def _session_repo(tmp_path_factory: pytest.TempPathFactory) -> ShardRepo:
    return build_shard_repo(tmp_path_factory.mktemp("repos") / "shard")


@pytest.fixture
def shard_repo(_session_repo: ShardRepo) -> ShardRepo:
    return _session_repo


@pytest.fixture
def github_stub(shard_repo: ShardRepo, monkeypatch: pytest.MonkeyPatch) -> Iterator[StubGitHub]:
    stub = StubGitHub().start()
    stub.add_repo("o/r", shard_repo)
    monkeypatch.setenv("SHARDPY_GITHUB_API_BASE", stub.base)
    yield stub
    stub.stop()


@pytest.fixture
def refused_port() -> int:
    """A port nothing listens on (bound, then released)."""

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port
