"""The few git facts gitsync needs, read with the ``git`` command (never a library), run by
shardpy.gitrun as every git command shardpy runs."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

from shardpy import gitrun
from shardpy.errors import ShardpyError
from shardpy.fsutil import low_space
from shardpy.record import Record

DRIVER_NAME = "shardpy"
DRIVER_KEY = f"merge.{DRIVER_NAME}.driver"
NAME_KEY = f"merge.{DRIVER_NAME}.name"
GIT_TIMEOUT_S = 30


def _failures(args: list[str]) -> gitrun.Failures:
    return gitrun.Failures(
        missing=lambda: ShardpyError(
            "GIT_NOT_INSTALLED",
            "The git command is not installed",
            "Install git; shardpy uses it as the vault's sync engine.",
        ),
        timed_out=lambda seconds: ShardpyError(
            "GIT_FAILED", f"git {args[0]} did not finish within {seconds:g} s", "Run it by hand to see why."
        ),
    )


def git(
    args: list[str], cwd: Path, *, check: bool = True, errors: str = "replace"
) -> subprocess.CompletedProcess[str]:
    """Run git in ``cwd`` (shardpy.gitrun: no prompts, C locale); failures are typed errors when
    ``check``. ``errors="surrogateescape"`` for paths handed back to git (gitrun.run)."""
    done = gitrun.run(args, cwd, timeout=GIT_TIMEOUT_S, failures=_failures(args), errors=errors)
    if check and done.returncode != 0:
        raise failure(args, done.returncode, done.stderr.strip() or done.stdout.strip(), cwd)
    return done


def git_bytes(args: list[str], cwd: Path, *, input: bytes, timeout: float = 300) -> bytes:
    """``git ARGS`` in ``cwd`` fed ``input``, its output as bytes (git's plumbing: ``fast-import``,
    ``update-index --index-info``); a failure is GIT_FAILED. The same runner as :func:`git`
    (issue 27: one git runner; tests/sources/test_gitrun.py)."""
    done = gitrun.run_bytes(args, cwd, input=input, timeout=timeout, failures=_failures(args))
    if done.returncode != 0:
        said = (done.stderr.strip() or done.stdout.strip()).decode("utf-8", "replace")
        raise failure(args, done.returncode, said, cwd)
    return done.stdout


# git's words for a full disk (it speaks the C locale here, shardpy.gitrun): its own "Out of
# diskspace" and the system's for ENOSPC and EDQUOT (tests/sync/test_full_disk.py).
_DISK_FULL = ("No space left on device", "Out of diskspace", "Disk quota exceeded")
_READ_ONLY = "Read-only file system"  # strerror(EROFS)


def disk_full(said: str, where: Path | None = None) -> bool:
    """git's message says the disk (or the user's quota) is full, or ``where``'s disk nearly is
    (some of git's writes fail without saying why: fsutil.low_space)."""
    if any(words in said for words in _DISK_FULL):
        return True
    return where is not None and low_space(where)


def cannot_write(said: str, where: Path | None = None) -> bool:
    """git failed to write this machine's repository (a full or read-only disk), not to reach or
    understand something else (tests/hardening/test_read_only_mount.py)."""
    return disk_full(said, where) or _READ_ONLY in said


# git's words when it cannot name who commits (a fresh machine: no user.name or user.email, and
# none it may guess) and when it cannot sign a commit the user's config asks it to sign
# (commit.gpgsign with no key or agent here): a newcomer's first `shardpy sync` met the first as
# GIT_FAILED, "run the same git command by hand" (tests/sync/test_sync.py).
_NO_IDENTITY = (
    "Please tell me who you are",
    "unable to auto-detect email address",
    "empty ident name",
    "identity unknown",
    "auto-detection is disabled",  # user.useConfigOnly
)
_NOT_SIGNED = ("gpg failed to sign", "Couldn't load public key", "failed to sign", "signing failed")


# A filter .gitattributes names (Git LFS most often) that this machine cannot run: the attributes
# came with a pull from a machine that has it.
_FILTER = re.compile(r"(?:clean|smudge) filter '([^']+)' failed")


def _commit_refused(what: str, said: str) -> ShardpyError | None:
    filtered = _FILTER.search(said)
    if filtered is not None:
        name = filtered.group(1)
        return ShardpyError(
            "GIT_FILTER_FAILED",
            f"{what} (the '{name}' filter .gitattributes names could not run on this machine)",
            "Install what the filter needs here (for 'lfs': Git LFS, then `git lfs install`), or "
            "take the filter out of .gitattributes if the vault no longer uses it.",
        )
    if any(words in said for words in _NO_IDENTITY):
        return ShardpyError(
            "GIT_NO_IDENTITY",
            "git does not know who commits on this machine (no user.name or user.email)",
            'Tell git once: `git config --global user.name "Your Name"` and `git config --global '
            "user.email you@example.com` (without --global: for this vault's repository only), "
            "then run the command again.",
        )
    if any(words in said for words in _NOT_SIGNED):
        return ShardpyError(
            "GIT_SIGNING_FAILED",
            f"{what} (git's configuration asks it to sign commits, and it could not here)",
            "Make the signing key usable on this machine (its agent, `user.signingkey`, "
            "`gpg.program`), or stop signing this vault's commits: `git config commit.gpgsign false`.",
        )
    return None


def failure(args: list[str], code: int, said: str, where: Path | None = None) -> ShardpyError:
    """What a failed ``git ARGS`` run in ``where`` means: DISK_FULL when git ran out of space,
    IO_ERROR when the repository is read-only, GIT_NO_IDENTITY / GIT_SIGNING_FAILED when a
    commit could not be made as configured, else GIT_FAILED."""
    last = said.splitlines()
    what = f"git {' '.join(args[:2])} failed: {last[-1] if last else f'exit {code}'}"
    full = disk_full(said, where)
    refused = None if full else _commit_refused(what, said)
    if refused is not None:
        return refused
    if not full and _READ_ONLY in said:
        return ShardpyError(
            "IO_ERROR", what, "The vault's repository is on a read-only disk or folder: make it writable."
        )
    if full:
        return ShardpyError(
            "DISK_FULL",
            what,
            "Free some space on the vault's disk and run the command again (a sync round undoes "
            "what it left unfinished before it starts).",
        )
    return ShardpyError(
        "GIT_FAILED", what, "Run the same git command by hand in the vault to see the whole message."
    )


class Repo(Record, frozen=True):
    """A git work tree and its git folder."""

    top: Path  # the work tree's top folder (the vault, or a folder above it)
    git_dir: Path


def find_repo_dir(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` holding ``.git`` (no subprocess: status uses it)."""
    for candidate in (start, *start.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def open_repo(vault: Path) -> Repo:
    return open_repo_at(vault)[0]


def open_repo_at(vault: Path) -> tuple[Repo, str]:
    """The repository holding ``vault`` and the vault's folder in it ("" at its top, else ending
    in "/"), read with one ``git rev-parse`` (a sync round asked twice: issue 30, the driver's cost)."""
    # Paths handed back to the file system: a folder name that is not UTF-8 kept byte for byte
    # (decoded with U+FFFD, the vault's own folder "no longer existed"; tests/sync/test_inprocess.py).
    args = ["rev-parse", "--show-toplevel", "--absolute-git-dir", "--show-prefix"]
    done = git(args, vault, check=False, errors="surrogateescape")
    if done.returncode != 0:
        raise ShardpyError(
            "GIT_NOT_A_REPO",
            f"{vault} is not inside a git repository",
            "Run `git init` in the vault (or clone it from your other machine), then `shardpy git setup`.",
        )
    top, git_dir, *prefix = done.stdout.split("\n")
    return Repo(Path(top), Path(git_dir)), prefix[0] if prefix else ""


def config_get(repo: Repo, key: str) -> str | None:
    """The local value (git uses the last when a key has several; then None: setup rewrites it)."""
    done = git(["config", "--local", "--get-all", "-z", key], repo.top, check=False)
    values = done.stdout.split("\0")[:-1] if done.returncode == 0 else []
    return values[0] if len(values) == 1 else None


def object_format(repo: Repo) -> str:
    """The hash the repository names its objects with: sha1 or sha256 (git cannot sync the two)."""
    fmt = git(["rev-parse", "--show-object-format"], repo.top, check=False).stdout.strip()
    return fmt if fmt in ("sha1", "sha256") else "sha1"


def local_config(repo: Repo) -> dict[str, list[str]]:
    """Every local config key (as git lists it: section and name in lower case) → its values,
    read with one ``git config``: a sync round's plan reads its records and the driver's keys
    from it instead of a ``git config`` each (issue 30, the driver's cost). Read again only when
    ``.git/config`` changed since this process last read it (its inode, size and times; a read
    of a file changed within :data:`RACY_NS` is not kept): a round re-reads it under the vault
    lock, and found the plan's answer for another ~2 ms `git config` (issue 30)."""
    signature = _config_signature(repo)
    kept = _CONFIG_READ.get(repo.git_dir)
    if signature is not None and kept is not None and kept[0] == signature:
        return {key: list(values) for key, values in kept[1].items()}
    done = git(["config", "--local", "--list", "-z"], repo.top, check=False)
    out: dict[str, list[str]] = {}
    for entry in done.stdout.split("\0") if done.returncode == 0 else []:
        key, _, value = entry.partition("\n")
        if key:
            out.setdefault(key, []).append(value)
    # `--local` reads the one file (no include.path: git follows includes only when it searches
    # every config file), so its signature says when the answer can change.
    if signature is not None and done.returncode == 0:
        _CONFIG_READ[repo.git_dir] = (signature, {key: list(values) for key, values in out.items()})
    return out


_CONFIG_READ: dict[Path, tuple[tuple[int, int, int, int], dict[str, list[str]]]] = {}


# A file changed this close before it was read could change again within the same tick of the
# file system's clock (4 ms at HZ=250 on kernels before 6.13, coarser on some file systems) and
# keep its signature: git's own "racy" rule. Such a read is not kept (a helper's review found an
# edit in place missed on ext2; tests/gitsync/test_local_config.py).
RACY_NS = 100_000_000


def _config_signature(repo: Repo) -> tuple[int, int, int, int] | None:
    """The config file's identity, or None when it cannot vouch for a read made now."""
    try:
        st = os.stat(repo.git_dir / "config")
    except OSError:
        return None
    if time.time_ns() - st.st_mtime_ns < RACY_NS:  # a content change moves the time
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def only_value(config: dict[str, list[str]], key: str) -> str | None:
    """:func:`config_get`'s answer from a :func:`local_config` read."""
    values = config.get(key, [])
    return values[0] if len(values) == 1 else None


def config_set(repo: Repo, key: str, value: str) -> None:
    # --replace-all: a key given several values (by hand, or a planted second line) ends with one.
    git(["config", "--local", "--replace-all", key, value], repo.top)


def cat_blobs(repo: Repo, specs: list[str], *, timeout: float = 300) -> dict[str, bytes | None]:
    """Each object spec's bytes (``HEAD:path`` or a blob id; None: not a blob there), read in one
    ``git cat-file --batch``. A spec holding a line break cannot be asked and is left out."""
    asked = [spec for spec in specs if "\n" not in spec]
    if not asked:
        return {}
    # --buffer: every answer in one flush at the end (we read them all at once): git flushed after
    # each object, 1,500 writes and as many wake-ups here for a sync merging 500 notes (issue 30).
    args = ["cat-file", "--batch", "--buffer"]
    stdin = "".join(f"{spec}\n" for spec in asked).encode()
    done = gitrun.run_bytes(args, repo.top, input=stdin, timeout=timeout, failures=_failures(args))
    out: dict[str, bytes | None] = {}
    data, pos = done.stdout, 0
    for spec in asked:
        nl = data.find(b"\n", pos)
        if nl < 0:
            break
        header = data[pos:nl]
        pos = nl + 1
        # "<spec> missing" (or ambiguous) has no contents; any object found, a tree's too, is
        # "<id> <type> <size>" and its contents, skipped when not a blob. A spec ending in " blob"
        # raised, and a tree put every later answer out of step (a helper's review).
        kind, size = _found(header, spec)
        if size is None:
            out[spec] = None
            continue
        out[spec] = data[pos : pos + size] if kind == b"blob" else None
        pos += size + 1
    return out


def _found(header: bytes, spec: str) -> tuple[bytes, int | None]:
    """(type, size) from cat-file's answer line; size None when nothing follows it."""
    if header.startswith(spec.encode("utf-8", "surrogateescape") + b" ") and header.endswith(
        (b" missing", b" ambiguous")
    ):
        return b"", None
    parts = header.split(b" ")
    if len(parts) != 3 or not parts[2].isdigit():
        return b"", None
    return parts[1], int(parts[2])
