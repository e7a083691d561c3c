"""Operating-system faults injected in-process: every write under a folder
fails with one errno (EROFS for a read-only vault, ENOSPC for a full disk),
as the kernel would refuse it; reads go through. And the real thing, for what
runs in other processes (git): a small tmpfs in a private mount namespace
(``skip_without_a_mount_namespace``)."""

from __future__ import annotations

import builtins
import io
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND


def refuse_writes(monkeypatch: pytest.MonkeyPatch, root: Path, err: int) -> None:
    top = str(root.resolve())

    def under(path: Any, dir_fd: int | None = None) -> bool:
        if isinstance(path, int):
            return False
        text = os.fsdecode(path)
        if dir_fd is not None and not os.path.isabs(text):
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
        full = os.path.abspath(text)
        return full == top or full.startswith(top + os.sep)

    def refuse(path: Any) -> None:
        raise OSError(err, os.strerror(err), os.fsdecode(path) if not isinstance(path, int) else None)

    real_os_open = os.open

    def os_open(path: Any, flags: int, mode: int = 0o777, *, dir_fd: int | None = None) -> int:
        if flags & _WRITE_FLAGS and under(path, dir_fd):
            refuse(path)
        return real_os_open(path, flags, mode, dir_fd=dir_fd)

    real_open = io.open

    def open_(file: Any, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if any(c in mode for c in "wax+") and under(file):
            refuse(file)
        return real_open(file, mode, *args, **kwargs)

    def one_path(name: str) -> None:
        real = getattr(os, name)

        def fake(path: Any, *args: Any, dir_fd: int | None = None, **kwargs: Any) -> Any:
            if under(path, dir_fd):
                refuse(path)
            if dir_fd is not None:
                kwargs["dir_fd"] = dir_fd
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, name, fake)

    def two_paths(name: str) -> None:
        real = getattr(os, name)

        def fake(src: Any, dst: Any, **kwargs: Any) -> Any:
            if under(src, kwargs.get("src_dir_fd")) or under(dst, kwargs.get("dst_dir_fd")):
                refuse(dst)
            return real(src, dst, **kwargs)

        monkeypatch.setattr(os, name, fake)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", open_)
    monkeypatch.setattr(builtins, "open", open_)
    for name in ("mkdir", "unlink", "remove", "rmdir", "chmod", "utime"):
        one_path(name)
    for name in ("replace", "rename", "link"):
        two_paths(name)


def skip_without_a_mount_namespace(probe: Path) -> None:
    """A real full disk needs a tmpfs of the test's own: a private mount namespace
    (``unshare -m``: no mount is seen outside it, and it is gone when the namespace ends), which
    some containers refuse. The test is skipped then, saying why."""
    if shutil.which("unshare") is None:
        pytest.skip("a real full disk needs `unshare` (util-linux) for a private mount namespace")
    probe.mkdir()
    script = 'mount -t tmpfs -o size=1m tmpfs "$1"'
    done = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", probe], capture_output=True, text=True)
    if done.returncode != 0:
        why = done.stderr.strip().splitlines()[-1:] or [f"exit {done.returncode}"]
        pytest.skip(f"a real full disk needs a tmpfs in a private mount namespace: {why[0]}")


NO_FILE_OVERRIDE = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def as_a_user() -> list[str]:
    """The prefix that makes a child subject to file modes as any account is: root reads and
    writes a file whatever its mode, so as root the child runs without those two capabilities
    (``setpriv``); the test is skipped, saying why, where that cannot be done."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: root reads and writes a file whatever its mode")
    probe = subprocess.run([*NO_FILE_OVERRIDE, "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"setpriv cannot drop root's file override here: {probe.stderr.decode().strip()}")
    return NO_FILE_OVERRIDE
