"""`shardpy index` and `shardpy search`: bodies and output (the logic is in shardpy.index).

Both also run without Typer (``plain_args``), like plain status and import:
the flagship's PostToolUse hook runs ``shardpy index --only PATH`` after every
write, and Typer's start-up alone would cost more than the refresh.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from shardpy.index.model import RefreshReport, SearchResult

PROGRESS_MIN_NOTES = 2000  # a bar only for refreshes that take a while
LISTED_MAX = 20


@dataclass
class IndexArgs:
    vault: str | None = None
    full: bool = False
    only: list[str] = field(default_factory=list)
    as_json: bool = False


@dataclass
class SearchArgs:
    query: str = ""
    vault: str | None = None
    top: int = 10
    type: str | None = None
    path: str | None = None
    as_json: bool = False
    mode: str = "auto"  # hybrid when the index has vectors, else lexical (shardpy/index/hybrid.py)


# Outside a vault, a folder holding more notes than this (or too big to count them in
# WALK_BOUND entries) is indexed only when the user says so: `cd /tmp; shardpy search x`
# indexed all of /tmp (4 min, 138 MB) without a word (issue 26 item 7).
NOTES_BOUND = 500
WALK_BOUND = 20_000


def default_vault(given: str | None) -> Path:
    """The vault named, else the installed vault around the current folder, else the current
    folder when it is a notes folder (an Obsidian vault, one indexed before, or small enough);
    a large plain folder is asked about on a terminal and refused off one."""
    if given is not None:
        return Path(given)
    from shardpy.vault.layout import find_vault_root

    here = Path.cwd()
    root = find_vault_root(here)
    if root is not None:
        return root
    if _known_notes_folder(here) or not _larger_than(here, NOTES_BOUND, WALK_BOUND):
        return here
    return _confirm_large_folder(here)


def _known_notes_folder(folder: Path) -> bool:
    from shardpy.index.store import index_path

    return (
        (folder / ".obsidian").is_dir()
        or (folder / "vault-manifest.json").is_file()
        or index_path(folder).exists()
    )


def _larger_than(folder: Path, notes: int, entries: int) -> bool:
    """More than ``notes`` Markdown files below ``folder`` (dot-folders skipped), or more than
    ``entries`` entries looked at before that is known."""
    found = seen = 0
    stack = [str(folder)]
    while stack:
        try:
            with os.scandir(stack.pop()) as it:
                for entry in it:
                    seen += 1
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.name.endswith(".md"):
                        found += 1
                    if found > notes or seen > entries:
                        return True
        except OSError:
            continue
    return False


def _confirm_large_folder(folder: Path) -> Path:
    from shardpy.errors import Cancelled, ShardpyError

    if sys.stdin.isatty() and sys.stderr.isatty():
        sys.stderr.write(f"{folder} is not a vault and holds many files. Index it for search? [y/N] ")
        sys.stderr.flush()
        if input().strip().lower() in ("y", "yes"):
            return folder
        raise Cancelled("Nothing was indexed.")
    raise ShardpyError(
        "SEARCH_NOT_A_VAULT",
        f"{folder} is not a vault and holds more than {NOTES_BOUND} notes (or too many files to count)",
        "Run the command inside a vault, or name the folder to index with --vault (e.g. --vault .).",
        path=str(folder),
    )


def _write(text: str) -> None:
    sys.stdout.write(text + "\n")


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int], None] | None]:
    if not enabled:
        yield None
        return
    state: dict[str, Any] = {}

    def update(done: int, total: int) -> None:
        if "bar" not in state:
            if total < PROGRESS_MIN_NOTES:
                return
            from rich.progress import Progress

            from shardpy.cli.output import err_console

            state["bar"] = Progress(console=err_console(), transient=True)
            state["task"] = state["bar"].add_task("indexing notes", total=total)
            state["bar"].start()
        state["bar"].update(state["task"], completed=done, total=total)

    try:
        yield update
    finally:
        if "bar" in state:
            state["bar"].stop()


def render_index(report: RefreshReport) -> None:
    _write(
        f"Indexed {report.indexed} notes ({report.chunks} chunks); unchanged {report.unchanged}; "
        f"pruned {report.pruned}; {report.seconds:.2f} s."
    )
    _write(f"Index: {report.db} ({report.total_notes} notes, {report.total_chunks} chunks)")
    for notice in report.notices:
        _write(f"note: {notice}")
    for title, rows in (("Skipped", report.skipped), ("Indexed as plain text", report.degraded)):
        if not rows:
            continue
        _write(f"{title} ({len(rows)}):")
        for path, why in rows[:LISTED_MAX]:
            _write(f"  {path}: {why}")
        if len(rows) > LISTED_MAX:
            _write(f"  … and {len(rows) - LISTED_MAX} more (--json lists all)")


def run_index(args: IndexArgs) -> None:
    from shardpy import index
    from shardpy.cli.output import print_json

    vault = default_vault(args.vault)
    only = [os.path.abspath(p) for p in args.only] or None
    with _progress(not args.as_json and sys.stderr.isatty() and only is None) as bar:
        report = index.refresh(vault, full=args.full, only=only, progress=bar)
    if report.indexed or report.pruned:
        from shardpy.index import qmd_refresh

        name = qmd_refresh.start(vault)  # issue 29: QMD's vectors follow the notes too
        if name is not None:
            report.notices.append(f"qmd: index {name!r} is being updated and embedded in the background")
    if args.as_json:
        print_json(report.to_json())
    else:
        render_index(report)


def render_search(result: SearchResult) -> None:
    for notice in result.notices:
        _write(f"note: {notice}")
    if not result.hits:
        _write(f"No notes match {result.query!r}.")
        return
    if result.match == "any" and result.mode in (None, "lexical"):
        _write("No note has every word; showing notes with any of them.")
    for rank, hit in enumerate(result.hits, 1):
        where = " › ".join(hit.heading)
        kind = f"{hit.type}, " if hit.type else ""
        _write(
            f"{rank}. {hit.path}:{hit.line}" + (f" › {where}" if where else "") + f"  ({kind}{hit.score:.2f})"
        )
        if hit.snippet:
            _write(f"   {hit.snippet}")


def run_search(args: SearchArgs) -> None:
    from shardpy import index
    from shardpy.cli.output import print_json

    result = index.search(
        default_vault(args.vault), args.query, top=args.top, type=args.type, path=args.path, mode=args.mode
    )
    if args.as_json:
        print_json(result.to_json())
    else:
        render_search(result)


_INDEX_FLAGS = {"--full": "full", "--json": "as_json"}
_SEARCH_OPTS = {"--vault": "vault", "--top": "top", "--type": "type", "--path": "path", "--mode": "mode"}


def plain_index_args(argv: list[str]) -> IndexArgs | None:
    """``index`` arguments when they are plain (no --help, nothing unknown); else None (Typer decides)."""
    args = IndexArgs()
    rest = iter(argv)
    for arg in rest:
        if arg in _INDEX_FLAGS:
            setattr(args, _INDEX_FLAGS[arg], True)
        elif arg == "--only":
            value = next(rest, None)
            if value is None:
                return None
            args.only.append(value)
        elif arg.startswith("-") or args.vault is not None:
            return None
        else:
            args.vault = arg
    return args


def plain_search_args(argv: list[str]) -> SearchArgs | None:
    args = SearchArgs()
    words: list[str] = []
    rest = iter(argv)
    for arg in rest:
        if arg == "--json":
            args.as_json = True
        elif arg in _SEARCH_OPTS:
            value = next(rest, None)
            if value is None:
                return None
            if arg == "--top":
                if not value.isdigit():
                    return None
                args.top = int(value)
            else:
                setattr(args, _SEARCH_OPTS[arg], value)
        elif arg.startswith("-"):
            return None
        else:
            words.append(arg)
    if len(words) != 1:
        return None
    args.query = words[0]
    return args
