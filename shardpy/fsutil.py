"""Low-level, safe file primitives shared by every writing command.

Everything that writes into a vault goes through :func:`atomic_write` and
:func:`safe_target`: paths are vault-relative POSIX strings, never absolute,
never containing ``..``, and no component on the way may be a symbolic link
(a link inside the vault could redirect a write outside it).
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path, PurePosixPath

from shardpy.errors import ShardpyError

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any

TMP_MARK = ".shardpy-tmp-"


def io_error(
    exc: OSError, action: str, *, path: str | None = None, rolled_back: bool = False
) -> ShardpyError:
    """A typed error for an operating-system failure (full disk, I/O error,
    permission denied) so it is reported, not raised as a traceback."""
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT)
    undone = " Every change was rolled back." if rolled_back else ""
    return ShardpyError(
        "DISK_FULL" if full else "IO_ERROR",
        f"{action} failed: {exc.strerror or exc}",
        ("Free some disk space and run the command again." if full else "Check the path and its permissions.")
        + undone,
        path=path,
        details={"errno": exc.errno} if exc.errno is not None else None,
    )


# Reading flags for a file in a vault or a source: never through a link, and never blocking on a
# FIFO (opening one for reading waits for a writer: `status`, an import and the server hung for
# good on a note replaced by one: tests/hardening/test_special_files.py).
READ_FLAGS = (
    os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
)


class NotRegularFile(OSError):
    """:func:`open_regular` found a folder, a FIFO, a socket or a device (errno EINVAL), told apart
    from an EINVAL the file system gave ``open`` itself (journalcheck.current_hash)."""


def open_regular(path: str | os.PathLike[str], *, dir_fd: int | None = None, follow: bool = False) -> int:
    """A descriptor for reading the regular file at ``path`` (READ_FLAGS); OSError for a link
    (unless ``follow``), a folder, a FIFO, a socket or a device (EINVAL "not a regular file")."""
    return open_regular_stat(path, dir_fd=dir_fd, follow=follow)[0]


def open_regular_stat(
    path: str | os.PathLike[str], *, dir_fd: int | None = None, follow: bool = False
) -> tuple[int, os.stat_result]:
    """:func:`open_regular`, with the descriptor's stat (its size for a reader's bound)."""
    flags = READ_FLAGS & ~getattr(os, "O_NOFOLLOW", 0) if follow else READ_FLAGS
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def read_regular(path: str | os.PathLike[str]) -> bytes:
    """The bytes of the regular file at ``path`` (:func:`open_regular`: a FIFO is an OSError, never
    a read that waits for a writer)."""
    fd = open_regular(path)
    with open(fd, "rb", closefd=True) as fh:
        return fh.read()


# A file name whose bytes are not UTF-8 comes back from os with surrogate escapes: kept so to hand
# back to the file system or git, shown with U+FFFD (tests/hardening/test_odd_names.py).
def utf8_name(name: str) -> bool:
    """``name`` (as os gives it) was UTF-8: no surrogate escape stands for a byte that was not."""
    if name.isascii():
        return True
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def printable(path: str) -> str:
    """``path`` with U+FFFD where a name held bytes that are not UTF-8 (surrogate escapes)."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


# Some writers fail on a full disk without saying so (git's "failed to write new configuration
# file", SQLite's "disk I/O error" for its WAL index): a write failure with less than this left
# on the disk is taken for a full disk (tests/sync/test_full_disk.py, tests/index/test_full_disk.py).
LOW_SPACE_BYTES = 1 << 20


def low_space(path: str | os.PathLike[str]) -> bool:
    """The disk holding ``path`` (or its nearest existing folder) has under LOW_SPACE_BYTES left."""
    where = os.fspath(path)
    while where and not os.path.exists(where):
        parent = os.path.dirname(where)
        if parent == where:
            break
        where = parent
    try:
        st = os.statvfs(where or ".")
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < LOW_SPACE_BYTES


# The content hash (issue 27: one owner). Every file, note, record and archive is named by the
# hex sha256 these return; tests/test_one_primitive.py keeps other modules from re-deriving it.
def sha256_bytes(data: bytes) -> str:
    if len(data) <= _SMALL_DIGEST:
        small = _builtin_digest("sha256")
        if small is not None:
            return str(small(data).hexdigest())
    import hashlib

    return hashlib.sha256(data).hexdigest()


