"""The environment benchmarked commands run in: as on a user's machine.

pip byte-compiles a package when it installs it, so a user's shardpy starts
from `.pyc` files. A checkout (or an environment with PYTHONDONTWRITEBYTECODE
set, as some sandboxes and CI images do) would compile every module on every
run instead, ~60-80 ms that no user pays. So the package is compiled once
here and the children may use (and write) bytecode.
"""

from __future__ import annotations

import compileall
import os
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def child_env(**extra: str) -> dict[str, str]:
    """os.environ without SHARDPY_* settings and without PYTHONDONTWRITEBYTECODE, plus ``extra``."""
    compileall.compile_dir(ROOT / "shardpy", quiet=1)
    out = {
        k: v for k, v in os.environ.items() if not k.startswith("SHARDPY_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    out.update(extra)
    return out


def checkout_env(base: dict[str, str], checkout: Path) -> dict[str, str]:
    """``base`` running the shardpy of another checkout (``--compare DIR``: e.g. the code
    before a change, ``git archive REV | tar -x -C DIR``), byte-compiled like this one."""
    compileall.compile_dir(checkout / "shardpy", quiet=1)
    return {**base, "PYTHONPATH": str(checkout.resolve())}


def reference_loop_ms() -> float:
    """CPU speed right now: ms for a 10-million-step Python loop (~450 ms on a
    quiet modern core). Shared machines vary by 2x over a day; printing this
    beside the figures makes runs at different times comparable."""
    start = time.process_time()
    total = 0
    for i in range(10_000_000):
        total += i
    return (time.process_time() - start) * 1000
