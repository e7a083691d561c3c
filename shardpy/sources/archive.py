"""Safe archive extraction and stable tree hashes.

An archive from the network is untrusted: every entry is checked before
anything is written (absolute names, ``..``, links, devices and fifos are
refused; total size and entry count are capped), and extraction then runs
through ``tarfile``'s ``data`` filter as a second line of defence. On any
failure the destination is removed, so nothing is left behind.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tarfile
import tempfile
import zlib
from pathlib import Path, PurePosixPath

from shardpy.errors import ShardpyError
from shardpy.fsutil import sha256_file
from shardpy.sources.model import remove_tree

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
DEFAULT_MAX_ENTRIES = 100_000
_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, OSError)


def _env_limit(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise ShardpyError(
            "SOURCE_SETTING_INVALID",
            f"{name}={raw!r} is not a positive whole number",
            f"Unset {name} or give a number of {'bytes' if 'BYTES' in name else 'entries'}.",
        )
    return value


def max_archive_bytes() -> int:
    return _env_limit("SHARDPY_MAX_ARCHIVE_BYTES", DEFAULT_MAX_BYTES)


def max_archive_entries() -> int:
    return _env_limit("SHARDPY_MAX_ARCHIVE_ENTRIES", DEFAULT_MAX_ENTRIES)


def _normalised(name: str) -> PurePosixPath:
    """Entry name without leading ``./`` parts (``tar -C dir .`` writes them)."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _unsafe(archive: Path, entry: str, why: str) -> ShardpyError:
    return ShardpyError(
        "SOURCE_ARCHIVE_UNSAFE",
        f"Refusing archive {archive.name}: entry {entry!r} {why}",
        "The archive may be malicious; shards are plain files and directories only.",
        path=str(archive),
        details={"entry": entry, "reason": why},
    )


def _check_member(archive: Path, member: tarfile.TarInfo) -> None:
    name = member.name
    if name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":") or "\\" in name:
        raise _unsafe(archive, name, "has an absolute path")
    if ".." in name.split("/"):
        raise _unsafe(archive, name, "climbs out of the archive with '..'")
    if member.issym() or member.islnk():
        raise _unsafe(archive, name, f"is a {'symbolic' if member.issym() else 'hard'} link")
    if member.ischr() or member.isblk():
        raise _unsafe(archive, name, "is a device file")
    if member.isfifo():
        raise _unsafe(archive, name, "is a named pipe")
    if not (member.isreg() or member.isdir()):
        raise _unsafe(archive, name, "is not a regular file or directory")


# tarfile's "data" filter came with Python 3.11.4; Debian 12's Python is 3.11.2, where `filter=`
# was a TypeError (found when this machine's Python became Debian's; tests/sources/test_archive_filter.py).
_HAS_DATA_FILTER = hasattr(tarfile, "data_filter")
_FILTER_ERRORS: tuple[type[Exception], ...] = (tarfile.FilterError,) if _HAS_DATA_FILTER else ()


def _extract(tar: tarfile.TarFile, dest: Path, members: list[tarfile.TarInfo]) -> None:
    """Extract ``members`` (each passed :func:`_check_member`) as tarfile's "data" filter does."""
    if _HAS_DATA_FILTER:
        tar.extractall(dest, members=members, filter="data")
        return
    # Without the filter: _check_member refused what it refuses (absolute and '..' names, links,
    # devices, pipes); what it changes is changed here, by its rules. A file's mode is data_mode,
    # its owner whoever extracts. A folder's mode is the filter's None: the system's default (the
    # umask's), never the archive's, and a folder already there (`dest` as "./") keeps its own;
    # tarfile before 3.11.4 always set a folder's mode, so folders are made here, not by it.
    files = [m for m in members if m.isreg()]
    for member in files:
        member.mode = data_mode(member.mode)
        member.uid, member.gid, member.uname, member.gname = os.getuid(), os.getgid(), "", ""
    tar.extractall(dest, members=files)  # a file's missing folders made with the default mode
    for member in members:
        if member.isdir():
            os.makedirs(dest / member.name, exist_ok=True)


def data_mode(mode: int) -> int:
    """A regular file's mode as the "data" filter leaves it: owner read and write added; set-id,
    sticky and group and other write bits cleared; group and other execute cleared unless the
    owner has it."""
    mode = (mode | 0o600) & 0o755
    return mode if mode & 0o100 else mode & ~0o111


