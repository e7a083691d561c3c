"""Figures for the flagship's session briefing on large vaults.

Lays out agent-vault in a temporary directory, fills it with N generated
notes (many small project folders, a few large ones, open tasks), runs
session_start.py as an agent would and prints wall time, briefing size and
what the meter says it dropped. Not a test: it asserts nothing.

    python bench/flagship_briefing.py 1000 5000 20000
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.flagship.shardtools import lay_out_vault, populate_heavy_vault  # noqa: E402


def measure(count: int, runs: int = 3) -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory() as tmp:
        vault = lay_out_vault(Path(tmp) / "vault").root
        populate_heavy_vault(vault, count)
        script = vault / ".claude" / "scripts" / "session_start.py"
        payload = json.dumps({"hook_event_name": "SessionStart", "source": "startup"})
        best = float("inf")
        text = ""
        for _ in range(runs):
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, str(script)], input=payload, capture_output=True, text=True
            )
            best = min(best, time.perf_counter() - start)
            text = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
        return best, len(text.encode("utf-8")), text.rstrip().splitlines()[-1]


def main(argv: list[str]) -> int:
    counts = [int(a) for a in argv] or [1000, 5000, 20000]
    print(f"{'notes':>7}  {'best of 3':>9}  {'bytes':>7}  meter")
    for n in counts:
        seconds, size, meter = measure(n)
        print(f"{n:>7}  {seconds:>8.3f}s  {size:>7,}  {meter}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
