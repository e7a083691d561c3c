"""The Typer application: one function per command, each only parsing
options, calling a flow and printing its result."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from shardpy import __version__
from shardpy.cli import git_cmd, import_options, install_update, memory_cmd, sync_cmd
from shardpy.cli.output import guarded, print_json

HELP_NAMES = ["-h", "--help"]
app = typer.Typer(
    no_args_is_help=False,
    add_completion=True,
    help="Package manager for Obsidian vault templates (shards): install, update, adopt, import.",
    context_settings={"help_option_names": HELP_NAMES},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"shardpy {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version."
    ),
) -> None:
    """shardpy: install, update and adopt vault templates; import agent memory."""
    if ctx.invoked_subcommand is None:
        status(verbose=False, as_json=False)


# Shared with adopt; install's and update's bodies live in install_update (no Typer there).
_ui = install_update.ui
_download_progress = install_update.download_progress
_split_positionals = install_update.split_positionals
CONFLICTS_LEFT = install_update.CONFLICTS_LEFT


# Flags several commands share, declared once so their spelling and help stay the same.
DryRunFlag = Annotated[bool, typer.Option("--dry-run", help="Show the plan; write nothing.")]
JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
NoHooksFlag = Annotated[bool, typer.Option("--no-hooks", help="Run no lifecycle hooks.")]
TrustFlag = Annotated[
    bool,
    typer.Option("--trust", help="Run a remote shard's hooks without asking; allow copier tasks."),
]
DefaultsFlag = Annotated[bool, typer.Option("--defaults", help="Every default value and module; no prompts.")]
ValuesOpt = Annotated[Path | None, typer.Option("--values", help="YAML file pre-filling values.")]
DataOpt = Annotated[
    list[str] | None,
    typer.Option("--data", "-d", help="An answer as KEY=VALUE (repeatable; wins over --values)."),
]
# update has no --values: its answers live in shard-values.yaml, where --data is recorded.
UpdateDataOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--data", "-d", help="A changed answer, KEY=VALUE (repeatable; saved to shard-values.yaml)."
    ),
]
PrereleaseFlag = Annotated[bool, typer.Option("--include-prerelease", help="Consider prerelease versions.")]
# Choices are types, so help and shell completion list them (issue 26 item 21).
OnConflictChoice = Literal["keep", "theirs", "markers"]
OnConflictOpt = typer.Option("--on-conflict", help="Resolve every conflict: keep (yours), theirs, markers.")


@app.command()
def install(
    source: Annotated[
        str | None,
        typer.Argument(help="Shard source: dir, git, .tar.gz, github:o/r, ns/name (default: bundled)."),
    ] = None,
    dest: Annotated[
        str | None, typer.Argument(help="Vault folder to create or fill (default: here).")
    ] = None,
    defaults: DefaultsFlag = False,
    values: ValuesOpt = None,
    data: DataOpt = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Answer every question with its default.")] = False,
    exclude_module: Annotated[
        list[str] | None, typer.Option("--exclude-module", help="Deselect a removable module (repeatable).")
    ] = None,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
    trust: TrustFlag = False,
    no_hooks: NoHooksFlag = False,
    backup: Annotated[
        bool, typer.Option("--backup", help="Back up existing files the install replaces.")
    ] = False,
    include_prerelease: PrereleaseFlag = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List every file and hook output.")
    ] = False,
) -> None:
    """Install a shard into a vault folder."""
    args = install_update.InstallArgs(
        source=source,
        dest=dest,
        defaults=defaults,
        values=values,
        data=list(data or []),
        yes=yes,
        exclude_module=list(exclude_module or []),
        dry_run=dry_run,
        as_json=as_json,
        trust=trust,
        no_hooks=no_hooks,
        backup=backup,
        include_prerelease=include_prerelease,
        verbose=verbose,
    )
    guarded(lambda: install_update.run_install(args), as_json=as_json)


@app.command()
def status(
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Modified files, user files, frontmatter.")
    ] = False,
    as_json: JsonFlag = False,
) -> None:
    """Show the vault's health (read-only; exit 0)."""
    from shardpy.cli.status import show_status

    code = show_status(verbose=verbose, as_json=as_json)
    if code:
        raise typer.Exit(code)


