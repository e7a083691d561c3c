"""Walking a source folder: every file either read or skipped with a reason."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardpy.fsutil import open_regular, printable, utf8_name
from shardpy.plan.importplan import Skipped


@dataclass(frozen=True, slots=True)
class Found:
    rel: str  # POSIX path relative to the walked root
    path: str  # the file's path (a str: 100,000 Path objects cost 20 MB)
    size: int

    def __reduce__(self) -> tuple[type[Found], tuple[Any, ...]]:
        # Found files travel to the reading workers one by one: a plain tuple pickles and
        # unpickles ~4x faster than a frozen dataclass's default (Python-level state methods).
        return (Found, (self.rel, self.path, self.size))


def walk_source(
    root: Path, *, ignore: Callable[[str, bool], bool] | None = None, prefix: str = ""
) -> Iterator[Found | Skipped]:
    """Regular files under ``root`` in sorted order; everything else is a ``Skipped``.

    Symbolic links (files or folders), hard links, dot files and folders, and
    anything ``ignore(rel, is_dir)`` rejects are reported, never followed. A
    path that resolves outside ``root`` is refused even if reached another way.
    """
    real_root = os.path.realpath(root)
    inside = real_root.rstrip(os.sep) + os.sep
    stack: list[str] = [""]
    while stack:
        rel_dir = stack.pop()
        here = root / rel_dir if rel_dir else root
        if rel_dir:
            # Folders are entered only when lstat says they are real folders, so every file
            # below resolves inside the root; checked once per folder, not per file.
            real = os.path.realpath(here)
            if not real.startswith(inside):
                yield Skipped(prefix + rel_dir + "/", "refused: path escapes the source folder")
                continue
        try:
            with os.scandir(here) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield Skipped(prefix + (rel_dir or "."), f"unreadable folder: {exc.strerror or exc}")
            continue
        subdirs: list[str] = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            verdict = _classify(entry, rel, prefix + rel, ignore)
            if verdict is None:
                subdirs.append(rel)
            else:
                yield verdict
        # Reverse so that popping visits folders in sorted order.
        stack.extend(reversed(subdirs))


def _classify(
    entry: os.DirEntry[str], rel: str, shown: str, ignore: Callable[[str, bool], bool] | None
) -> Found | Skipped | None:
    """One folder entry: a file to read, a skipped path, or None for a folder to enter."""
    if not utf8_name(entry.name):  # no note, ledger or plan can hold such a name
        return Skipped(printable(shown), "refused: the name is not UTF-8 (rename it)")
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError as exc:
        return Skipped(shown, f"unreadable: {exc.strerror or exc}")
    if stat.S_ISLNK(st.st_mode):
        return Skipped(shown, "refused: symbolic link")
    is_dir = stat.S_ISDIR(st.st_mode)
    if entry.name.startswith("."):
        return Skipped(shown + ("/" if is_dir else ""), "dot folder" if is_dir else "dot file")
    if ignore is not None and ignore(rel, is_dir):
        return Skipped(shown + ("/" if is_dir else ""), "ignored (basic-memory ignore rules)")
    if is_dir:
        return None
    if not stat.S_ISREG(st.st_mode):
        return Skipped(shown, "not a regular file")
    if st.st_nlink > 1:
        return Skipped(shown, "refused: hard link")
    return Found(rel, entry.path, st.st_size)


def read_text(path: str | Path) -> tuple[bytes, str | None, str | None]:
    """(raw bytes, text without BOM or None, skip reason or None)."""
    try:
        fd = open_regular(path)
    except OSError as exc:
        return b"", None, f"unreadable: {exc.strerror or exc}"
    try:
        chunks: list[bytes] = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    except OSError as exc:
        return b"", None, f"unreadable: {exc.strerror or exc}"
    finally:
        os.close(fd)
    raw = b"".join(chunks)
    if not raw.strip():
        return raw, None, "empty file"
    if b"\x00" in raw:
        return raw, None, "not text: contains NUL bytes"
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return raw, None, f"not UTF-8 (byte {exc.start})"
    if text.startswith("\ufeff"):
        text = text[1:]
        if not text.strip():
            return raw, None, "empty file"
    return raw, text, None
