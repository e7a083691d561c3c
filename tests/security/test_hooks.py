"""Issue 11, high: a hook's time limit covers the whole hook, and SIGTERM/SIGINT to shardpy end it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.shardkit import child_env, make_shard, run_shardpy, shardpy_argv

NEVER_READS = """\
import os, pathlib, time
pathlib.Path("hook-pid").write_text(str(os.getpid()))
time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _shard(tmp_path: Path, default: str) -> Path:
    schema = {"values": {"bio": {"type": "string", "default": default}}}
    manifest = {"hooks": {"timeout_ms": 1000}}
    return make_shard(
        tmp_path / "shard",
        files={"Home.md": "home\n"},
        schema=schema,
        hooks={"post-install": NEVER_READS},
        manifest=manifest,
    )


def test_hook_deadline_covers_a_context_larger_than_the_pipe(tmp_path: Path) -> None:
    shard = _shard(tmp_path, "x" * 200_000)  # the context is far over the ~64 KiB pipe buffer
    done = run_shardpy("install", shard, tmp_path / "vault", "--defaults", "--json", cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    [hook] = json.loads(done.stdout)["hooks"]
    assert hook["status"] == "timeout", hook
    pid = int((tmp_path / "vault/hook-pid").read_text())
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_to_shardpy_ends_a_running_hooks_process_group(tmp_path: Path, sig: int) -> None:
    shard = _shard(tmp_path, "short")
    manifest = (
        (shard / ".shardmind/shard.yaml").read_text().replace('"timeout_ms": 1000', '"timeout_ms": 60000')
    )
    (shard / ".shardmind/shard.yaml").write_text(manifest)
    vault = tmp_path / "vault"
    proc = subprocess.Popen(
        shardpy_argv("install", shard, vault, "--defaults"),
        cwd=tmp_path,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (vault / "hook-pid").is_file() and time.monotonic() < deadline:
            time.sleep(0.01)
        time.sleep(0.1)
        pid = int((vault / "hook-pid").read_text())
        proc.send_signal(sig)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + sig
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), "the hook outlived shardpy"
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, 0)