@app.command()
def update(
    release: Annotated[
        str | None, typer.Option("--release", help="Update to this release (tag or version).")
    ] = None,
    include_prerelease: PrereleaseFlag = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="No questions: take every default answer.")
    ] = False,
    on_conflict: Annotated[OnConflictChoice | None, OnConflictOpt] = None,
    conflict_style: Annotated[
        Literal["merge", "diff3"],
        typer.Option("--conflict-style", help="Conflict markers: merge, or diff3 (adds the base)."),
    ] = "merge",
    add_module: Annotated[
        list[str] | None, typer.Option("--add-module", help="Include a module (repeatable).")
    ] = None,
    remove_module: Annotated[
        list[str] | None, typer.Option("--remove-module", help="Deselect a removable module (repeatable).")
    ] = None,
    restore_missing: Annotated[
        bool, typer.Option("--restore-missing", help="Reinstall managed files you deleted.")
    ] = False,
    data: UpdateDataOpt = None,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List unchanged files and hook output.")
    ] = False,
    no_hooks: NoHooksFlag = False,
    trust: TrustFlag = False,
) -> None:
    """Upgrade the vault to a newer shard release with a three-way merge."""
    args = install_update.UpdateArgs(
        release=release,
        include_prerelease=include_prerelease,
        yes=yes,
        on_conflict=on_conflict,
        conflict_style=conflict_style,
        add_module=list(add_module or []),
        remove_module=list(remove_module or []),
        restore_missing=restore_missing,
        data=list(data or []),
        dry_run=dry_run,
        as_json=as_json,
        verbose=verbose,
        no_hooks=no_hooks,
        trust=trust,
    )
    guarded(lambda: install_update.run_update(args), as_json=as_json)


@app.command()
def adopt(
    source: Annotated[str, typer.Argument(help="The shard this vault was cloned from (any source form).")],
    dest: Annotated[str | None, typer.Argument(help="The vault folder (default: here).")] = None,
    values: ValuesOpt = None,
    data: DataOpt = None,
    defaults: DefaultsFlag = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="No questions; differing files: keep mine.")
    ] = False,
    mode: Annotated[
        Literal["keep-mine", "use-shard", "merge", "ask"] | None,
        typer.Option("--mode", help="Differing files: keep-mine, use-shard, merge or ask."),
    ] = None,
    from_version: Annotated[
        str | None, typer.Option("--from-version", help="The release the vault was cloned from.")
    ] = None,
    include_prerelease: PrereleaseFlag = False,
    on_conflict: Annotated[OnConflictChoice | None, OnConflictOpt] = None,
    dry_run: DryRunFlag = False,
    as_json: JsonFlag = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every file.")] = False,
    no_hooks: NoHooksFlag = False,
    trust: TrustFlag = False,
) -> None:
    """Bring an existing clone of a shard under management."""

    def run() -> int:
        from shardpy.cli import render
        from shardpy.errors import UsageError
        from shardpy.flows.adopt import AdoptOptions
        from shardpy.flows.adopt import adopt as do_adopt

        install_update.check_hook_flags(trust=trust, no_hooks=no_hooks)
        if mode not in (None, "keep-mine", "use-shard", "merge", "ask"):
            raise UsageError(f"--mode must be keep-mine, use-shard, merge or ask (got {mode})")
        if on_conflict not in (None, "keep", "theirs", "markers"):
            raise UsageError(f"--on-conflict must be keep, theirs or markers (got {on_conflict})")
        opts = AdoptOptions(
            source=source,
            dest=Path(dest) if dest else None,
            values_file=values,
            data=list(data or []),
            defaults=defaults,
            yes=yes,
            mode=mode,
            from_version=from_version,
            include_prerelease=include_prerelease,
            on_conflict=on_conflict,
            dry_run=dry_run,
            no_hooks=no_hooks,
            trust=trust,
        )
        result = do_adopt(
            opts, _ui(non_interactive=as_json or yes or defaults), progress=_download_progress()
        )
        if as_json:
            print_json(result.to_json())
        else:
            render.adopt_result(result, verbose=verbose)
        # One rule with update: a conflict left for the user is exit 3 (tests/hardening/test_adopt_exit.py).
        return CONFLICTS_LEFT if result.conflicts_left() else 0

    guarded(run, as_json=as_json)


