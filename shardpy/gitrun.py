"""The one way shardpy runs the ``git`` command (issue 27: gitsync/repo.py and
sources/git.py each set their own environment, timeout, decoding and errors).

Every run: no prompt can block (``GIT_TERMINAL_PROMPT=0``, stdin closed), git
speaks the C locale (callers read its words: sources/git.py's markers), output
is captured (text decoded as UTF-8 with replacement, or bytes), and a git that
is missing or does not finish in time is the caller's typed error, never a
traceback. An exit code is not an error here: each caller says what git's
failure means for it (gitsync: GIT_FAILED; sources: SOURCE_NOT_FOUND, ...).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from shardpy.errors import ShardpyError

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any

QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}


class Failures:
    """What a missing git and a git that did not finish are, to one caller. (A plain
    class: status imports this module, and making a dataclass costs start-up.)"""

    __slots__ = ("missing", "timed_out")

    def __init__(
        self, missing: Callable[[], ShardpyError], timed_out: Callable[[float], ShardpyError]
    ) -> None:
        self.missing, self.timed_out = missing, timed_out


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment, quiet (QUIET_ENV and :func:`_ssh_quiet`), with ``extra`` on top."""
    return {**os.environ, **QUIET_ENV, **_ssh_quiet(), **(extra or {})}


_FALSE: list[str] = []  # where `false` is, looked up once


def _ssh_quiet() -> dict[str, str]:
    """ssh asks for a key's passphrase and to trust an unknown host on the terminal itself, past
    GIT_TERMINAL_PROMPT and a closed stdin: a `sync --watch` left running in the background of a
    terminal was stopped there for good (SIGTTIN), a one-shot one waited on a question. ssh asks
    the askpass program instead when SSH_ASKPASS_REQUIRE is "force" (OpenSSH 8.4 and later),
    and ``false`` answers no: the passphrase is an agent's to give, the host key a `git fetch`
    by hand's to accept (tests/sync/test_faults.py). A user who set either variable keeps theirs."""
    if "SSH_ASKPASS_REQUIRE" in os.environ or "SSH_ASKPASS" in os.environ:
        return {}
    if not _FALSE:
        # Where it is on every Linux and macOS first: shutil's import cost a sync ~1.7 ms (issue 30).
        usual = next((p for p in ("/usr/bin/false", "/bin/false") if os.access(p, os.X_OK)), None)
        if usual is None:
            import shutil

            usual = shutil.which("false")
        _FALSE.append(usual or "")
    return {"SSH_ASKPASS_REQUIRE": "force", "SSH_ASKPASS": _FALSE[0]} if _FALSE[0] else {}


def run(
    args: Sequence[str],
    cwd: Path | None,
    *,
    timeout: float,
    failures: Failures,
    env: Mapping[str, str] | None = None,
    errors: str = "replace",
) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` in ``cwd``, its output as text. ``env``: the whole environment
    (default: :func:`environment`). ``errors``: "surrogateescape" for paths given back to git or
    the file system (a name that is not UTF-8 kept byte for byte); "replace" for words to show."""
    quiet = dict(env) if env is not None else environment()
    done = _spawn(args, cwd, timeout, failures, env=quiet, stdin=subprocess.DEVNULL)
    # Decoded here, not by ``text=True``: its universal newlines turned a "\r" in a path into "\n",
    # and a note named with a carriage return, changed on two machines, was handed back to git as
    # another path: every sync round after failed (helper-found; tests/sync/test_inprocess.py).
    out, err = done.stdout.decode("utf-8", errors), done.stderr.decode("utf-8", errors)
    return subprocess.CompletedProcess(done.args, done.returncode, out, err)


def run_bytes(
    args: Sequence[str], cwd: Path | None, *, input: bytes, timeout: float, failures: Failures
) -> subprocess.CompletedProcess[bytes]:
    """``git ARGS`` in ``cwd`` fed ``input``, its output as bytes (``cat-file --batch``)."""
    files = _memory_files()
    if files is None:
        return _spawn(args, cwd, timeout, failures, env=environment(), input=input)
    return _spawn_through_memory(args, cwd, timeout, failures, input, files)


def _memory_files() -> tuple[int, int] | None:
    """Two memory files (git's input, its answer), or None where there are none: not Linux, or a
    sandbox or old kernel that refuses ``memfd_create`` (ENOSYS, EPERM), where the pipes still
    work (a helper's review; tests/sources/test_gitrun.py)."""
    make = getattr(os, "memfd_create", None)
    if make is None:
        return None
    try:
        given = make("shardpy-git-in", os.MFD_CLOEXEC)
    except OSError:
        return None
    try:
        return given, make("shardpy-git-out", os.MFD_CLOEXEC)
    except OSError:
        os.close(given)
        return None


def _spawn_through_memory(
    args: Sequence[str],
    cwd: Path | None,
    timeout: float,
    failures: Failures,
    input: bytes,
    files: tuple[int, int],
) -> subprocess.CompletedProcess[bytes]:
    """:func:`_spawn` with stdin and stdout in memory files, not pipes: git reads and writes them
    at its own pace and this process reads the answer in one call when git is done. Through pipes,
    ``communicate`` went round its poll loop per 32 kB: a sync merging 500 notes spent 6.4 ms of
    its own CPU reading cat-file's 2 MB of blobs and 1.3 ms feeding fast-import (issue 30;
    tests/sources/test_gitrun.py runs both ways). stderr stays a pipe (a few lines at most)."""
    given, answer = files
    try:
        view = memoryview(input)
        while view:
            view = view[os.write(given, view) :]
        os.lseek(given, 0, os.SEEK_SET)
        done = _spawn(
            args,
            cwd,
            timeout,
            failures,
            env=environment(),
            stdin=given,
            stdout=answer,
            stderr=subprocess.PIPE,
        )
        size = os.fstat(answer).st_size
        out = os.pread(answer, size, 0)  # one read, as a rule: it is memory
        while len(out) < size:
            more = os.pread(answer, size - len(out), len(out))
            if not more:
                break
            out += more
        return subprocess.CompletedProcess(done.args, done.returncode, out, done.stderr)
    finally:
        os.close(given)
        os.close(answer)


def _spawn(
    args: Sequence[str], cwd: Path | None, timeout: float, failures: Failures, **how: Any
) -> subprocess.CompletedProcess[Any]:
    if "stdout" not in how:
        how["capture_output"] = True
    try:
        return subprocess.run(["git", *args], cwd=cwd, timeout=timeout, check=False, **how)
    except FileNotFoundError:
        if cwd is not None and not os.path.isdir(cwd):
            # The folder to run in went away (a vault deleted under `sync --watch`): not a missing
            # git (tests/sources/test_gitrun.py).
            raise ShardpyError(
                "IO_ERROR",
                f"The folder {cwd} no longer exists",
                "Restore or recreate it, or run the command in another folder.",
                path=str(cwd),
            ) from None
        raise failures.missing() from None
    except subprocess.TimeoutExpired:
        raise failures.timed_out(timeout) from None
