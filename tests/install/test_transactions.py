"""All-or-nothing installs: a full disk, a read-only file, SIGKILL at random
points (the next install recovers), Ctrl-C (exit 130, nothing left), and a
second writer (VAULT_LOCKED)."""

from __future__ import annotations

import errno
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import shardpy.fsutil
from tests.shardkit import (
    Cli,
    assert_equals_clone,
    child_env,
    clone_expectation,
    describe,
    interrupt_during_apply,
    leftovers,
    make_shard,
    read_json,
    run_shardpy,
    tree_snapshot,
    write_tree,
)

SCHEMA = {
    "values": {"user_name": {"type": "string", "default": ""}},
    "modules": {"extra": {"label": "Extra", "paths": ["extra/"], "removable": True}},
}


def big_shard(root: Path, n: int = 60) -> Path:
    files: dict[str, str | bytes] = {f"notes/n{i:03}.md": f"note {i}\n" * 3 for i in range(n)}
    files.update({f"extra/t{i}.md.njk": f"# {{{{ user_name }}}} {i}\n" for i in range(10)})
    files["Home.md.njk"] = "---\ntitle: {{ user_name }}\n---\nhome\n"
    return make_shard(root, files=files, schema=SCHEMA)


class FullDisk:
    """`_write_all` that fails with ENOSPC from call ``fail_at`` on."""

    def __init__(self, fail_at: int) -> None:
        self.calls = 0
        self.fail_at = fail_at
        self.real = shardpy.fsutil._write_all

    def __call__(self, fd: int, data: bytes) -> None:
        self.calls += 1
        if self.calls > self.fail_at:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.real(fd, data)


EXISTING = {"mine.md": "mine\n", "notes/n001.md": "note 1\n" * 3}


def _count_writes(
    monkeypatch: pytest.MonkeyPatch, cli: Cli, shard: Path, dest: Path, cwd: Path, existing: bool
) -> int:
    if existing:
        write_tree(dest, EXISTING)
    counter = FullDisk(10**9)
    monkeypatch.setattr(shardpy.fsutil, "_write_all", counter)
    cli.install_json(shard, dest, "--defaults", cwd=cwd)
    monkeypatch.undo()
    return counter.calls


