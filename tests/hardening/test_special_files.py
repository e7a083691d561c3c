"""A FIFO where a note should be: read, it never answers.

Opening a FIFO for reading waits for a writer, for ever. A managed file replaced by one hung
`shardpy status` (its conflict-marker check read it), and a FIFO named like a note hung an
import whose link needed the vault's titles (a helper's probe). Every reader of a vault file now
opens it without blocking and refuses what is not a regular file (fsutil.open_regular).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.shardkit import run_shardpy

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")

PATIENCE_S = 60  # a hang is the failure: each command gets this long, far more than it needs


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "SHARDPY_CACHE_DIR": str(tmp_path / "cache")}


@pytest.fixture
def vault(tmp_path: Path, env: dict[str, str]) -> Path:
    done = run_shardpy("install", "--defaults", tmp_path / "vault", cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return tmp_path / "vault"


def test_status_says_a_managed_file_replaced_by_a_fifo_cannot_be_read(
    vault: Path, env: dict[str, str]
) -> None:
    (vault / "CLAUDE.md").unlink()
    os.mkfifo(vault / "CLAUDE.md")
    for args in (["status", "--json"], ["status", "--verbose"], ["update", "--dry-run"]):
        done = run_shardpy(*args, cwd=vault, env=env, timeout=PATIENCE_S)
        assert done.returncode == 0 and "Traceback" not in done.stderr, (args, done.stderr)
    status = run_shardpy("status", "--json", cwd=vault, env=env, timeout=PATIENCE_S)
    assert "CLAUDE.md" in [m["path"] for m in json.loads(status.stdout)["modified"]]


def test_an_import_that_reads_the_vaults_titles_passes_a_fifo(
    vault: Path, env: dict[str, str], tmp_path: Path
) -> None:
    os.mkfifo(vault / "brain/pipe.md")
    source = tmp_path / "project"
    source.mkdir()
    (source / "a.md").write_text("[[nothing here]]\n", encoding="utf-8")  # unresolved: titles read
    done = run_shardpy(
        "import", "--from", "basic-memory", source, vault, cwd=tmp_path, env=env, timeout=PATIENCE_S
    )
    assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr
    for args in (["search", "nothing"], ["index"]):
        searched = run_shardpy(*args, cwd=vault, env=env, timeout=PATIENCE_S)
        assert searched.returncode == 0, (args, searched.stderr)


@pytest.mark.skipif(sys.platform != "linux", reason="the server's notes read on Linux here")
def test_the_servers_readers_refuse_a_fifo(vault: Path) -> None:
    """The server's read of a memory or a served note (exposure, memories, graph) goes through
    the same opener: a FIFO is an OSError at once, not a read that waits."""
    from shardpy.fsutil import open_regular, read_regular

    os.mkfifo(vault / "brain/pipe.md")
    with pytest.raises(OSError, match="not a regular file"):
        open_regular(vault / "brain/pipe.md")
    with pytest.raises(OSError):
        read_regular(vault / "brain/pipe.md")
    assert read_regular(vault / "CLAUDE.md") == (vault / "CLAUDE.md").read_bytes()
