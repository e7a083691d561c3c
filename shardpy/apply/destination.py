"""The folder an install writes into: made when missing, and taken away
again when the install fails before it committed anything there."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator
from pathlib import Path

from shardpy.vault.layout import SIDECAR, STATE


@contextlib.contextmanager
def install_folder(dest: Path) -> Iterator[bool]:
    """Make ``dest`` (and its parents) if missing; yield whether its
    ``.shardmind/`` already existed. When the block raises, what this install
    began is removed: ``.shardmind/`` if it is new and no state was committed,
    then ``dest`` itself if this made it and it is empty now."""
    created = not dest.exists()
    dest.mkdir(parents=True, exist_ok=True)
    sidecar_existed = (dest / SIDECAR).exists()
    try:
        yield sidecar_existed
    except BaseException:
        if not (dest / STATE).exists() and not sidecar_existed:
            shutil.rmtree(dest / SIDECAR, ignore_errors=True)
        if created:
            with contextlib.suppress(OSError):
                dest.rmdir()
        raise