def sha1_hex(data: bytes) -> str:
    """SHA-1 of ``data``, for names that are not content hashes of ours (git's object ids, the
    index's rules fingerprint): without loading OpenSSL's module for small inputs (~2.5 ms)."""
    if len(data) <= _SMALL_DIGEST:
        small = _builtin_digest("sha1")
        if small is not None:
            return str(small(data).hexdigest())
    import hashlib

    return hashlib.sha1(data, usedforsecurity=False).hexdigest()


_SMALL_DIGEST = 4096  # bytes: up to this the builtin SHA-256 is as fast as OpenSSL's


_BUILTIN_MODULES = {"sha256": ("_sha2", "_sha256"), "sha1": ("_sha1",)}  # Python 3.12+, 3.11


@lru_cache(maxsize=2)
def _builtin_digest(name: str) -> Callable[[bytes], Any] | None:
    """CPython's own SHA-256 or SHA-1 (the same digest), without loading OpenSSL's module: ~2 ms
    of a one-shot search, which hashes only the vault's path (issue 29; tests/hardening/test_digest.py).
    Looked up once per process."""
    import importlib

    for module in _BUILTIN_MODULES[name]:
        try:
            made: Callable[[bytes], Any] = getattr(importlib.import_module(module), name)
            return made
        except (ImportError, AttributeError):
            continue
    return None


def sha256_stream(fh: io.BufferedIOBase) -> str:
    """Hash of what is left to read in the open binary file ``fh`` (read in blocks, GIL released)."""
    import hashlib

    return hashlib.file_digest(fh, "sha256").hexdigest()


def sha256_file(path: Path) -> str | None:
    """Hash of a regular file's bytes, or None when it does not exist."""
    try:
        with open(path, "rb") as fh:
            return sha256_stream(fh)
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return None


def read_text(name: str) -> str:
    """A file's UTF-8 text with newlines translated as ``open(name, encoding="utf-8")``
    reads it (``\\r\\n`` and a lone ``\\r`` become ``\\n``), at a third of its cost:
    for loops over thousands of notes. Raises OSError / UnicodeDecodeError."""
    fd = open_regular(name, follow=True)  # a linked note is read at its target (notes/keycache.py)
    try:
        data = os.read(fd, 1 << 16)
        while True:
            more = os.read(fd, 1 << 16)
            if not more:
                break
            data += more
    finally:
        os.close(fd)
    text = data.decode("utf-8")
    return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text


@lru_cache(maxsize=8192)
def rel_parts(rel: str) -> tuple[str, ...]:
    """The components of a vault-relative POSIX path (``.`` and empty ones
    dropped); refuses absolute paths, ``..`` and backslashes. Plain string
    work: this runs several times for every file a command writes."""
    parts = tuple(p for p in rel.split("/") if p and p != ".")
    if "\\" in rel:
        # On Windows a backslash separates folders: such a name means another path there.
        raise ShardpyError(
            "PATH_UNSAFE",
            f"Refusing path {rel!r}: a file or folder name may not contain a backslash",
            "Rename it without '\\' (folders are separated by '/').",
            path=rel,
        )
    if not parts or rel.startswith("/") or ".." in parts:
        raise ShardpyError(
            "PATH_UNSAFE",
            f"Refusing unsafe path {rel!r}",
            "Paths must be relative to the vault and must not contain '..'.",
            path=rel,
        )
    return parts


def check_relpath(rel: str) -> PurePosixPath:
    """Validate a vault-relative POSIX path; refuse absolute and ``..`` paths."""
    return PurePosixPath(*rel_parts(rel))


def symlink_refused(shown: str) -> ShardpyError:
    return ShardpyError(
        "PATH_SYMLINK",
        f"Refusing to write through a symbolic link: {shown}",
        "Remove or replace the link; shardpy never follows links inside a vault.",
        path=shown,
    )


def not_a_directory(shown: str, message: str) -> ShardpyError:
    return ShardpyError(
        "PATH_NOT_DIRECTORY", message, "Move the file or link out of the way and run again.", path=shown
    )


