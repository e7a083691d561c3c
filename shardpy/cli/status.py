"""The status command's body, shared by the Typer command and the fast path
in :mod:`shardpy.cli.app` (status must answer quickly, CONTRACT §7)."""

from __future__ import annotations

from pathlib import Path

from shardpy.cli import options as o
from shardpy.cli.output import exit_code_of, print_json


class StatusArgs(o.Args):
    """Show the vault's health (read-only; exit 0)."""

    verbose: bool = o.flag("--verbose", "-v", help="Modified files, user files, frontmatter.")
    as_json: bool = o.as_json()


def show_status(*, verbose: bool, as_json: bool) -> int:
    """Report on the vault around the current directory; the exit code."""

    def run() -> None:
        from shardpy.cli import render
        from shardpy.cli.progress import delayed_progress
        from shardpy.flows.status import status

        progress = delayed_progress("checking notes' frontmatter") if verbose else None
        report = status(Path.cwd(), verbose=verbose, progress=progress)
        if as_json:
            print_json(report.to_json())
        else:
            render.status_report(report)

    return exit_code_of(run, as_json=as_json)
