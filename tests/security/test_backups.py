"""Issue 11, high: `.shardmind/backups` replaced by a link, and pruning deleting what it did not make."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.security.kit import make_victim
from tests.shardkit import Cli, make_shard, tree_snapshot, write_tree

FILES = {f"notes/n{i}.md": f"note {i}\n" for i in range(4)}


def _installed(tmp_path: Path, cli: Cli) -> tuple[Path, Path]:
    shard = make_shard(tmp_path / "shard", files=FILES)
    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    return shard, vault


def _new_version(shard: Path, n: int) -> None:
    files = {p: t.replace("note", f"note v{n}") for p, t in FILES.items()}
    make_shard(shard, files=files, manifest={"version": f"{n}.0.0"})


def test_symlinked_backups_folder_is_never_written_or_pruned(tmp_path: Path, cli: Cli) -> None:
    victim, before = make_victim(tmp_path)
    for i in range(8):  # folders the old pruning took for its own
        write_tree(victim, {f"update-2020010{i}T000000000000Z/keep.md": "mine\n", f"old{i}/a.md": "a\n"})
    before = tree_snapshot(victim)
    shard, vault = _installed(tmp_path, cli)
    os.rmdir(vault / ".shardmind/backups") if (vault / ".shardmind/backups").exists() else None
    os.symlink(victim, vault / ".shardmind/backups")
    _new_version(shard, 2)
    res = cli.run("update", "--yes", "--json", cwd=vault)
    assert res.exit_code == 1, res.output
    assert res.error_code() in ("PATH_SYMLINK", "ENGINE_FOLDER_UNSAFE")
    assert tree_snapshot(victim) == before
    assert (vault / "notes/n0.md").read_text() == "note 0\n"


def test_pruning_deletes_only_backup_folders_it_named(tmp_path: Path, cli: Cli) -> None:
    shard, vault = _installed(tmp_path, cli)
    write_tree(vault, {".shardmind/backups/my-notes/keep.md": "mine\n", ".shardmind/backups/README": "x\n"})
    for n in range(2, 10):
        _new_version(shard, n)
        res = cli.run("update", "--yes", "--json", cwd=vault)
        assert res.exit_code == 0, res.output
    names = sorted(p.name for p in (vault / ".shardmind/backups").iterdir())
    assert "my-notes" in names and "README" in names
    assert (vault / ".shardmind/backups/my-notes/keep.md").read_text() == "mine\n"
    ours = [n for n in names if n.startswith("update-")]
    assert len(ours) == 5, names
    assert json.loads((vault / ".shardmind/state.json").read_text())["version"] == "9.0.0"
