"""The audit log: one JSON line per call, with the caller, under ``.shardmind/``.

Size-rotated (one old generation kept) and every field length-bounded: the
log rotates by size, so an unbounded field (a hostile note's title, a huge
query) could otherwise push the very history it exists to keep out of it. A
whole line is bounded too (LINE_BYTES): twenty keys of twenty 200-character
items would still be a 300 KB line.
The log is the server's own bookkeeping, not a vault note: it is appended
directly, never through a transaction.

It is never written through a link (issue 24, items 4 and 5): a cloned vault
can carry ``.shardmind/`` as a link to a folder outside the vault, or
``serve-audit.jsonl`` as a link to an outside file. The folder is opened with
``O_DIRECTORY | O_NOFOLLOW`` relative to the vault, the file with
``O_NOFOLLOW`` relative to that folder, and anything but a regular file with
one name is refused: nothing is written, and ``health`` reports why
(tests/security/test_serve_writes.py).

A folder that is not a vault (no ``.shardmind/state.json``, no
``vault-manifest.json``) gets no ``.shardmind/``: a served plain folder would
otherwise be taken for a vault by ``import`` afterwards. Its log lives in the
user state folder (``platformdirs.user_state_dir("shardpy")/serve-audit/``,
one folder per served folder, keyed by its real path), under the same rules:
each folder opened with ``O_NOFOLLOW`` relative to its parent, the file with
``O_NOFOLLOW`` (issue 26 item 15, tests/hardening/test_serve_audit_home.py).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardpy.fsutil import sha256_bytes
from shardpy.vault.layout import SERVE_AUDIT, SERVE_AUDIT_OLD, SIDECAR, STATE

ROTATE_BYTES = 5 * 1024 * 1024
FIELD_CHARS = 200
LIST_ITEMS = 20
LINE_BYTES = 16 * 1024  # one line at most; a larger one keeps its small fields and drops the rest
_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_LOG = SERVE_AUDIT.rsplit("/", 1)[1]
_FILE_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK


def bounded(value: Any, depth: int = 0, chars: int = FIELD_CHARS, items: int = LIST_ITEMS) -> Any:
    """``value`` with strings cut to ``chars``, lists to ``items``, nesting to three levels."""
    if isinstance(value, str):
        return value if len(value) <= chars else value[: chars - 1] + "…"
    if isinstance(value, bool | int | float) or value is None:
        return value
    if depth >= 3:
        return "…"
    if isinstance(value, dict):
        kept = list(value.items())[:items]
        return {bounded(str(k), 0, chars): bounded(v, depth + 1, chars, items) for k, v in kept}
    if isinstance(value, list | tuple):
        out = [bounded(v, depth + 1, chars, items) for v in list(value)[:items]]
        if len(value) > items:
            out.append(f"… {len(value) - items} more")
        return out
    return bounded(str(value), depth, chars)


def encode_line(line: dict[str, Any]) -> bytes:
    """One JSON line of at most LINE_BYTES: bounded fields, then tighter bounds, then only the scalars."""
    for chars, items in ((FIELD_CHARS, LIST_ITEMS), (40, 5)):
        data = (json.dumps(bounded(line, 0, chars, items), ensure_ascii=False) + "\n").encode("utf-8")
        if len(data) <= LINE_BYTES:
            return data
    small = {k: bounded(v, 0, 40) for k, v in line.items() if not isinstance(v, dict | list | tuple)}
    small["truncated"] = True
    return (json.dumps(small, ensure_ascii=False) + "\n").encode("utf-8")


class AuditRefused(OSError):
    """The audit log's folder or file is not what the server would have created (a link, a pipe...)."""


def is_vault(folder: Path) -> bool:
    """The served folder is a vault: its own state file, or a manifest (never through a link)."""
    return _regular(folder / "vault-manifest.json") or (
        not os.path.islink(folder / SIDECAR) and _regular(folder / STATE)
    )


def _regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def state_home() -> Path:
    """Where the logs of served folders that are not vaults live (this machine's, never a vault's)."""
    import platformdirs

    return Path(platformdirs.user_state_dir("shardpy")) / "serve-audit"


def home_key(folder: Path) -> str:
    """One folder name per served folder: its last segment (to be recognisable) and a digest of its
    real path (to be unique)."""
    real = os.path.realpath(folder)
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in os.path.basename(real))[:40]
    return f"{name.lstrip('.') or 'root'}-{sha256_bytes(real.encode())[:16]}"


