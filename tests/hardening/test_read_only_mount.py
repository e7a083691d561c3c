"""A vault and a cache that really are read-only (a read-only bind mount in a private mount
namespace, tests/hardening/faults.py: EROFS from the kernel, for git's writes too).

The index built, both folders are remounted read-only and real ``python -m shardpy`` children
run: `search` answers from the index it has, saying it could not be refreshed; `index` is
INDEX_UNWRITABLE; `sync`, `rm` and `import --apply` are typed errors with exit 1 and JSON on
stdout; nothing in the vault changes; never a traceback.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.gitsync.kit import git, git_env
from tests.hardening.faults import skip_without_a_mount_namespace
from tests.shardkit import child_env, run_shardpy, shardpy_argv, tree_snapshot

# $1 the vault, $2 the cache, $3 where to report, $4 the basic-memory folder; $5... shardpy.
READ_ONLY = r"""
set -u
vault=$1; cache=$2; out=$3; bm=$4; shift 4
for d in "$vault" "$cache"; do mount --bind "$d" "$d" && mount -o remount,bind,ro "$d" || exit 97; done
cd "$vault"
run() { name=$1; shift; "$@" > "$out/$name.out" 2> "$out/$name.err"; echo $? > "$out/$name.rc"; }
run search "$@" search release --json
run index "$@" index --json
run sync "$@" sync --no-push --json
run rm "$@" rm notes/release-1.md --json
run import "$@" import --from basic-memory "$bm" . --apply --json
exit 0
"""
# sync: its fetch cannot write this machine's repository: an error, never "unreachable".
NO_BIND_MOUNT = 97
FAILS = {"index": "INDEX_UNWRITABLE", "sync": "IO_ERROR", "rm": "IO_ERROR", "import": "IO_ERROR"}


def _vault(tmp: Path) -> Path:
    vault = tmp / "vault"
    (vault / ".shardmind").mkdir(parents=True)
    state = '{"files": {}, "install_date": "2026-01-01T00:00:00Z", "modules": {}, "shard": "test", '
    (vault / ".shardmind/state.json").write_text(state + '"source": "local", "version": "1.0.0"}\n')
    (vault / "notes").mkdir()
    for i in range(5):
        text = f"---\ntitle: Release {i}\n---\n\nThe release plan {i} and how we roll it back.\n"
        (vault / f"notes/release-{i}.md").write_text(text, encoding="utf-8")
    git(vault, "init", "--quiet")
    assert run_shardpy("sync", "--yes", "--json", cwd=vault).returncode == 0  # set up, committed
    # Another machine pushed a note: the sync below has a merge to write.
    hub, other = tmp / "hub.git", tmp / "other"
    git(tmp, "clone", "--quiet", "--bare", str(vault), str(hub))
    git(vault, "remote", "add", "origin", str(hub))
    git(vault, "fetch", "--quiet", "origin")
    git(tmp, "clone", "--quiet", str(hub), str(other))
    (other / "notes/new.md").write_text("---\ntitle: New\n---\n\nA new release note.\n", encoding="utf-8")
    git(other, "add", "-A")
    git(other, "commit", "--quiet", "-m", "new")
    git(other, "push", "--quiet", "origin", "HEAD")
    return vault


def test_a_read_only_vault_and_cache_answer_searches_and_refuse_writes_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    skip_without_a_mount_namespace(tmp_path / "probe")
    git_env(monkeypatch, tmp_path / "home")
    cache, out, bm = tmp_path / "cache", tmp_path / "out", tmp_path / "bm/notes"
    out.mkdir()
    bm.mkdir(parents=True)
    (bm / "a.md").write_text("---\ntitle: A\ntype: note\npermalink: notes/a\n---\n\n# A\n\n- [fact] x\n")
    vault = _vault(tmp_path)
    env = child_env({"SHARDPY_CACHE_DIR": str(cache)})
    built = subprocess.run(
        shardpy_argv("search", "release", "--json"), cwd=vault, env=env, capture_output=True
    )
    assert built.returncode == 0, built.stderr
    before = tree_snapshot(vault)
    argv = ["unshare", "-m", "sh", "-c", READ_ONLY, "sh", vault, cache, out, bm.parent, *shardpy_argv()]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=300)
    if done.returncode == NO_BIND_MOUNT:  # tmpfs allowed, read-only bind mounts not: say so
        pytest.skip(f"a read-only vault needs a read-only bind mount: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr

    answers: dict[str, tuple[int, dict[str, Any]]] = {}
    for run in ("search", *FAILS):
        text = (out / f"{run}.out").read_text(encoding="utf-8")
        assert "Traceback" not in text + (out / f"{run}.err").read_text(encoding="utf-8"), run
        answers[run] = (int((out / f"{run}.rc").read_text()), json.loads(text))
    code, search = answers["search"]
    assert code == 0 and len(search["hits"]) == 5, search
    for run, expected in FAILS.items():
        code, answer = answers[run]
        error = answer["error"] if "error" in answer else answer["remotes"][0]  # sync: the remote's
        assert code == 1 and error["code"] == expected, (run, answer)
    assert tree_snapshot(vault) == before