@pytest.mark.parametrize("dest_exists", [False, True], ids=["new-dest", "existing-dest"])
def test_full_disk_mid_apply_rolls_everything_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Cli, dest_exists: bool
) -> None:
    shard = big_shard(tmp_path / "shard", n=20)
    total = _count_writes(monkeypatch, cli, shard, tmp_path / "probe", tmp_path, dest_exists)
    assert total > 40
    rng = random.Random(total)
    points = sorted({0, 1, 2, total // 2, total - 2, total - 1, *rng.sample(range(total), 4)})
    for fail_at in points:
        dest = tmp_path / f"vault-{fail_at}"
        if dest_exists:
            write_tree(dest, EXISTING)
        before = tree_snapshot(tmp_path)
        monkeypatch.setattr(shardpy.fsutil, "_write_all", FullDisk(fail_at))
        res = cli.run("install", shard, dest, "--defaults", "--json", cwd=tmp_path)
        monkeypatch.undo()
        assert res.exit_code == 1, (fail_at, res.output)
        err = res.json()["error"]
        assert err["code"] == "DISK_FULL", (fail_at, err)
        assert tree_snapshot(tmp_path) == before, f"debris after a full disk at write {fail_at}"


def test_read_only_existing_file_aborts_and_rolls_back(tmp_path: Path, cli: Cli) -> None:
    shard = big_shard(tmp_path / "shard", n=10)
    vault = write_tree(tmp_path / "vault", {"notes/n005.md": "my own note\n", "mine.md": "x\n"})
    (vault / "notes/n005.md").chmod(0o444)
    before = tree_snapshot(tmp_path)

    res = cli.run("install", shard, vault, "--defaults", "--backup", "--json", cwd=tmp_path)

    assert res.exit_code == 1, res.output
    err = res.json()["error"]
    assert err["code"] == "PATH_READ_ONLY", err
    assert err["path"] == "notes/n005.md"
    assert tree_snapshot(tmp_path) == before
    assert (vault / "notes/n005.md").stat().st_mode & 0o777 == 0o444


def test_read_only_values_file_in_dest(tmp_path: Path, cli: Cli) -> None:
    shard = big_shard(tmp_path / "shard", n=3)
    vault = write_tree(tmp_path / "vault", {"shard-values.yaml": "old: answers\n"})
    (vault / "shard-values.yaml").chmod(0o400)
    before = tree_snapshot(tmp_path)
    res = cli.run("install", shard, vault, "--defaults", "--backup", "--json", cwd=tmp_path)
    assert res.error_code() == "PATH_READ_ONLY"
    assert tree_snapshot(tmp_path) == before


def test_sigkill_at_random_points_then_the_next_install_recovers(tmp_path: Path) -> None:
    shard = big_shard(tmp_path / "shard")
    expected = clone_expectation(shard)
    seed = int.from_bytes(os.urandom(4), "big")
    rng = random.Random(seed)
    mid_apply = 0
    for trial in range(6):
        vault = tmp_path / f"vault{trial}"
        # Trials 0-3 die while the transaction applies; 4-5 anywhere from the start.
        during = trial < 4
        killed = interrupt_during_apply(
            "install",
            shard,
            vault,
            "--defaults",
            cwd=tmp_path,
            vault=vault,
            sig=signal.SIGKILL,
            after=rng.uniform(0, 0.5) if during else rng.uniform(0, 0.6),
            wait_for_journal=during,
        )
        context = f"seed={seed} trial={trial} killed={killed}"
        assert killed.returncode in (-signal.SIGKILL, 0), context
        mid_apply += killed.journal_seen and killed.returncode == -signal.SIGKILL
        if killed.journal_seen and killed.returncode == -signal.SIGKILL:
            assert not (vault / ".shardmind/state.json").exists() or (
                read_json(vault / ".shardmind/journal.json")["phase"] == "committed"
            ), context

        again = run_shardpy("install", shard, vault, "--defaults", cwd=tmp_path)
        if again.returncode != 0:
            # Only when the killed install had already committed.
            assert "VAULT_ALREADY_INSTALLED" in again.stderr, context + describe(again)
        assert_equals_clone(vault, expected)
        assert leftovers(vault) == [], context
        status = run_shardpy("status", "--json", cwd=vault)
        assert status.returncode == 0
        assert '"missing": 0' in status.stdout and '"modified": 0' in status.stdout, context
    assert mid_apply >= 3, f"seed={seed}: too few kills landed mid-apply ({mid_apply})"


def test_next_install_reports_the_rollback(tmp_path: Path) -> None:
    shard = big_shard(tmp_path / "shard", n=30)
    vault = tmp_path / "vault"
    killed = interrupt_during_apply(
        "install", shard, vault, "--defaults", cwd=tmp_path, vault=vault, sig=signal.SIGKILL, after=0.05
    )
    assert killed.returncode == -signal.SIGKILL and killed.journal_seen
    again = run_shardpy("install", shard, vault, "--defaults", cwd=tmp_path)
    assert again.returncode == 0, describe(again)
    assert "Rolled back an interrupted install" in again.stdout
    assert_equals_clone(vault, clone_expectation(shard))


@pytest.mark.parametrize("dest_exists", [False, True], ids=["new-dest", "existing-dest"])
def test_ctrl_c_exits_130_and_leaves_nothing(tmp_path: Path, dest_exists: bool) -> None:
    shard = big_shard(tmp_path / "shard")
    vault = tmp_path / "vault"
    if dest_exists:
        write_tree(vault, {"mine.md": "mine\n", "notes/n003.md": "my n3\n"})
    before = tree_snapshot(tmp_path)
    for after in (0.0, 0.2):
        res = interrupt_during_apply(
            "install",
            shard,
            vault,
            "--defaults",
            "--backup",
            cwd=tmp_path,
            vault=vault,
            sig=signal.SIGINT,
            after=after,
        )
        assert res.journal_seen
        assert res.returncode == 130, res
        assert "rolled back" in res.stderr
        assert tree_snapshot(tmp_path) == before


def test_second_writer_is_refused_with_vault_locked(tmp_path: Path, cli: Cli) -> None:
    shard = big_shard(tmp_path / "shard", n=3)
    vault = tmp_path / "vault"
    vault.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from pathlib import Path; from shardpy.vault.lock import vault_lock\n"
            "with vault_lock(Path(sys.argv[1]), command='test-holder'):\n"
            "    print('held', flush=True); time.sleep(60)\n",
            str(vault),
        ],
        env=child_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = tree_snapshot(tmp_path)
        res = cli.run("install", shard, vault, "--defaults", "--json", cwd=tmp_path)
        assert res.exit_code == 1
        err = res.json()["error"]
        assert err["code"] == "VAULT_LOCKED"
        assert tree_snapshot(tmp_path) == before
    finally:
        holder.kill()
        holder.wait()
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)  # the lock died with its holder


def test_a_journal_appearing_after_planning_asks_for_a_retry(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import json

    import shardpy.flows.install as flow

    shard = big_shard(tmp_path / "shard", n=3)
    vault = tmp_path / "vault"
    vault.mkdir()
    real = flow._decide_backups

    def crash_elsewhere(*args: object, **kwargs: object) -> None:
        # another shardpy process dies mid-transaction right after this one planned
        from shardpy.apply.journalcheck import ensure_vault_id

        journal = {
            "version": 2,
            "vault_id": ensure_vault_id(vault)[0],  # a journal shardpy wrote in this vault
            "label": "install",
            "phase": "applying",
            "touched": [],
            "new_dirs": [],
            "backup_dir": ".shardmind/backups/install-20260101T000000000000Z",
        }
        (vault / ".shardmind/journal.json").write_text(json.dumps(journal))
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(flow, "_decide_backups", crash_elsewhere)
    res = cli.run("install", shard, vault, "--defaults", "--json", cwd=tmp_path)
    assert res.error_code() == "INSTALL_RETRY"
    assert sorted(p for p in tree_snapshot(vault) if not p.startswith(".shardmind")) == []
    assert not (vault / ".shardmind/journal.json").exists()
    monkeypatch.undo()
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