@app.command()
def serve(
    vault: Annotated[Path | None, typer.Argument(help="The vault (default: the current folder).")] = None,
    project: Annotated[
        str | None, typer.Option("--project", help="The caller's project, for clients that send no roots.")
    ] = None,
    print_config: Annotated[
        bool, typer.Option("--print-config", help="Print the snippet that registers this vault in a repo.")
    ] = False,
    client: Annotated[
        str, typer.Option("--for", help="Config format for --print-config: claude, codex or gemini.")
    ] = "claude",
    qmd: Annotated[
        str | None, typer.Option("--qmd", help="The QMD launcher to search with (a command line).")
    ] = None,
    trust_qmd: Annotated[
        bool, typer.Option("--trust-qmd", help="Approve the vault's .mcp.json QMD launcher on this machine.")
    ] = False,
) -> None:
    """Serve the vault over MCP (stdio): search, expand, recall, remember, record_work, health."""
    from shardpy.flows.serve import run_serve

    guarded(
        lambda: run_serve(
            vault, project=project, print_config=print_config, client=client, qmd=qmd, trust_qmd=trust_qmd
        )
    )


@app.command("index")
def index_command(
    vault: Annotated[
        str | None, typer.Argument(help="Folder of notes (default: the vault around here, else here).")
    ] = None,
    full: Annotated[bool, typer.Option("--full", help="Re-read and re-chunk every note.")] = False,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Refresh just this note (repeatable; for hooks).")
    ] = None,
    as_json: JsonFlag = False,
) -> None:
    """Build or refresh the vault's search index (incremental; kept in the user cache folder)."""
    from shardpy.cli.search_cmd import IndexArgs, run_index

    guarded(lambda: run_index(IndexArgs(vault, full, list(only or []), as_json)), as_json=as_json)


@app.command("search")
def search_command(
    query: Annotated[str, typer.Argument(help='Words (ANDed), "a phrase", prefix*, AND/OR/NOT.')],
    vault: Annotated[
        str | None,
        typer.Option("--vault", help="Folder of notes (default: the vault around here, else here)."),
    ] = None,
    top: Annotated[int, typer.Option("--top", help="How many notes to show.")] = 10,
    note_type: Annotated[str | None, typer.Option("--type", help="Only notes of this type.")] = None,
    path: Annotated[str | None, typer.Option("--path", help="Only notes under this folder.")] = None,
    as_json: JsonFlag = False,
    mode: Annotated[
        str,
        typer.Option("--mode", help="hybrid (meaning + words, default with vectors), lexical, semantic."),
    ] = "auto",
) -> None:
    """Search the vault's notes by meaning and words; best sections first (refreshes a stale index first)."""
    from shardpy.cli.search_cmd import SearchArgs, run_search

    args = SearchArgs(query, vault, top, note_type, path, as_json, mode)
    guarded(lambda: run_search(args), as_json=as_json)


def readable_help(command: Any) -> Any:
    """Help without Python type names: a flag shows no ``<bool>``, a
    repeatable option names what it takes (``MODULE``, not ``<list[str]>``)."""
    for sub in getattr(command, "commands", {}).values():
        readable_help(sub)
    # The help option is made (and kept) on first use: made here, so it gets the same treatment.
    help_option = command.get_help_option(command.context_class(command, help_option_names=HELP_NAMES))
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if getattr(param, "is_flag", False):
            param.metavar = ""
        elif getattr(param, "multiple", False) and param.metavar is None:
            param.metavar = (param.name or "value").rsplit("_", 1)[-1].upper()
    return command


def run() -> None:
    import sys

    import typer.main

    cli = readable_help(typer.main.get_command(app))
    as_json = "--json" in sys.argv[1:]
    if not as_json and sys.stderr.isatty():
        cli()
        return
    # With --json even a usage error is the JSON error object on stdout; off a
    # terminal it is click's plain text, never rich's panel wrapped at 80
    # columns (tests/hardening/test_output_streams.py).
    from shardpy.cli.output import usage_error_json

    try:
        code = cli(standalone_mode=False)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:
        # click's UsageError (Typer vendors its own click, so matched by shape).
        if getattr(exc, "exit_code", None) != 2 or not hasattr(exc, "format_message"):
            raise
        if as_json:
            usage_error_json(exc.format_message())
        else:
            exc.show()  # type: ignore[attr-defined]  # click's UsageError, matched by shape above
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


import_options.register(app)
git_cmd.register(app)
sync_cmd.register(app)
memory_cmd.register(app)
