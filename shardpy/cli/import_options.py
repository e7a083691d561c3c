"""`shardpy import` declared for Typer: its options, help and usage errors.

The body is ``shardpy.cli.import_cmd.run_command``, which plain invocations
reach without Typer (see ``shardpy.cli.app``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import typer

from shardpy.cli.import_cmd import FORMATS, ON_CONFLICT, ImportArgs, run_command


def import_command(
    # Choices as types, so help and completion list them (issue 26 item 21); FORMATS and
    # ON_CONFLICT (import_cmd) stay the lists the plain parser checks, and a test keeps them equal.
    fmt: Literal["basic-memory", "claude-code-memory", "mcp-memory"] | None = typer.Option(
        None, "--from", help="Source format: basic-memory, claude-code-memory or mcp-memory."
    ),
    source: Path | None = typer.Argument(  # noqa: B008
        None, help="The memory to import (a folder, or a .jsonl/.json file)."
    ),
    vault: Path | None = typer.Argument(  # noqa: B008
        None, help="The vault (default: the vault around the current folder, else the current folder)."
    ),
    into: str | None = typer.Option(
        None, "--into", help="Vault folder to import into (default <memory_root>/<format>)."
    ),
    apply: bool = typer.Option(False, "--apply", help="Write the notes (without it nothing is written)."),
    resume: bool = typer.Option(False, "--resume", help="Finish an interrupted --apply run."),
    abandon_: bool = typer.Option(False, "--abandon", help="Roll back an interrupted --apply run."),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON."),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="List unchanged notes and resolved links too."
    ),
    on_conflict: Literal["keep", "theirs", "markers"] = typer.Option(
        "keep",
        "--on-conflict",
        help="When the source and your note changed the same lines: keep, theirs or markers.",
    ),
    strict: bool = typer.Option(
        False, "--strict", help="Skip files with malformed frontmatter instead of importing them."
    ),
    vault_opt: Path | None = typer.Option(  # noqa: B008
        None, "--vault", help="The vault (same as the VAULT argument)."
    ),
) -> None:
    """Import agent memory (basic-memory, Claude Code auto-memory, MCP memory graph) as linked notes.

    Dry run by default: prints the plan and writes nothing. --apply writes it;
    re-runs update what changed without overwriting your edits.
    """
    if on_conflict not in ON_CONFLICT:
        raise typer.BadParameter(f"must be one of {', '.join(ON_CONFLICT)}", param_hint="--on-conflict")
    if fmt is not None and fmt not in FORMATS:
        raise typer.BadParameter(f"must be one of {', '.join(FORMATS)}", param_hint="--from")
    if resume and abandon_:
        raise typer.BadParameter("--resume and --abandon cannot be combined", param_hint="--resume")
    if vault is not None and vault_opt is not None:
        raise typer.BadParameter("give the vault once (VAULT or --vault)", param_hint="--vault")
    if not (resume or abandon_):
        if fmt is None:
            raise typer.BadParameter(
                "is required (basic-memory, claude-code-memory or mcp-memory)", param_hint="--from"
            )
        if source is None:
            raise typer.BadParameter("is required", param_hint="SOURCE")
    args = ImportArgs(
        fmt=fmt,
        source=source,
        vault=vault or vault_opt,
        into=into,
        apply=apply,
        resume=resume,
        abandon=abandon_,
        as_json=as_json,
        verbose=verbose,
        on_conflict=on_conflict,
        strict=strict,
    )
    code = run_command(args)
    if code:
        raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add the ``import`` command to the shardpy app."""
    app.command("import")(import_command)
