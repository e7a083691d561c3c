"""Start-up costs, probe by probe: CPU time of small child processes (min and
median of --runs), this checkout beside another one (--compare DIR) and
beside a bare interpreter, interleaved run by run so both see the same load.

    python bench/startup_probe.py [--runs 9] [--compare DIR]

Probes: `shardpy --version`; `shardpy status` and `shardpy update --yes` in
a folder that is no vault (start-up and argument parsing, then a typed
error); opening the two HTTP clients an install or update of a GitHub
source opens (resolve, download); importing copier the way shardpy does.
CPU time (user + system) is steadier than wall time on a shared machine.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from childenv import checkout_env, child_env

HTTP = (
    "from shardpy.sources.http import http_client\n"
    "with http_client():\n    pass\n"
    "with http_client():\n    pass\n"
)
COPIER = (
    "import importlib\n"
    "for name in ('shardpy.sources.copier.internals', 'shardpy.sources.copierfast'):\n"
    "    try:\n"  # sources/copier/internals.py since issue 27; sources/copierfast.py before
    "        importlib.import_module(name).import_copier()\n"
    "        break\n"
    "    except ImportError:\n"
    "        continue\n"
    "else:\n"  # a checkout without the speed-ups imports copier plainly
    "    import copier._main, copier._user_data\n"
)
PROBES: dict[str, list[str]] = {
    "python -c pass (floor)": ["-c", "pass"],
    "shardpy --version": ["-m", "shardpy", "--version"],
    "shardpy status (no vault)": ["-m", "shardpy", "status"],
    "shardpy update --yes (no vault)": ["-m", "shardpy", "update", "--yes"],
    "two HTTP clients": ["-c", HTTP],
    "import copier": ["-c", COPIER],
}


def cpu_ms(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--compare", type=Path, help="another checkout (PYTHONPATH=DIR)")
    args = parser.parse_args()
    env = child_env()
    codes = {"this checkout": env}
    if args.compare is not None:
        codes["compare"] = checkout_env(env, args.compare)
    samples: dict[tuple[str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="startup-probe-") as tmp:
        for _ in range(args.runs):
            for probe, argv in PROBES.items():
                for label, code_env in codes.items():
                    ms = cpu_ms([sys.executable, *argv], code_env, Path(tmp))
                    samples.setdefault((probe, label), []).append(ms)
    print(f"CPU ms of each child, min / median of {args.runs}; compare = {args.compare}")
    width = max(len(p) for p in PROBES)
    print(f"  {'':<{width}}" + "".join(f" | {label:>17}" for label in codes))
    for probe in PROBES:
        cells = "".join(
            f" | {min(samples[probe, label]):7.0f} / {statistics.median(samples[probe, label]):7.0f}"
            for label in codes
        )
        print(f"  {probe:<{width}}{cells}")


if __name__ == "__main__":
    main()