def _too_large(archive: Path, what: str, limit: int, setting: str) -> ShardpyError:
    return ShardpyError(
        "SOURCE_ARCHIVE_TOO_LARGE",
        f"Refusing archive {archive.name}: more than {limit} {what}",
        f"Raise {setting} if this shard really is that large.",
        path=str(archive),
        details={"limit": limit, "setting": setting},
    )


def _invalid(archive: Path, exc: BaseException) -> ShardpyError:
    return ShardpyError(
        "SOURCE_ARCHIVE_INVALID",
        f"{archive.name} is not a readable .tar.gz archive: {exc}",
        "The download may be truncated or the file is not an archive; fetch it again.",
        path=str(archive),
    )


def safe_extract(archive: Path, dest: Path) -> Path:
    """Extract ``archive`` into the new directory ``dest``; return the source root.

    ``dest`` must not exist. A single top-level directory (GitHub's
    ``owner-repo-sha/``, or a tarred shard folder) is the returned root.
    On any error ``dest`` is removed before the error propagates.
    """
    max_bytes, max_entries = max_archive_bytes(), max_archive_entries()
    os.mkdir(dest, 0o700)
    try:
        try:
            tar = tarfile.open(archive, mode="r:*")  # noqa: SIM115 - entered just below
        except _READ_ERRORS as exc:
            raise _invalid(archive, exc) from exc
        with tar:
            members: list[tarfile.TarInfo] = []
            total = 0
            try:
                for member in tar:
                    _check_member(archive, member)
                    members.append(member)
                    if len(members) > max_entries:
                        raise _too_large(archive, "entries", max_entries, "SHARDPY_MAX_ARCHIVE_ENTRIES")
                    total += member.size if member.isreg() else 0
                    if total > max_bytes:
                        raise _too_large(archive, "bytes unpacked", max_bytes, "SHARDPY_MAX_ARCHIVE_BYTES")
            except _READ_ERRORS as exc:
                raise _invalid(archive, exc) from exc
            if not members:
                raise _invalid(archive, ValueError("the archive is empty"))
            try:
                _extract(tar, dest, members)
            except _FILTER_ERRORS as exc:
                raise _unsafe(archive, getattr(exc, "tarinfo", members[0]).name, str(exc)) from exc
            except _READ_ERRORS as exc:
                raise _invalid(archive, exc) from exc
        return _strip_single_top(dest, members)
    except BaseException:
        remove_tree(dest)
        raise


def _strip_single_top(dest: Path, members: list[tarfile.TarInfo]) -> Path:
    tops: set[str] = set()
    deeper = False
    for member in members:
        parts = _normalised(member.name).parts
        if not parts or parts == (".",):
            continue
        tops.add(parts[0])
        deeper = deeper or len(parts) > 1 or member.isdir()
    if len(tops) == 1 and deeper:
        (top,) = tops
        candidate = dest / top
        if top != ".shardmind" and stat.S_ISDIR(os.lstat(candidate).st_mode):
            return candidate
    return dest


def extract_to_temp(archive: Path, *, prefix: str = "shardpy-src-") -> tuple[Path, Path]:
    """Extract into a fresh temp dir; returns (temp dir to clean up, source root)."""
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        root = safe_extract(archive, parent / "src")
    except BaseException:
        remove_tree(parent)
        raise
    return parent, root


def tree_hash(root: Path) -> str:
    """A stable hash of a directory tree: relative paths, kinds and bytes.

    ``.git`` directories are skipped and links are hashed as their target
    text, never followed, so the hash tells whether the tree changed.
    """
    digest = hashlib.sha256()
    entries: list[tuple[str, str, str]] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        base = Path(dirpath)
        rel_base = base.relative_to(root)
        for name in [*dirnames, *filenames]:
            path = base / name
            rel = (rel_base / name).as_posix()
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if stat.S_ISLNK(mode):
                entries.append((rel, "L", os.readlink(path)))
            elif stat.S_ISDIR(mode):
                entries.append((rel, "D", ""))
            elif stat.S_ISREG(mode):
                entries.append((rel, "F", sha256_file(path) or ""))
            else:
                entries.append((rel, "O", ""))
    for rel, kind, content in sorted(entries):
        digest.update(f"{kind}\0{rel}\0{content}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()
