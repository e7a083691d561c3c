"""The bodies of `shardpy install` and `shardpy update`, and their plain argument lists.

This module never imports Typer: ``shardpy.cli.commands`` declares the two
commands for Typer and calls :func:`run_install` / :func:`run_update` with
the arguments it parsed; ``shardpy.cli.app`` parses a plain invocation
itself (:func:`plain_install_args`, :func:`plain_update_args`) and calls the
same functions. Typer costs ~130 ms before a command runs (its import, then
a pydantic adapter per parameter), a fifth of an update here. Anything the
plain parse is not sure of (help, ``--opt=value``, a repeated option, an
unknown word, a value starting with "-") is left to Typer, so both paths run
the same command with the same arguments (tested).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shardpy.sources import SourceSpec

CONFLICTS_LEFT = 3  # update finished and left conflicts for the user (README "Exit codes")


@dataclass(frozen=True)
class InstallArgs:
    source: str | None = None
    dest: str | None = None
    defaults: bool = False
    values: Path | None = None
    data: list[str] = field(default_factory=list)
    yes: bool = False
    exclude_module: list[str] = field(default_factory=list)
    dry_run: bool = False
    as_json: bool = False
    trust: bool = False
    no_hooks: bool = False
    backup: bool = False
    include_prerelease: bool = False
    verbose: bool = False


@dataclass(frozen=True)
class UpdateArgs:
    release: str | None = None
    include_prerelease: bool = False
    yes: bool = False
    on_conflict: str | None = None
    conflict_style: str = "merge"
    add_module: list[str] = field(default_factory=list)
    remove_module: list[str] = field(default_factory=list)
    restore_missing: bool = False
    data: list[str] = field(default_factory=list)
    dry_run: bool = False
    as_json: bool = False
    verbose: bool = False
    no_hooks: bool = False
    trust: bool = False


# The spellings Typer declares in shardpy.cli.commands (a test compares the two).
_COMMON_FLAGS = {
    "--dry-run": "dry_run",
    "--json": "as_json",
    "--trust": "trust",
    "--no-hooks": "no_hooks",
    "--include-prerelease": "include_prerelease",
    "--yes": "yes",
    "-y": "yes",
    "--verbose": "verbose",
    "-v": "verbose",
}
_INSTALL_FLAGS = {**_COMMON_FLAGS, "--defaults": "defaults", "--backup": "backup"}
_INSTALL_VALUED = {"--values": "values"}
_INSTALL_REPEATED = {"--data": "data", "-d": "data", "--exclude-module": "exclude_module"}
_UPDATE_FLAGS = {**_COMMON_FLAGS, "--restore-missing": "restore_missing"}
_UPDATE_VALUED = {
    "--release": "release",
    "--on-conflict": "on_conflict",
    "--conflict-style": "conflict_style",
}
_UPDATE_REPEATED = {
    "--data": "data",
    "-d": "data",
    "--add-module": "add_module",
    "--remove-module": "remove_module",
}


def _plain(
    argv: list[str],
    flags: dict[str, str],
    valued: dict[str, str],
    repeated: dict[str, str],
) -> tuple[dict[str, Any], list[str]] | None:
    """Options (by parameter name) and positionals of a plain argument list, else None."""
    seen: dict[str, Any] = {}
    positionals: list[str] = []
    words = iter(argv)
    for word in words:
        if word in flags:
            if flags[word] in seen:
                return None
            seen[flags[word]] = True
        elif word in valued or word in repeated:
            value = next(words, "")
            if not value or value.startswith("-"):
                return None
            if word in repeated:
                seen.setdefault(repeated[word], []).append(value)
            elif valued[word] in seen:
                return None
            else:
                seen[valued[word]] = value
        elif not word or word.startswith("-"):
            return None
        else:
            positionals.append(word)
    return seen, positionals


def plain_install_args(argv: list[str]) -> InstallArgs | None:
    """The arguments after ``install`` when they are plain (see the module's docstring), else None."""
    parsed = _plain(argv, _INSTALL_FLAGS, _INSTALL_VALUED, _INSTALL_REPEATED)
    if parsed is None or len(parsed[1]) > 2:
        return None
    options, positionals = parsed
    values = options.pop("values", None)
    return InstallArgs(
        source=positionals[0] if positionals else None,
        dest=positionals[1] if len(positionals) == 2 else None,
        values=None if values is None else Path(values),
        **options,
    )


def plain_update_args(argv: list[str]) -> UpdateArgs | None:
    """The arguments after ``update`` when they are plain (see the module's docstring), else None."""
    parsed = _plain(argv, _UPDATE_FLAGS, _UPDATE_VALUED, _UPDATE_REPEATED)
    if parsed is None or parsed[1]:
        return None
    return UpdateArgs(**parsed[0])


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

    opts = InstallOptions(
        dest=target,
        source=src,
        defaults=args.defaults,
        values_file=args.values,
        data=list(args.data),
        yes=args.yes,
        exclude=list(args.exclude_module),
        dry_run=args.dry_run,
        trust=args.trust,
        no_hooks=args.no_hooks,
        backup=args.backup,
        include_prerelease=args.include_prerelease,
    )
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
    from shardpy.errors import UsageError

    check_hook_flags(trust=args.trust, no_hooks=args.no_hooks)

    if args.on_conflict not in (None, "keep", "theirs", "markers"):
        raise UsageError(f"--on-conflict must be keep, theirs or markers (got {args.on_conflict})")
    if args.conflict_style not in ("merge", "diff3"):
        raise UsageError(f"--conflict-style must be merge or diff3 (got {args.conflict_style})")
    _prefetch(partial(_update_spec, args), include_prerelease=args.include_prerelease)

    from shardpy.cli import render
    from shardpy.cli.output import print_json
    from shardpy.flows.update import UpdateOptions
    from shardpy.flows.update import update as do_update

    opts = UpdateOptions(
        release=args.release,
        include_prerelease=args.include_prerelease,
        yes=args.yes,
        on_conflict=args.on_conflict,  # type: ignore[arg-type]
        style=args.conflict_style,  # type: ignore[arg-type]
        add_modules=list(args.add_module),
        remove_modules=list(args.remove_module),
        restore_missing=args.restore_missing,
        data=list(args.data),
        dry_run=args.dry_run,
        no_hooks=args.no_hooks,
        trust=args.trust,
    )
    result = do_update(opts, ui(non_interactive=args.as_json or args.yes), progress=download_progress())
    if args.as_json:
        print_json(result.to_json())
    else:
        render.update_result(result, verbose=args.verbose)
    # Done, but not silently: scripts see the conflicts.
    return CONFLICTS_LEFT if result.conflicts_left() else 0
