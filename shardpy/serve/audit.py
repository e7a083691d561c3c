"""The audit log: one JSON line per call, with the caller, under ``.shardmind/``.

Size-rotated (one old generation kept) and every field length-bounded: the
log rotates by size, so an unbounded field (a hostile note's title, a huge
query) could otherwise push the very history it exists to keep out of it.
The log is the server's own bookkeeping, not a vault note: it is appended
directly, never through a transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from shardpy.vault.layout import SERVE_AUDIT, SERVE_AUDIT_OLD

ROTATE_BYTES = 5 * 1024 * 1024
FIELD_CHARS = 200
LIST_ITEMS = 20


def bounded(value: Any, depth: int = 0) -> Any:
    """``value`` with strings cut to FIELD_CHARS, lists to LIST_ITEMS, nesting to three levels."""
    if isinstance(value, str):
        return value if len(value) <= FIELD_CHARS else value[: FIELD_CHARS - 1] + "…"
    if isinstance(value, bool | int | float) or value is None:
        return value
    if depth >= 3:
        return "…"
    if isinstance(value, dict):
        return {bounded(str(k)): bounded(v, depth + 1) for k, v in list(value.items())[:LIST_ITEMS]}
    if isinstance(value, list | tuple):
        items = [bounded(v, depth + 1) for v in list(value)[:LIST_ITEMS]]
        if len(value) > LIST_ITEMS:
            items.append(f"… {len(value) - LIST_ITEMS} more")
        return items
    return bounded(str(value))


@dataclass
class AuditLog:
    vault: Path
    rotate_bytes: int = ROTATE_BYTES

    @property
    def path(self) -> Path:
        return self.vault / SERVE_AUDIT

    def record(self, event: str, caller: dict[str, Any], **fields: Any) -> None:
        """Append one line; a failure to log never fails the call it describes."""
        line = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "event": event, "caller": caller}
        line.update(fields)
        data = (json.dumps(bounded(line), ensure_ascii=False) + "\n").encode("utf-8")
        with contextlib.suppress(OSError):
            self._rotate_if_full()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, data)  # one write of one line: O_APPEND keeps concurrent servers' lines whole
            finally:
                os.close(fd)

    def _rotate_if_full(self) -> None:
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        if size >= self.rotate_bytes:
            os.replace(self.path, self.vault / SERVE_AUDIT_OLD)
