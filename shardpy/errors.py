"""One exception type for every failure a user can act on.

Each error carries a stable ``code`` (listed with cause and remedy in
docs/ERRORS.md), a one-line ``message`` and a ``hint`` saying what to do.
The CLI prints these and exits 1; anything else escaping is a bug.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any

# Public (docs/ARCHITECTURE.md, "The public surface"; pinned by tests/test_public_surface.py).
__all__ = ["Cancelled", "ShardpyError", "UsageError"]


class ShardpyError(Exception):
    """A typed, user-facing failure."""

    exit_code = 1

    def __init__(
        self,
        code: str,
        message: str,
        hint: str = "",
        *,
        path: str | None = None,
        line: int | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint
        self.path = path
        self.line = line
        self.details = details or {}

    def location(self) -> str:
        """``file:line`` (or just ``file``) when the error points at one."""
        if self.path is None:
            return ""
        return f"{self.path}:{self.line}" if self.line is not None else self.path

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"code": self.code, "message": self.message, "hint": self.hint}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        if self.details:
            out["details"] = self.details
        return out

    def __str__(self) -> str:
        loc = self.location()
        return f"[{self.code}] {loc + ': ' if loc else ''}{self.message}"


class UsageError(ShardpyError):
    """Bad command-line usage (exit 2), e.g. conflicting flags."""

    exit_code = 2

    def __init__(self, message: str, hint: str = "", *, code: str = "USAGE") -> None:
        # Never an empty hint (issue 26 item 21, tests/hardening/test_cli_words.py).
        super().__init__(code, message, hint or "Read `shardpy COMMAND --help`.")


class Cancelled(Exception):
    """The user chose to stop at a prompt: exit 0, nothing written."""
