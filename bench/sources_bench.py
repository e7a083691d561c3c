"""Figures for shardpy.sources: archive extraction, tree hashing, git fetch.

Run: python bench/sources_bench.py [files] [bytes_per_file]
Everything happens in a temp dir; nothing touches the network.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

from shardpy.sources import fetch, parse_source, resolve
from shardpy.sources.archive import safe_extract, tree_hash


def build_tarball(path: Path, files: int, size: int) -> int:
    payload = os.urandom(size)
    with tarfile.open(path, "w:gz") as tar:
        for i in range(files):
            info = tarfile.TarInfo(f"acme-demo-abc1234/notes/{i // 100:03d}/note-{i:05d}.md")
            info.size = size
            tar.addfile(info, io.BytesIO(payload))
    return path.stat().st_size


def build_repo(path: Path, files: int, size: int) -> None:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@example.invalid",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@example.invalid",
    }
    path.mkdir()
    for i in range(files):
        note = path / "notes" / f"{i // 100:03d}" / f"note-{i:05d}.md"
        note.parent.mkdir(parents=True, exist_ok=True)
        note.write_bytes(os.urandom(size // 2).hex().encode()[:size])
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "x"], ["tag", "v1.0.0"]):
        subprocess.run(["git", *args], cwd=path, env=env, check=True)


def timed(label: str, func: object) -> object:
    start = time.perf_counter()
    result = func()  # type: ignore[operator]
    print(f"{label:<44} {time.perf_counter() - start:8.3f} s")
    return result


def main() -> None:
    files = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        archive = base / "shard.tar.gz"
        packed = build_tarball(archive, files, size)
        unpacked = files * size / 2**20
        print(f"archive: {files} files x {size} B = {unpacked:.1f} MiB unpacked, {packed / 2**20:.1f} MiB gz")
        root = timed("safe_extract (checks + data filter)", lambda: safe_extract(archive, base / "out"))
        timed("tree_hash of the extracted tree", lambda: tree_hash(root))  # type: ignore[arg-type]
        repo = base / "repo"
        build_repo(repo, files, size)
        spec = parse_source(f"git+{repo}", cwd=base)
        resolved = timed("git resolve (ls-remote, latest tag)", lambda: resolve(spec))
        fetched = timed("git fetch (shallow, checkout, tree hash)", lambda: fetch(resolved))  # type: ignore[arg-type]
        fetched.cleanup()  # type: ignore[attr-defined]


if __name__ == "__main__":
    main()
