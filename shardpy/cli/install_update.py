"""The bodies of `shardpy install`, `update` and `adopt`, and their option tables.

This module never imports Typer. The options are declared once, in the
tables below (``InstallArgs``, ``UpdateArgs``, ``AdoptArgs``; see shardpy.cli.options):
``shardpy.cli.commands`` builds the Typer commands from them and ``shardpy.cli.app`` parses a plain
invocation with the same tables (:func:`plain_install_args`,
:func:`plain_update_args`), so both paths call :func:`run_install` /
:func:`run_update` with the same arguments (tests/update/test_plain_cli.py).
"""

# an option table's cells are calls by design: each returns a shardpy.record.field()

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from shardpy.cli import options as o
from shardpy.cli.choices import AdoptMode, ConflictStyle, OnConflict
from shardpy.cli.options import flow_options, parse_plain

if TYPE_CHECKING:
    from shardpy.sources import SourceSpec

# The option tables (shardpy.cli.options): Typer's commands and the plain parser are built from them.


class InstallArgs(o.Args):
    """Install a shard into a vault folder."""

    source: str | None = o.argument(
        "Shard source: dir, git, .tar.gz, github:o/r, ns/name (default: bundled)."
    )
    dest: str | None = o.argument("Vault folder to create or fill (default: here).")
    defaults: bool = o.defaults()
    values: Path | None = o.values_file()
    data: list[str] = o.data()
    yes: bool = o.yes("Answer every question with its default.")
    exclude_module: list[str] = o.many(
        "--exclude-module", help="Deselect a removable module (repeatable).", flow="exclude"
    )
    dry_run: bool = o.dry_run()
    as_json: bool = o.as_json()
    trust: bool = o.trust()
    no_hooks: bool = o.no_hooks()
    backup: bool = o.flag("--backup", help="Back up existing files the install replaces.")
    include_prerelease: bool = o.include_prerelease()
    verbose: bool = o.verbose("List every file and hook output.")


class UpdateArgs(o.Args):
    """Upgrade the vault to a newer shard release with a three-way merge."""

    release: str | None = o.value("--release", help="Update to this release (tag or version).")
    include_prerelease: bool = o.include_prerelease()
    yes: bool = o.yes("No questions: take every default answer.")
    on_conflict: OnConflict | None = o.on_conflict()
    conflict_style: ConflictStyle = o.value(
        "--conflict-style",
        help="Conflict markers: merge, or diff3 (adds the base).",
        default="merge",
        flow="style",
    )
    add_module: list[str] = o.many("--add-module", help="Include a module (repeatable).", flow="add_modules")
    remove_module: list[str] = o.many(
        "--remove-module", help="Deselect a removable module (repeatable).", flow="remove_modules"
    )
    restore_missing: bool = o.flag("--restore-missing", help="Reinstall managed files you deleted.")
    # update has no --values: its answers live in shard-values.yaml, where --data is recorded.
    data: list[str] = o.data("A changed answer, KEY=VALUE (repeatable; saved to shard-values.yaml).")
    dry_run: bool = o.dry_run()
    as_json: bool = o.as_json()
    verbose: bool = o.verbose("List unchanged files and hook output.")
    no_hooks: bool = o.no_hooks()
    trust: bool = o.trust()


class AdoptArgs(o.Args):
    """Bring an existing clone of a shard under management."""

    source: str = o.argument(
        "The shard this vault was cloned from (any source form).", required=True, flow=""
    )
    dest: str | None = o.argument("The vault folder (default: here).")
    values: Path | None = o.values_file()
    data: list[str] = o.data()
    defaults: bool = o.defaults()
    yes: bool = o.yes("No questions; differing files: keep mine.")
    mode: AdoptMode | None = o.value("--mode", help="Differing files: keep-mine, use-shard, merge or ask.")
    from_version: str | None = o.value("--from-version", help="The release the vault was cloned from.")
    include_prerelease: bool = o.include_prerelease()
    on_conflict: OnConflict | None = o.on_conflict()
    dry_run: bool = o.dry_run()
    as_json: bool = o.as_json()
    verbose: bool = o.verbose("List every file.")
    no_hooks: bool = o.no_hooks()
    trust: bool = o.trust()


CONFLICTS_LEFT = 3  # update finished and left conflicts for the user (README "Exit codes")


def plain_install_args(argv: list[str]) -> InstallArgs | None:
    """The arguments after ``install`` when they are plain (shardpy.cli.options), else None."""
    return parse_plain(InstallArgs, argv)


def plain_update_args(argv: list[str]) -> UpdateArgs | None:
    """The arguments after ``update`` when they are plain (shardpy.cli.options), else None."""
    return parse_plain(UpdateArgs, argv)


def ui(*, non_interactive: bool = False) -> Any:
    import sys

    from shardpy.ui import Headless

    if non_interactive or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return Headless()
    from shardpy.cli.prompts import TerminalUI

    return TerminalUI()


