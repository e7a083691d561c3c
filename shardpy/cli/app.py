"""Entry point: a thin Typer app. Commands live one per module in this package."""

from __future__ import annotations

import sys


def main() -> None:
    # `--version` is answered before Typer (~60 ms of imports) is loaded.
    if sys.argv[1:] == ["--version"]:
        from shardpy import __version__

        print(f"shardpy {__version__}")
        return
    from shardpy.cli.commands import run

    run()
