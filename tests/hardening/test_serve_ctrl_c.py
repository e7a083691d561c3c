"""Issue 26, item 13: ``shardpy serve`` on a terminal ignored Ctrl-C (its stdin reader sat in a
thread no cancellation reaches, so the server waited for a line that never came). SIGINT now ends
it, after a handshake (the server is inside its loop), with no lock or journal left in the vault.
The child's stdin and stdout are a pseudo-terminal, as when a user runs it by hand; the timeout
is a hang guard, not a measurement."""

from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import termios
from pathlib import Path

from tests.serve.kit import build_world
from tests.shardkit import child_env, shardpy_argv

HANG_GUARD = 60.0


def _read_until(fd: int, needle: bytes, limit: float = HANG_GUARD) -> bytes:
    seen = b""
    while needle not in seen:
        ready, _, _ = select.select([fd], [], [], limit)
        assert ready, f"no {needle!r} from the server; it said {seen!r}"
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        seen += chunk
    return seen


def _drain(fd: int) -> bytes:
    """What the exited child left on its terminal."""
    seen = b""
    while select.select([fd], [], [], 1.0)[0]:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child's side is closed and empty
            break
        if not chunk:
            break
        seen += chunk
    return seen


def test_ctrl_c_ends_serve_on_a_terminal(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    main, child_tty = pty.openpty()
    attrs = termios.tcgetattr(child_tty)
    attrs[3] &= ~termios.ECHO  # the request is not echoed back among the answers
    termios.tcsetattr(child_tty, termios.TCSANOW, attrs)
    proc = subprocess.Popen(
        shardpy_argv("serve", world.vault),
        stdin=child_tty,
        stdout=child_tty,
        stderr=child_tty,
        cwd=world.repos["atlas"],
        env=child_env({"XDG_CACHE_HOME": str(tmp_path / "cache")}),
        start_new_session=True,
    )
    os.close(child_tty)
    try:
        hello = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "terminal", "version": "0"},
            },
        }
        os.write(main, json.dumps(hello).encode() + b"\n")
        said = _read_until(main, b"protocolVersion")
        assert b'"id":1' in said.replace(b" ", b""), said
        proc.send_signal(signal.SIGINT)  # what Ctrl-C sends
        code = proc.wait(timeout=HANG_GUARD)
        rest = _drain(main)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(main)
    assert code == 130, (code, rest)  # the CLI's exit for an interrupted command
    assert b"Traceback" not in rest, rest
    sidecar = world.vault / ".shardmind"
    left = sorted(p.name for p in sidecar.iterdir()) if sidecar.exists() else []
    assert not [n for n in left if "lock" in n or "journal" in n], left