@dataclass
class AuditLog:
    """``vault``: the log's base folder; ``sidecar``: the folder under it holding the log (``.shardmind``
    in a vault, the served folder's key under :func:`state_home` otherwise); ``shown``: how an answer
    names the log (never an absolute path)."""

    vault: Path
    rotate_bytes: int = ROTATE_BYTES
    refused: str = ""  # why the last line was not written ("" when it was)
    sidecar: str = SIDECAR
    shown: str = SERVE_AUDIT

    @staticmethod
    def of(folder: Path) -> AuditLog:
        """The log of the served ``folder``: in the vault, or in the user state folder when it is none."""
        if is_vault(folder):
            return AuditLog(folder)
        home = state_home()
        with contextlib.suppress(OSError):  # cannot be made: each line's refusal says so, in health
            home.mkdir(parents=True, exist_ok=True, mode=0o700)
        return AuditLog(home, sidecar=home_key(folder), shown="the audit log (user state folder)")

    @property
    def path(self) -> Path:
        return self.vault / self.sidecar / _LOG

    def record(self, event: str, caller: dict[str, Any], **fields: Any) -> None:
        """Append one line; a failure to log never fails the call it describes."""
        line = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": event, "caller": caller}
        line.update(fields)
        data = encode_line(line)
        try:
            with self._folder(create=True) as folder:
                assert folder is not None  # created when absent
                self._rotate_if_full(folder)
                fd = _open_log(folder, self.shown)
                try:
                    os.write(fd, data)  # one write of one line: O_APPEND keeps servers' lines whole
                finally:
                    os.close(fd)
            self.refused = ""
        except AuditRefused as exc:
            self.refused = str(exc)
        except OSError as exc:
            self.refused = f"{self.shown} cannot be written ({exc.strerror or type(exc).__name__})"

    def problem(self) -> str:
        """Why lines are not being logged, for ``health`` ("" when the log is writable as far as can be
        told without writing: a link or a non-file where the folder or the log should be)."""
        try:
            with self._folder(create=False) as folder:
                if folder is not None:
                    _check_existing(folder, _LOG, self.shown)
        except AuditRefused as exc:
            return str(exc)
        except OSError as exc:
            return f"{self.shown} cannot be checked ({exc.strerror or type(exc).__name__})"
        return self.refused

    @contextlib.contextmanager
    def _folder(self, *, create: bool) -> Iterator[int | None]:
        """``.shardmind/`` opened relative to the vault, never through a link (None: absent, not created)."""
        vault_fd = os.open(self.vault, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fd = _open_folder(vault_fd, self.sidecar, create=create)
        finally:
            os.close(vault_fd)
        try:
            yield fd
        finally:
            if fd is not None:
                os.close(fd)

    def _rotate_if_full(self, folder: int) -> None:
        name, old = _LOG, SERVE_AUDIT_OLD.rsplit("/", 1)[1]
        try:
            st = os.lstat(name, dir_fd=folder)
        except FileNotFoundError:
            return
        if stat.S_ISREG(st.st_mode) and st.st_size >= self.rotate_bytes:
            os.replace(name, old, src_dir_fd=folder, dst_dir_fd=folder)


def _open_folder(vault_fd: int, sidecar: str, *, create: bool) -> int | None:
    try:
        return os.open(sidecar, _FOLDER_FLAGS, dir_fd=vault_fd)
    except FileNotFoundError:
        if not create:
            return None
        os.mkdir(sidecar, 0o755 if sidecar == SIDECAR else 0o700, dir_fd=vault_fd)
        return os.open(sidecar, _FOLDER_FLAGS, dir_fd=vault_fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            shown = f"{SIDECAR}/" if sidecar == SIDECAR else "the audit log's folder (user state folder)"
            raise AuditRefused(f"{shown} is a link or not a folder: nothing is logged") from None
        raise


def _check_existing(folder: int, name: str, shown: str) -> None:
    try:
        st = os.lstat(name, dir_fd=folder)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        raise AuditRefused(f"{shown} is a link or not a plain file: nothing is logged")


def _open_log(folder: int, shown: str) -> int:
    try:
        fd = os.open(_LOG, _FILE_FLAGS, 0o600, dir_fd=folder)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
            raise AuditRefused(f"{shown} is a link or not a plain file: nothing is logged") from None
        raise
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:  # a pipe, a device, or a hard link's second name
        os.close(fd)
        raise AuditRefused(f"{shown} is a link or not a plain file: nothing is logged")
    return fd
