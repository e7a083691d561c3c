"""What a recovery checks before it acts on a journal it finds on disk.

A journal (the transaction's ``.shardmind/journal.json``, an import run's
``journal.sqlite3``) is read back after a crash, and a crash is not the only
way one gets there: a shard, a cloned repository or anyone with write access
to the folder can plant one. So every recovery treats it as untrusted input
and applies these rules, kept here once for both recoveries:

- the journal names the vault it was written in (a random id written at the
  first transaction, :data:`VAULT_ID`); a copied or planted one is not
  replayed;
- every path is vault-relative, normalised, inside the vault and reached
  through no symbolic link; an engine folder (backups, templates, bases,
  imports) is used only when it and every folder above it is a real folder;
- a file is undone only while it still holds the bytes the journal says
  were written (:func:`undo`); a file changed since is the user's;
- a backup is restored only if its bytes hash to what the journal recorded.

Anything else is a refusal that changes nothing and says why.
"""

from __future__ import annotations

import enum
import errno
import os
import re
import stat
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.fsutil import (
    NotRegularFile,
    atomic_write,
    open_regular,
    rel_parts,
    sha256_stream,
    symlink_refused,
)
from shardpy.vault.layout import (
    BACKUPS,
    CACHED_MANIFEST,
    CACHED_SCHEMA,
    LOCAL,
    PINNED_BASES,
    SIDECAR,
    STATE,
    TEMPLATES,
    UPDATE_CHECK,
    VAULT_ID,
)

TYPE_CHECKING = False  # no typing at run time (shardpy/record.py: a sync and a search import none)
if TYPE_CHECKING:
    from typing import Any

SHA256 = re.compile(r"[0-9a-f]{64}")
# Transaction backup folders are ``<label>-<UTC time>``; only such names are ever pruned.
BACKUP_NAME = re.compile(r"[a-z][a-z0-9-]{0,40}-\d{8}T\d{12}Z")
_VAULT_ID = re.compile(r"[0-9a-f]{32}")


class Untrusted(ValueError):
    """One broken rule; the caller collects them into its typed refusal."""


def text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise Untrusted(f"{what} is not a string")
    return value


def digest(value: Any, what: str, *, optional: bool = True) -> str | None:
    """A sha256 hex digest (or None where allowed)."""
    if value is None and optional:
        return None
    if not isinstance(value, str) or SHA256.fullmatch(value) is None:
        raise Untrusted(f"{what} is not a sha256 digest")
    return value


def vault_path(root: Path, value: Any, what: str) -> str:
    """``value`` as a vault path: relative, normalised, inside ``root``, no link on the way."""
    rel = text(value, what)
    try:
        parts = rel_parts(rel)
    except ShardpyError:
        raise Untrusted(f"{what} {rel!r} is not a path inside the vault") from None
    if "/".join(parts) != rel:
        raise Untrusted(f"{what} {rel!r} is not normalised")
    current = os.fspath(root)
    for i, part in enumerate(parts):
        current = f"{current}/{part}"
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            break
        if stat.S_ISLNK(mode):
            raise Untrusted(f"{what} {rel!r} passes through a symbolic link")
        if i < len(parts) - 1 and not stat.S_ISDIR(mode):
            break  # a file where a folder was: nothing below it exists
    return rel


def real_folder(root: Path, rel: str) -> bool:
    """``root/rel`` exists and it and every folder above it (up to ``root``) is a real folder."""
    current = os.fspath(root)
    for part in rel_parts(rel):
        current = f"{current}/{part}"
        try:
            mode = os.lstat(current).st_mode
        except (FileNotFoundError, NotADirectoryError):
            return False
        if stat.S_ISLNK(mode) or not stat.S_ISDIR(mode):
            return False
    return True


def engine_folder(root: Path, rel: str) -> Path | None:
    """``root/rel`` if it is a real engine folder; None when absent; refuses a link or a file."""
    current = os.fspath(root)
    for part in rel_parts(rel):
        current = f"{current}/{part}"
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return None
        shown = current[len(os.fspath(root)) + 1 :]
        if stat.S_ISLNK(mode):
            raise symlink_refused(shown)
        if not stat.S_ISDIR(mode):
            raise ShardpyError(
                "ENGINE_FOLDER_UNSAFE",
                f"{shown} is a file where shardpy keeps a folder",
                "shardpy never uses its own folders through a link. Remove the link (or move the "
                "file away) and run the command again.",
                path=shown,
            )
    return Path(current)


def backup_folder(root: Path, value: Any) -> str:
    """A transaction's backup folder: the vault's own ``.shardmind/backups/<name>``, real if present."""
    rel = vault_path(root, value, "backup_dir")
    head, _, name = rel.rpartition("/")
    if head != BACKUPS or BACKUP_NAME.fullmatch(name) is None:
        raise Untrusted(f"backup_dir {rel!r} is not a folder of {BACKUPS}/")
    for folder in (SIDECAR, BACKUPS, rel):
        if os.path.lexists(root / folder) and not real_folder(root, folder):
            raise Untrusted(f"{folder} is not a real folder")
    return rel


