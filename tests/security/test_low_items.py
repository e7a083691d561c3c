"""Issue 11, low: status on an unreadable file, a rollback on a full disk, long and backslashed names."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import pytest

import shardpy.fsutil
import shardpy.vault.ownership
from tests.security.kit import killed_after
from tests.shardkit import Cli, make_shard

FILES = {f"notes/n{i}.md": f"note {i}\n" for i in range(6)}


def _installed(tmp_path: Path, cli: Cli, files: dict[str, str] = FILES) -> tuple[Path, Path]:
    shard = make_shard(tmp_path / "shard", files=files)
    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", "--no-hooks", cwd=tmp_path)
    return shard, vault


def test_status_exits_0_when_a_managed_file_is_unreadable(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, vault = _installed(tmp_path, cli)
    real = shardpy.vault.ownership.disk_hash

    def denied(path: Path) -> str | None:
        if path.name == "n1.md":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path)

    monkeypatch.setattr(shardpy.vault.ownership, "disk_hash", denied)
    for extra in ((), ("--verbose",)):
        res = cli.run("status", "--json", *extra, cwd=vault)
        assert res.exit_code == 0, res.output
        report = res.json()
        assert any("notes/n1.md cannot be read" in w for w in report["warnings"])
        assert report["counts"]["modified"] == 1


def test_rollback_that_hits_a_full_disk_names_the_path(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    shard, vault = _installed(tmp_path, cli)
    make_shard(shard, files={p: t.upper() for p, t in FILES.items()}, manifest={"version": "2.0.0"})
    killed_after(3, "update", "--yes", cwd=vault)

    def full(fd: int, data: bytes) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(shardpy.fsutil, "_write_all", full)
    res = cli.run("status", "--json", cwd=vault)
    error = res.json()["error"]
    assert error["code"] == "DISK_FULL"
    assert error["path"].startswith("notes/n") and error["path"] in error["message"]
    monkeypatch.undo()
    res = cli.run("status", "--json", cwd=vault)  # with room again, the rollback completes
    assert res.json()["recovered"]["action"] == "rolled-back"
    assert (vault / "notes/n0.md").read_text() == "note 0\n"


@pytest.mark.parametrize("length", [234, 245, 255])
def test_shard_file_names_up_to_255_bytes_install_and_update(tmp_path: Path, cli: Cli, length: int) -> None:
    name = "n" * (length - 3) + ".md"
    shard, vault = _installed(tmp_path, cli, {f"notes/{name}": "long\n"})
    assert (vault / "notes" / name).read_text() == "long\n"
    make_shard(shard, files={f"notes/{name}": "longer\n"}, manifest={"version": "2.0.0"})
    res = cli.run("update", "--yes", "--json", cwd=vault)
    assert res.exit_code == 0, res.output
    assert (vault / "notes" / name).read_text() == "longer\n"
    assert not [p for p in (vault / "notes").iterdir() if p.name.startswith(".shardpy-tmp-")]


def test_backslash_in_a_name_gets_a_precise_hint(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "shard", files={"notes/a\\b.md": "x\n"})
    res = cli.run("install", shard, tmp_path / "vault", "--defaults", "--json", cwd=tmp_path)
    error = json.loads(res.stdout)["error"]
    assert error["code"] == "PATH_UNSAFE"
    assert "backslash" in error["message"] and ".." not in error["hint"]
