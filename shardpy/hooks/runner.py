"""Run one lifecycle hook script in a child process (CONTRACT §8).

Python hooks run with shardpy's own interpreter; `.mjs`/`.js`/`.ts` hooks
run under a suitable `node`, else they are skipped with a warning. Output
is captured (256 KiB per stream), the time limit covers the whole hook (the
context is fed to stdin by a thread, so a hook that never reads it cannot
stall it), a timeout or SIGTERM/SIGINT to shardpy terminates then kills the
whole process group, and nothing a hook does is ever fatal.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import shardpy

CAPTURE_LIMIT = 256 * 1024
GRACE_SECONDS = 2.0
HookStatus = Literal["ok", "failed", "timeout", "skipped"]

# ShardMind hooks export a function taking a camelCase context object.
_NODE_WRAPPER = r"""
import { pathToFileURL } from 'node:url';
import { readFileSync } from 'node:fs';
const ctx = JSON.parse(readFileSync(process.env.SHARDPY_HOOK_CONTEXT_JS, 'utf8'));
const mod = await import(pathToFileURL(process.argv[1]).href);
const fn = typeof mod.default === 'function' ? mod.default : (mod.default?.default ?? mod.run ?? mod.hook);
if (typeof fn === 'function') { await fn(ctx); }
"""


@dataclass
class HookResult:
    slot: str
    script: str
    status: HookStatus
    exit_code: int | None = None
    duration_ms: int = 0
    stdout: str = ""
    stderr: str = ""
    message: str = ""
    truncated: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "script": self.script,
            "status": self.status,
            "exit_code": self.exit_code,
            "duration_ms": self.duration_ms,
            "message": self.message,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "truncated": self.truncated,
        }


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.capitalize() for p in rest)


def _node_version() -> tuple[int, int] | None:
    node = shutil.which("node")
    if node is None:
        return None
    try:
        out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.match(r"v(\d+)\.(\d+)", out.strip())
    return (int(match.group(1)), int(match.group(2))) if match else None


def command_for(script: Path) -> tuple[list[str] | None, str]:
    """The argv to run ``script``, or None and the reason it cannot run."""
    suffix = script.suffix.lower()
    if suffix == ".py":
        return [sys.executable, str(script)], ""
    if suffix in (".mjs", ".js", ".ts", ".mts"):
        version = _node_version()
        needs = (22, 6) if suffix in (".ts", ".mts") else (18, 0)
        if version is None:
            return None, f"{script.name} needs Node.js; no `node` on PATH"
        if version < needs:
            return (
                None,
                f"{script.name} needs Node.js >= {needs[0]}.{needs[1]} (found {version[0]}.{version[1]})",
            )
        argv = [shutil.which("node") or "node"]
        if suffix in (".ts", ".mts") and version < (23, 6):
            argv.append("--experimental-strip-types")
        return [*argv, "--input-type=module", "-e", _NODE_WRAPPER, str(script)], ""
    return None, f"{script.name}: unsupported hook type {suffix or '(none)'} (use .py, .mjs, .js or .ts)"


def _drain(stream: IO[bytes], sink: bytearray, flags: dict[str, bool]) -> None:
    while True:
        chunk = stream.read(65536)
        if not chunk:
            return
        room = CAPTURE_LIMIT - len(sink)
        if room > 0:
            sink.extend(chunk[:room])
        if len(chunk) > room:
            flags["truncated"] = True


def _env(slot: str, ctx_file: str, js_ctx_file: str) -> dict[str, str]:
    env = dict(os.environ)
    if shardpy.pydantic_plugins_turned_off:  # set for shardpy's own start-up only
        env.pop(shardpy.PYDANTIC_PLUGINS_VAR, None)
    package_parent = str(Path(shardpy.__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_parent, env.get("PYTHONPATH", "")) if p)
    for prefix in ("SHARDPY", "SHARDMIND"):
        env[f"{prefix}_HOOK"] = "1"
        env[f"{prefix}_HOOK_PHASE"] = slot
        env[f"{prefix}_HOOK_CONTEXT"] = ctx_file
    env["SHARDPY_HOOK_CONTEXT_JS"] = js_ctx_file
    return env


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> None:
    """Wait for the hook to exit. On Linux a pidfd wakes us the moment it
    does (Popen.wait(timeout) polls, adding up to 50 ms per hook)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    if pidfd_open is not None:
        try:
            fd = pidfd_open(proc.pid)
        except OSError:
            fd = None
        if fd is not None:
            try:
                ready, _, _ = select.select([fd], [], [], timeout)
            finally:
                os.close(fd)
            if not ready:
                raise subprocess.TimeoutExpired(proc.args, timeout)
    proc.wait(timeout=timeout)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for sig, wait in ((signal.SIGTERM, GRACE_SECONDS), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def run_hook(
    slot: str, script: Path, display: str, context: dict[str, Any], vault_root: Path, timeout_ms: int
) -> HookResult:
    if not script.is_file():
        return HookResult(
            slot, display, "skipped", message=f"hook script {display} is missing from the shard"
        )
    argv, why = command_for(script)
    if argv is None:
        return HookResult(slot, display, "skipped", message=why)
    payload = json.dumps(context, ensure_ascii=False, default=str)
    js_payload = json.dumps({_camel(k): v for k, v in context.items()}, ensure_ascii=False, default=str)
    with tempfile.TemporaryDirectory(prefix="shardpy-hook-") as tmp:
        ctx_file, js_file = Path(tmp, "context.json"), Path(tmp, "context.js.json")
        ctx_file.write_text(payload, encoding="utf-8")
        js_file.write_text(js_payload, encoding="utf-8")
        return _spawn(
            slot, display, argv, payload, vault_root, _env(slot, str(ctx_file), str(js_file)), timeout_ms
        )


def _feed(stdin: IO[bytes], payload: bytes) -> None:
    """Write the context to the hook's stdin from a thread: a hook that never reads it (and a
    context over the pipe buffer, ~64 KiB) must not stop the deadline from running."""
    try:
        stdin.write(payload)
    except (BrokenPipeError, OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError, ValueError):
            stdin.close()


@contextlib.contextmanager
def _terminate_ends_hooks() -> Iterator[None]:
    """SIGTERM to shardpy while a hook runs: stop the hook's process group, then exit (143).

    The hook runs in its own session (so a timeout can kill its children), which
    also means it would outlive shardpy; SIGINT reaches us as KeyboardInterrupt.
    """

    def handler(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    try:
        previous = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _spawn(
    slot: str, display: str, argv: list[str], payload: str, cwd: Path, env: dict[str, str], timeout_ms: int
) -> HookResult:
    started = time.monotonic()
    deadline = started + timeout_ms / 1000  # the whole hook: start, context, run
    with _terminate_ends_hooks():
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as exc:
            return HookResult(slot, display, "failed", message=f"could not start: {exc}")
        out, err = bytearray(), bytearray()
        flags = {"truncated": False}
        assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None
        threads = [
            threading.Thread(target=_drain, args=(proc.stdout, out, flags), daemon=True),
            threading.Thread(target=_drain, args=(proc.stderr, err, flags), daemon=True),
            threading.Thread(target=_feed, args=(proc.stdin, payload.encode("utf-8")), daemon=True),
        ]
        for thread in threads:
            thread.start()
        status: HookStatus = "ok"
        message = ""
        try:
            _wait(proc, max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _stop(proc)
            status, message = "timeout", f"timed out after {timeout_ms} ms"
        except BaseException:
            _stop(proc)
            raise
    for thread in threads:
        thread.join(timeout=5)
    code = proc.returncode
    if status == "ok" and code != 0:
        status, message = "failed", f"exited with code {code}"
    return HookResult(
        slot,
        display,
        status,
        exit_code=code,
        duration_ms=int((time.monotonic() - started) * 1000),
        stdout=out.decode("utf-8", "replace"),
        stderr=err.decode("utf-8", "replace"),
        message=message,
        truncated=flags["truncated"],
    )