def read_only(rel: str, *, verb: str = "change") -> ShardpyError:
    return ShardpyError(
        "PATH_READ_ONLY",
        f"{rel} is read-only",
        f"Make it writable (chmod u+w) if shardpy should {verb} it, then run again.",
        path=rel,
    )


def _refuse_link(root: str, current: str) -> None:
    raise symlink_refused(current[len(root) + 1 :])


def safe_target(root: Path, rel: str) -> Path:
    """Absolute path for ``rel`` under ``root``, refusing symlinks on the way.

    Every existing component between ``root`` and the target (the target
    included) is ``lstat``-ed; a symbolic link anywhere is a typed error, so
    a write can never land outside the vault through a link.
    """
    parts = rel_parts(rel)
    base = os.fspath(root)
    current = base
    for part in parts:
        current = f"{current}/{part}"
        try:
            st = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):  # nothing there (yet)
            break
        if stat.S_ISLNK(st.st_mode):
            _refuse_link(base, current)
    return root.joinpath(*parts)


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)  # one call writes a whole note: no view is made unless it did not
    if written == len(data):
        return
    view = memoryview(data)[written:]
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_path(path: Path) -> None:
    """fsync a file or folder, best effort: a flush that fails is not a reason to undo a written file."""
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@lru_cache(maxsize=1)
def _syncfs_function() -> Callable[[int], int] | None:
    """libc's syncfs, looked up at the first flush (ctypes is not worth loading on every command)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        func = ctypes.CDLL(None, use_errno=True).syncfs  # the C library this process already has
        func.argtypes = [ctypes.c_int]
        func.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    syncfs: Callable[[int], int] = func
    return syncfs


def syncfs(folder: Path) -> bool:
    """syncfs(2) on ``folder``'s filesystem: its dirty pages and metadata changes reach the disk.

    One call instead of an fsync per file and folder (each waits for a
    journal commit: ~1 ms apiece, more on a busy disk). False when not
    available (not Linux) or it failed; the caller then fsyncs each file.
    """
    func = _syncfs_function()
    if func is None:
        return False
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return False
    try:
        return func(fd) == 0
    finally:
        os.close(fd)


# Files from which one syncfs is cheaper than an fsync each; below it, fsyncs, which do not
# wait for other programs' unwritten data on the same filesystem.
SYNCFS_MIN = 64


def syncfs_all(folders: Iterable[Path]) -> bool:
    """syncfs once per filesystem the folders live on; False when that is not possible here."""
    by_device: dict[int, Path] = {}
    for folder in folders:
        try:
            by_device.setdefault(os.stat(folder).st_dev, folder)
        except (FileNotFoundError, NotADirectoryError):
            # A folder emptied and removed meanwhile, or one a file took the place of (a release
            # turning a folder into a file, tests/update/test_faults.py): its parent is listed too.
            continue
    return all(syncfs(d) for d in by_device.values())


def make_parents(root: Path, rel: str) -> list[str]:
    """Create missing parent directories of ``rel``; return the ones created."""
    created: list[str] = []
    parts = rel_parts(rel)[:-1]
    base = os.fspath(root)
    current = base
    for i, part in enumerate(parts):
        current = f"{current}/{part}"
        try:
            st = os.lstat(current)
        except FileNotFoundError:
            os.mkdir(current)
            created.append("/".join(parts[: i + 1]))
            continue
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            shown = current[len(base) + 1 :]
            raise not_a_directory(shown, f"Cannot create {rel}: {shown} is not a directory")
    return created


def atomic_write(
    root: Path,
    rel: str,
    data: bytes | Iterable[bytes],
    *,
    mode: int | None = None,
    durable: bool = True,
    sync_dir: bool = True,
    folder_fd: int | None = None,
    device: int = 0,
    exclusive: bool = False,
) -> list[str]:
    """Write ``data`` (bytes, or chunks of them) to ``root/rel`` atomically: temp file, fsync, rename.

    The one atomic writer (issue 27): the transaction, the batched apply and
    every cache go through it. Returns the parent directories that had to be
    created (so a caller can undo them). The existing file's permission bits
    are kept unless ``mode`` is given. ``durable=False`` skips the fsyncs
    (the caller flushes a batch at once: ``apply/executor.py``);
    ``sync_dir=False`` skips only the directory's, for a caller that syncs
    each directory once. With ``folder_fd`` (the open folder of the file,
    ``apply/folders.py``) no path is resolved again: see :func:`_write_at`.
    """
    if folder_fd is not None:
        _write_at(folder_fd, rel, data, durable=durable, device=device, exclusive=exclusive)
        return []
    target = safe_target(root, rel)
    created = make_parents(root, rel)
    current = replaced_mode(os.fspath(target), rel)
    chunks = (data,) if isinstance(data, bytes) else data
    replace_with(os.fspath(target), chunks, mode=current if mode is None else mode, durable=durable)
    if durable and sync_dir:
        fsync_path(target.parent)
    return created


def _write_at(
    folder_fd: int, rel: str, data: bytes | Iterable[bytes], *, durable: bool, device: int, exclusive: bool
) -> None:
    """:func:`atomic_write`'s contract on the descriptor of ``rel``'s folder.

    The target is checked (a link or a read-only file is refused, the
    permission bits are kept), written to a temporary file with the same name
    pattern (:func:`remove_stale_temps` finds it) and renamed. ``exclusive``:
    the file must not exist yet; FileExistsError, with nothing changed, when
    it does. Where the filesystem can, the rename itself refuses to replace
    (:func:`create_new`), so a file that appears meanwhile is never
    overwritten.
    """
    name = rel.rpartition("/")[2]
    if exclusive:
        created = create_new(
            name, data if isinstance(data, bytes) else b"".join(data), dir_fd=folder_fd, device=device
        )
        if created is False:
            raise FileExistsError(errno.EEXIST, "exists", rel)
        if created:
            if durable:
                os.fsync(folder_fd)
            return
    mode = replaced_mode(name, rel, dir_fd=folder_fd)
    if exclusive and mode is not None:
        raise FileExistsError(errno.EEXIST, "exists", rel)
    replace_with(
        name, (data,) if isinstance(data, bytes) else data, mode=mode, durable=durable, dir_fd=folder_fd
    )
    if durable:
        os.fsync(folder_fd)


def remove_stale_temps(root: Path, targets: list[str]) -> int:
    """Delete temporary files a killed :func:`atomic_write` left beside ``targets``; return how many."""
    by_dir: dict[str, set[str]] = {}
    for t in targets:
        folder, _, name = t.rpartition("/")
        by_dir.setdefault(folder, set()).add(temp_tail(name))
    removed = 0
    for folder, names in by_dir.items():
        try:
            with os.scandir(root / folder if folder else root) as it:
                stale = [
                    e.name
                    for e in it
                    if e.name.startswith(TMP_MARK) and e.name[len(TMP_MARK) + 9 :] in names and e.is_file()
                ]
        except OSError:
            continue
        for name in stale:
            with contextlib.suppress(OSError):
                os.unlink(root / folder / name if folder else root / name)
                removed += 1
    return removed


def replaced_mode(name: str, rel: str, *, dir_fd: int | None = None) -> int | None:
    """Permission bits of the file ``name`` a write is about to replace (None: there is none).

    A link is refused, and so is a read-only file: replacing it by rename
    would succeed, but the user said "do not change this".
    """
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(st.st_mode):
        raise symlink_refused(rel)
    current = stat.S_IMODE(st.st_mode)
    if not current & 0o222:
        raise read_only(rel)
    return current


NAME_MAX = 255  # bytes of one file name (Linux, macOS)


def temp_tail(base: str) -> str:
    """What follows ``TMP_MARK<8 hex>-`` in the temporary name for the file ``base``: the name
    itself, or, when that would make the temporary name too long, a digest of it."""
    if len(TMP_MARK) + 9 + len(os.fsencode(base)) <= NAME_MAX:
        return base
    return "h" + sha256_bytes(os.fsencode(base))[:32]


def replace_with(
    name: str, chunks: Iterable[bytes], *, mode: int | None, durable: bool, dir_fd: int | None = None
) -> None:
    """Write ``chunks`` to a temporary file beside ``name``, then rename it over ``name``.

    ``name`` is absolute, or relative to the folder ``dir_fd``. The temporary
    name carries TMP_MARK, so a crash's leftover is recognised and removed.
    """
    base = name.rpartition("/")[2]
    tmp = f"{name[: len(name) - len(base)]}{TMP_MARK}{os.urandom(4).hex()}-{temp_tail(base)}"  # beside it
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        fd = os.open(tmp, flags, 0o666 if mode is None else mode, dir_fd=dir_fd)
        try:
            for chunk in chunks:
                _write_all(fd, chunk)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if mode is not None:
            os.chmod(tmp, mode, dir_fd=dir_fd)
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise


def replace_with_link(name: str, text: bytes) -> None:
    """Make a symbolic link holding ``text`` beside the absolute ``name``, then rename it over ``name``.

    :func:`replace_with` for a link (a copier template's kept links, issue 26): the same
    temporary names, so a crash's leftover is recognised and removed the same way.
    """
    base = name.rpartition("/")[2]
    tmp = f"{name[: len(name) - len(base)]}{TMP_MARK}{os.urandom(4).hex()}-{temp_tail(base)}"
    os.symlink(text, tmp)
    try:
        os.replace(tmp, name)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


RENAME_NOREPLACE = 1  # renameat2(2) flag: fail with EEXIST instead of replacing the target


@lru_cache(maxsize=1)
def _renameat2_function() -> Callable[[int, bytes, int, bytes, int], int] | None:
    """libc's renameat2 (glibc 2.28+, Linux 3.15+), looked up at the first exclusive create."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        func = ctypes.CDLL(None, use_errno=True).renameat2
        func.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        func.restype = ctypes.c_int
    except (OSError, AttributeError):
        return None
    renameat2: Callable[[int, bytes, int, bytes, int], int] = func
    return renameat2


_NO_RENAMEAT2: set[int] = set()  # devices whose filesystem refused RENAME_NOREPLACE (EINVAL)


def create_new(name: str, data: bytes, *, dir_fd: int, device: int) -> bool | None:
    """Write ``data`` as the new file ``name`` in the folder ``dir_fd``, atomically, never replacing one.

    A temporary file is written and renamed with ``RENAME_NOREPLACE``, so a
    file that appeared at ``name`` since the plan looked (the user's, or a
    link) is never overwritten: True when the file was created, False when
    ``name`` exists (nothing was changed), None when this system or
    filesystem cannot rename exclusively (the caller takes the checked path).
    Not durable: the caller flushes (see ``apply/executor.py``).
    """
    func = _renameat2_function()
    if func is None or device in _NO_RENAMEAT2:
        return None
    tmp = f"{TMP_MARK}{os.urandom(4).hex()}-{temp_tail(name)}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o666, dir_fd=dir_fd)
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        if func(dir_fd, os.fsencode(tmp), dir_fd, os.fsencode(name), RENAME_NOREPLACE) == 0:
            return True
        err = _ctypes_errno()
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=dir_fd)
        raise
    with contextlib.suppress(OSError):
        os.unlink(tmp, dir_fd=dir_fd)
    if err == errno.EEXIST:
        return False
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        _NO_RENAMEAT2.add(device)
        return None
    raise OSError(err, os.strerror(err), name)


def _ctypes_errno() -> int:
    """errno of the last ctypes call on this thread (``use_errno=True`` keeps it per thread)."""
    import ctypes

    return ctypes.get_errno()


def remove_file(root: Path, rel: str) -> bool:
    """Delete ``root/rel`` if it is a file; True when something was removed."""
    target = safe_target(root, rel)
    try:
        current = stat.S_IMODE(os.lstat(target).st_mode)
    except FileNotFoundError:
        return False
    if not current & 0o222:
        raise read_only(rel, verb="remove")
    os.unlink(target)
    return True


def prune_empty_dirs(root: Path, rels: list[str]) -> None:
    """Remove the given directories (deepest first) when they are empty."""
    for rel in sorted(set(rels), key=lambda r: r.count("/"), reverse=True):
        with contextlib.suppress(OSError):
            os.rmdir(root / rel)


def flock_within(fd: int, wait: float, *, poll: float = 0.01) -> bool:
    """Take an exclusive ``flock`` on ``fd``, retrying for ``wait`` seconds
    (0: one try); False when another process still holds it."""
    import fcntl
    import time

    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        if time.monotonic() >= deadline:
            return False
        time.sleep(poll)