def download_progress() -> Callable[[str, int, int | None], None] | None:
    from shardpy.cli.progress import download_progress as progress

    return progress()


def split_positionals(first: str | None, second: str | None) -> tuple[str | None, Path]:
    """`install [SOURCE] [DEST]`: one argument is a SOURCE when it clearly names
    one, otherwise it is the DEST of the bundled shard."""
    if second is not None:
        return first, Path(second)
    if first is None:
        return None, Path.cwd()
    from shardpy.cli.args import looks_like_source

    return (first, Path.cwd()) if looks_like_source(first, cwd=Path.cwd()) else (None, Path(first))


def _prefetch(spec_of: Callable[[], SourceSpec | None], *, include_prerelease: bool) -> None:
    """Start fetching the source in a child while this process imports the engine
    (sources/prefetch.py). An error here is the command's own to report, with the
    same functions, once it runs: nothing is started then."""
    from shardpy.errors import ShardpyError
    from shardpy.sources import prefetch

    try:
        spec = spec_of()
    except (ShardpyError, OSError, ValueError):
        return
    if spec is not None:
        prefetch.start(spec, include_prerelease=include_prerelease)


def check_hook_flags(*, trust: bool, no_hooks: bool) -> None:
    """``--trust`` and ``--no-hooks`` are alternatives (the synopsis shows them so): never both."""
    if trust and no_hooks:
        from shardpy.errors import UsageError

        raise UsageError(
            "--trust and --no-hooks cannot be combined: --trust runs hooks, --no-hooks runs none"
        )


def run_install(args: InstallArgs) -> None:
    """Install a shard into a vault folder and print the result."""
    check_hook_flags(trust=args.trust, no_hooks=args.no_hooks)
    src, target = split_positionals(args.source, args.dest)
    if src is not None:  # None: the bundled shard, on disk
        from shardpy.sources import parse_source

        _prefetch(lambda: parse_source(src, cwd=Path.cwd()), include_prerelease=args.include_prerelease)

    from shardpy.cli import render
    from shardpy.cli.output import print_json
    from shardpy.flows.install import InstallOptions
    from shardpy.flows.install import install as do_install

    opts = flow_options(args, InstallOptions, dest=target, source=src)
    result = do_install(opts, ui(non_interactive=args.as_json or args.defaults), progress=download_progress())
    if args.as_json:
        print_json(result.to_json())
    else:
        render.install_result(result, verbose=args.verbose)


def _update_spec(args: UpdateArgs) -> SourceSpec:
    """The spec update will fetch, decided by update's own function (flows/updatesource.py)."""
    from shardpy.flows.updatesource import find_vault, source_spec
    from shardpy.vault.state import load_state

    vault = find_vault(Path.cwd())
    state = load_state(vault)
    return source_spec(state, vault, release=args.release, include_prerelease=args.include_prerelease)


def run_update(args: UpdateArgs) -> int:
    """Upgrade the vault and print the result; the exit code (CONFLICTS_LEFT when conflicts remain)."""
    # --on-conflict and --conflict-style are choices: both parsers check them (shardpy.cli.options).
    check_hook_flags(trust=args.trust, no_hooks=args.no_hooks)
    _prefetch(partial(_update_spec, args), include_prerelease=args.include_prerelease)

    from shardpy.cli import render
    from shardpy.cli.output import print_json
    from shardpy.flows.update import UpdateOptions
    from shardpy.flows.update import update as do_update

    opts = flow_options(args, UpdateOptions)
    result = do_update(opts, ui(non_interactive=args.as_json or args.yes), progress=download_progress())
    if args.as_json:
        print_json(result.to_json())
    else:
        render.update_result(result, verbose=args.verbose)
    # Done, but not silently: scripts see the conflicts.
    return CONFLICTS_LEFT if result.conflicts_left() else 0


def run_adopt(args: AdoptArgs) -> int:
    """Bring a clone under management and print the result; the exit code (CONFLICTS_LEFT as update)."""
    from shardpy.cli import render
    from shardpy.cli.output import print_json
    from shardpy.flows.adopt import AdoptOptions
    from shardpy.flows.adopt import adopt as do_adopt

    check_hook_flags(trust=args.trust, no_hooks=args.no_hooks)
    opts = flow_options(args, AdoptOptions, dest=Path(args.dest) if args.dest else None)
    non_interactive = args.as_json or args.yes or args.defaults
    result = do_adopt(opts, ui(non_interactive=non_interactive), progress=download_progress())
    if args.as_json:
        print_json(result.to_json())
    else:
        render.adopt_result(result, verbose=args.verbose)
    # One rule with update: a conflict left for the user is exit 3 (tests/hardening/test_adopt_exit.py).
    return CONFLICTS_LEFT if result.conflicts_left() else 0
