"""The merge driver on files: read git's ``%O %A %B``, merge by ``%P``, write ``%A``.

git runs ``shardpy merge-file --driver %O %A %B %P`` once per file both
sides changed, with ``%A`` a temporary file holding ours: the driver writes
the result there and exits 0 when clean, 1 when git must mark the path
conflicted. ``%A`` is git's own scratch file, not a vault file (git moves the
result into the work tree itself), so it is replaced here directly.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from shardpy.errors import ShardpyError
from shardpy.gitsync.merge import kind_of, merge_bytes
from shardpy.gitsync.result import FileKind, FileMerge

__all__ = ["DriverResult", "merge_files"]


@dataclass(frozen=True)
class DriverResult:
    merge: FileMerge
    # The merged bytes as a file (the ledger is merged into a new SQLite file), or None.
    file: Path | None = None

    def read(self) -> bytes:
        return self.file.read_bytes() if self.file is not None else self.merge.data

    def install(self, dest: Path) -> None:
        """Put the result at ``dest`` (git's ``%A``): a rename of the merged file, or a rewrite."""
        if self.file is not None:
            os.replace(self.file, dest)
            return
        with open(dest, "wb") as fh:
            fh.write(self.merge.data)

    def discard(self) -> None:
        if self.file is not None:
            self.file.unlink(missing_ok=True)


def _read(path: Path, role: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ShardpyError(
            "GIT_MERGE_INPUT",
            f"Cannot read the {role} version {path}: {exc.strerror or exc}",
            "git passes three readable files: %O %A %B. By hand: shardpy merge-file BASE OURS THEIRS [PATH].",
            path=str(path),
        ) from None


def merge_files(base: Path, ours: Path, theirs: Path, path: str | None = None) -> DriverResult:
    """Merge the three files (``path``, the name in the repository, picks the rules)."""
    name = path or ours.as_posix()
    if kind_of(name) is FileKind.LEDGER:
        from shardpy.gitsync.ledger import merge_ledger

        for p, role in ((base, "base"), (ours, "ours"), (theirs, "theirs")):
            if not p.is_file():
                _read(p, role)  # raises the typed error
        merged, file = merge_ledger(base, ours, theirs)
        if file is None:
            merged = FileMerge(merged.kind, ours.read_bytes(), False, merged.messages)
        return DriverResult(merged, file)
    return DriverResult(merge_bytes(_read(base, "base"), _read(ours, "ours"), _read(theirs, "theirs"), name))
