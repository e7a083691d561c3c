"""Entry point: a thin Typer app. Commands live one per module in this package."""

from __future__ import annotations

import os
import sys

_STATUS_FLAGS = frozenset({"--verbose", "-v", "--json"})


def _plain_status(argv: list[str]) -> bool:
    """`shardpy` and `shardpy status [-v|--verbose] [--json]`: the commands
    run most often, answered without Typer."""
    if any(k.startswith("_") and k.endswith("_COMPLETE") for k in os.environ):
        return False  # shell completion is Typer's
    return not argv or (argv[0] == "status" and set(argv[1:]) <= _STATUS_FLAGS)


def main() -> None:
    # Typer costs ~130 ms before a command runs (its import, then a pydantic
    # adapter per parameter), so `--version` and plain status bypass it.
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from shardpy import __version__

        print(f"shardpy {__version__}")
        return
    if _plain_status(argv):
        from shardpy.cli.status import show_status

        sys.exit(show_status(verbose=bool({"-v", "--verbose"} & set(argv)), as_json="--json" in argv))
    from shardpy.cli.commands import run

    run()
