"""Forked helper processes (import planning workers, the early fetch): ending with the parent."""

from __future__ import annotations

import contextlib
import os

_PR_SET_PDEATHSIG = 1


def die_with_parent(parent: int, signum: int) -> bool:
    """Have the kernel send ``signum`` to this process when its parent dies, even by a
    signal that skips the parent's exit handlers (prctl PR_SET_PDEATHSIG, Linux; a
    no-op elsewhere). False when ``parent`` (its pid, taken before the fork) is
    already gone: the request came too late, and the caller should end now."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signum), 0, 0, 0)
    return os.getppid() == parent
