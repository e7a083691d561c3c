"""Issue 11: recovery trusts nothing it did not write.

A tampered `.shardmind/` (a journal bound to this very vault, so only the
journal rules stand between it and the disk), tampered or missing backups,
and edits made after a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.security.kit import killed_after, make_victim
from tests.shardkit import Cli, Symlink, make_shard, run_shardpy, tree_snapshot, write_tree

BACKUP = ".shardmind/backups/update-20260101T000000000000Z"
FILES = {f"notes/n{i}.md": f"note {i}\n" for i in range(6)}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def vault(tmp_path: Path, cli: Cli) -> Path:
    shard = make_shard(tmp_path / "shard", files=FILES)
    cli.install_json(shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    return tmp_path / "vault"


def plant(vault: Path, **fields: Any) -> None:
    """A journal carrying this vault's own id: only the journal rules stop it."""
    journal: dict[str, Any] = {
        "version": 2,
        "vault_id": (vault / ".shardmind/vault-id").read_text().strip(),
        "label": "update",
        "phase": "applying",
        "backup_dir": BACKUP,
        "touched": [],
        "new_dirs": [],
    }
    journal.update(fields)
    (vault / ".shardmind/journal.json").write_text(json.dumps(journal))


def status_error(vault: Path) -> str:
    done = run_shardpy("status", "--json", cwd=vault)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    return str(json.loads(done.stdout)["error"]["code"])


def hostile(victim: Path) -> dict[str, dict[str, Any]]:
    thesis = sha((victim / "thesis.md").read_bytes())
    return {
        "absolute-backup-dir": {"backup_dir": str(victim)},
        "dotdot-backup-dir": {"backup_dir": ".shardmind/backups/../../../victim"},
        "dotdot-touched": {
            "touched": [{"path": "../victim/thesis.md", "existed": False, "written": [thesis]}]
        },
        "absolute-touched": {"touched": [{"path": str(victim / "thesis.md"), "existed": False}]},
        "outside-new-dir": {"new_dirs": ["../victim/chapters"]},
        "wrong-types": {"touched": [{"path": 7, "existed": "yes"}], "new_dirs": "notes"},
        "not-a-list": {"touched": "notes/n0.md"},
        "unknown-phase": {"phase": "whatever"},
    }


@pytest.mark.parametrize(
    "case",
    [
        "absolute-backup-dir",
        "dotdot-backup-dir",
        "dotdot-touched",
        "absolute-touched",
        "outside-new-dir",
        "wrong-types",
        "not-a-list",
        "unknown-phase",
    ],
)
def test_tampered_journal_is_refused_and_changes_nothing(vault: Path, tmp_path: Path, case: str) -> None:
    victim, before = make_victim(tmp_path)
    plant(vault, **hostile(victim)[case])
    vault_before = tree_snapshot(vault)
    assert status_error(vault) == "TRANSACTION_JOURNAL_INVALID"
    assert tree_snapshot(victim) == before
    assert tree_snapshot(vault) == vault_before


def test_journal_copied_from_another_vault_is_not_replayed(vault: Path, tmp_path: Path, cli: Cli) -> None:
    other = tmp_path / "other"
    cli.install_json(make_shard(tmp_path / "shard2", files=FILES), other, "--defaults", cwd=tmp_path)
    plant(other, touched=[{"path": "notes/n0.md", "existed": False, "written": [sha(b"note 0\n")]}])
    os.replace(other / ".shardmind/journal.json", vault / ".shardmind/journal.json")
    vault_before = tree_snapshot(vault)
    assert status_error(vault) == "TRANSACTION_JOURNAL_INVALID"
    assert tree_snapshot(vault) == vault_before


def test_backup_that_became_a_symlink_is_never_followed(vault: Path, tmp_path: Path) -> None:
    victim, before = make_victim(tmp_path)
    secret = (victim / "thesis.md").read_bytes()
    write_tree(vault, {f"{BACKUP}/notes/n0.md": Symlink(str(victim / "thesis.md"))})
    entry = {"path": "notes/n0.md", "existed": True, "hash": sha(secret), "written": [sha(b"note 0\n")]}
    plant(vault, touched=[entry])
    assert status_error(vault) == "TRANSACTION_BACKUP_INVALID"
    assert (vault / "notes/n0.md").read_bytes() == b"note 0\n", "a file from outside was copied in"
    assert tree_snapshot(victim) == before


def test_backups_folder_that_is_a_symlink_is_never_used(vault: Path, tmp_path: Path) -> None:
    victim, before = make_victim(tmp_path)
    os.symlink(victim, vault / ".shardmind/backups")
    plant(vault, backup_dir=".shardmind/backups/update-20260101T000000000000Z")
    assert status_error(vault) == "TRANSACTION_JOURNAL_INVALID"
    assert tree_snapshot(victim) == before


def _killed_update(tmp_path: Path, cli: Cli, after_ops: int) -> Path:
    """An installed vault whose update to 2.0.0 died after ``after_ops`` operations."""
    shard = make_shard(tmp_path / "shard", files=FILES)
    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    make_shard(
        shard,
        files={p: t.replace("note", "NOTE v2") for p, t in FILES.items()},
        manifest={"version": "2.0.0"},
    )
    killed_after(after_ops, "update", "--yes", cwd=vault)
    assert (vault / ".shardmind/journal.json").is_file()
    return vault


def test_missing_or_tampered_backup_stops_recovery(tmp_path: Path, cli: Cli) -> None:
    vault = _killed_update(tmp_path, cli, after_ops=3)
    journal = json.loads((vault / ".shardmind/journal.json").read_text())
    backup = vault / journal["backup_dir"]
    (backup / "notes/n0.md").write_text("tampered\n")
    (backup / "notes/n1.md").unlink()
    during = tree_snapshot(vault)
    done = run_shardpy("status", cwd=vault)
    assert done.returncode == 0, done.stderr
    assert "TRANSACTION_BACKUP_INVALID" in done.stderr + done.stdout
    assert "Rolled back" not in done.stdout + done.stderr
    assert tree_snapshot(vault) == during, "a refused recovery changed the vault"
    update = run_shardpy("update", "--yes", "--json", cwd=vault)
    assert json.loads(update.stdout)["error"]["code"] == "TRANSACTION_BACKUP_INVALID"


def test_rollback_keeps_edits_made_after_the_crash(tmp_path: Path, cli: Cli) -> None:
    vault = _killed_update(tmp_path, cli, after_ops=3)
    rewritten = [p for p in FILES if (vault / p).read_text().startswith("NOTE v2")]
    untouched = [p for p in FILES if p not in rewritten]
    assert rewritten and untouched
    (vault / rewritten[0]).write_text("my edit after the crash\n")
    (vault / untouched[0]).write_text("my other edit\n")
    done = run_shardpy("status", "--json", cwd=vault)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)["recovered"]
    assert report["action"] == "rolled-back"
    assert sorted(report["kept"]) == sorted([rewritten[0], untouched[0]])
    assert (vault / rewritten[0]).read_text() == "my edit after the crash\n"
    assert (vault / untouched[0]).read_text() == "my other edit\n"
    for path in rewritten[1:]:
        assert (vault / path).read_text() == FILES[path], "an untouched rewrite was not rolled back"
    assert not (vault / ".shardmind/journal.json").exists()