# shardpy's own records a transaction writes (flows/vaultfiles.py, flows/update.py): the only
# paths under .shardmind/ a planned write may name. Its journal, vault id, backups, import runs and
# ledger, audit log are written by their own code (atomic_write, batch, serve/audit), never by a plan.
ENGINE_RECORDS = frozenset({STATE, CACHED_MANIFEST, CACHED_SCHEMA, UPDATE_CHECK, LOCAL})
ENGINE_RECORD_FOLDERS = (f"{TEMPLATES}/", f"{PINNED_BASES}/")


def planned_write(rel: str, *, records: bool = False) -> None:
    """Refuse a planned write or delete of ``rel`` that is not plainly vault content.

    Every path a plan names (a transaction's ops, an import run's steps) passes here before
    anything is written: it is vault-relative without ``..`` (``PATH_UNSAFE``), never in a ``.git``
    folder at any depth nor in ``.shardmind/`` (``PATH_RESERVED``), whatever the case of the
    name. ``records``: the plan may also name shardpy's own records (:data:`ENGINE_RECORDS`, the
    template and base copies). A plan is built from untrusted input (a shard, a pulled record):
    one aimed at ``.git/hooks/pre-commit`` or ``.shardmind/vault-id`` overwrote them
    (tests/security/test_pulled_ledger.py).
    """
    if rel and not rel.startswith(("/", ".")) and "/." not in rel and "\\" not in rel:
        return  # no part starts with a dot (so no ``..``, .git, .shardmind): every note's fast path
    parts = [p for p in rel.split("/") if p and p != "."]
    if not parts or ".." in parts or "\\" in rel or rel.startswith("/"):
        rel_parts(rel)
    dotted = [p.casefold() for p in parts if p[0] == "."]
    if not dotted:
        return
    if ".git" in dotted:
        raise _reserved(rel, "a .git folder (git's own files and hooks)")
    if parts[0].casefold() == SIDECAR:
        norm = "/".join(parts)
        if records and (norm in ENGINE_RECORDS or norm.startswith(ENGINE_RECORD_FOLDERS)):
            return
        raise _reserved(rel, f"{SIDECAR}/ (shardpy's own records)")


def _reserved(rel: str, where: str) -> ShardpyError:
    return ShardpyError(
        "PATH_RESERVED",
        f"Refusing to write {rel}: it lies in {where}. Nothing was written",
        "A plan only ever writes vault content. The path came from input shardpy does not trust (a "
        "shard, a pulled or edited record); check where it came from.",
        path=rel,
    )


class FileState(enum.Enum):
    ABSENT = "absent"
    OTHER = "other"  # a link, a folder, a device: never something a journal wrote


def current_hash(root: Path, rel: str) -> str | FileState:
    """sha256 of the regular file ``root/rel`` (read without following a link), or what is there instead."""
    path = os.fspath(root / rel)
    try:
        fd = open_regular(path)
    except (FileNotFoundError, NotADirectoryError):
        return FileState.ABSENT
    except NotRegularFile:  # a folder, a FIFO, a device
        return FileState.OTHER
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EISDIR):  # a link
            return FileState.OTHER
        raise
    with open(fd, "rb") as fh:
        return sha256_stream(fh)


class Undo(enum.Enum):
    NOTHING = "nothing"  # the path holds what it held before
    RESTORE = "restore"  # it holds what the journal wrote: put the old state back
    KEEP = "keep"  # changed since by someone else: left alone and reported


def undo(current: str | FileState, before: str | None, written: tuple[str | None, ...]) -> Undo:
    """What a rollback may do with one path: ``before`` is the hash it had, ``written`` the ones
    the interrupted command may have left there (None: no file)."""
    if current is FileState.OTHER:
        return Undo.KEEP
    now = None if current is FileState.ABSENT else current
    if now == before:
        return Undo.NOTHING
    return Undo.RESTORE if now in written else Undo.KEEP


def read_vault_id(root: Path) -> str | None:
    """The vault's id, or None when it has none (or it is not a plain file holding one)."""
    path = os.fspath(root / VAULT_ID)
    try:
        fd = open_regular(path)
    except OSError:
        return None
    with open(fd, "rb") as fh:
        value = fh.read(64).decode("ascii", "replace").strip()
    return value if _VAULT_ID.fullmatch(value) else None


def ensure_vault_id(root: Path) -> tuple[str, bool]:
    """The vault's id, written now when it has none; (id, written now)."""
    found = read_vault_id(root)
    if found is not None:
        return found, False
    value = os.urandom(16).hex()  # what secrets.token_hex gives; its import cost ~3 ms a start
    atomic_write(root, VAULT_ID, (value + "\n").encode("ascii"))
    return value, True


def bound_to(root: Path, value: Any) -> bool:
    """The journal's recorded vault id is this vault's."""
    import hmac  # only when a journal is recovered: hmac loads hashlib and OpenSSL

    found = read_vault_id(root)
    return found is not None and isinstance(value, str) and hmac.compare_digest(found, value)


def summary(problems: list[str]) -> str:
    """The first few problems of a refused journal, for one error line (all are in its details)."""
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    return "; ".join(problems[:3]) + more
