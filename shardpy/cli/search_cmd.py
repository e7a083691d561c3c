# an option table's cells are calls by design: each returns a shardpy.record.field()
"""`shardpy index` and `shardpy search`: bodies and output (the logic is in shardpy.index).

Both also run without Typer (``options.parse_plain`` over the tables below), like plain status and import:
the flagship's PostToolUse hook runs ``shardpy index --only PATH`` after every
write, and Typer's start-up alone would cost more than the refresh.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from shardpy.cli import options as o
from shardpy.cli.output import shown
from shardpy.controls import dropped

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any

    from shardpy.index.model import RefreshReport, SearchResult

PROGRESS_MIN_NOTES = 2000  # a bar only for refreshes that take a while
LISTED_MAX = 20


_VAULT_HELP = "Folder of notes (default: the vault around here, else here)."


# Option tables (shardpy/cli/options.py, issue 27): the Typer command and the plain parser are both
# derived from these; the docstring is the command's help.
class IndexArgs(o.Args):
    """Build or refresh the vault's search index (incremental; kept in the user cache folder)."""

    vault: str | None = o.argument(_VAULT_HELP)
    full: bool = o.flag("--full", help="Re-read and re-chunk every note.")
    only: list[str] = o.many("--only", help="Refresh just this note (repeatable; for hooks).")
    as_json: bool = o.as_json()


class SearchArgs(o.Args):
    """Search the vault's notes by meaning and words; best sections first (refreshes a stale index first)."""

    query: str = o.argument('Words (ANDed), "a phrase", prefix*, AND/OR/NOT.', required=True)
    vault: str | None = o.value("--vault", help=_VAULT_HELP)
    top: int = o.value("--top", help="How many notes to show.", default=10)
    type: str | None = o.value("--type", help="Only notes of this type.")
    path: str | None = o.value("--path", help="Only notes under this folder.")
    as_json: bool = o.as_json()
    # A word, not a choice: an unknown mode is SEARCH_BAD_MODE, a typed error (docs/ERRORS.md).
    mode: str = o.value(
        "--mode", help="hybrid (meaning + words, default with vectors), lexical, semantic.", default="auto"
    )


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
        "Run it inside a vault, or name the folder: `shardpy index .` or `shardpy search --vault . QUERY`.",
        path=str(folder),
    )


def _write(text: str) -> None:
    # The control characters a note can carry are never written, tabs and line feeds aside (an
    # escape sequence retitles or recolours the terminal when its snippet is shown: a helper's
    # probe; tests/index/test_cli_process.py).
    sys.stdout.write(dropped(text, layout=True) + "\n")


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
            _write(f"  {shown(path)}: {why}")
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
        # A name's or heading's control characters shown, a line break in a name too (_write
        # drops the others; tests/hardening/test_names_shown.py).
        where = " › ".join(shown(h) for h in hit.heading)
        kind = f"{hit.type}, " if hit.type else ""
        _write(
            f"{rank}. {shown(hit.path)}:{hit.line}"
            + (f" › {where}" if where else "")
            + f"  ({kind}{hit.score:.2f})"
        )
        if hit.snippet:
            _write(f"   {hit.snippet}")


def _in_vault(vault: Path, path: str | None) -> str | None:
    """``--path`` as the vault-relative folder the filter means: an absolute path, or one relative to
    the current folder (``./x``, ``../work``), named nothing and answered an empty list (a helper's
    probe; tests/index/test_cli_process.py). A plain ``work/`` stays vault-relative, as before."""
    if path is None or not (os.path.isabs(path) or path.startswith(("./", "../")) or path in (".", "..")):
        return path
    full = Path(os.path.abspath(path))
    try:
        rel = full.relative_to(Path(os.path.abspath(vault))).as_posix()
    except ValueError:
        return path  # outside the vault: the filter says so (no note there)
    return "" if rel == "." else rel


def run_search(args: SearchArgs) -> None:
    from shardpy import index
    from shardpy.cli.output import print_json

    vault = default_vault(args.vault)
    path = _in_vault(vault, args.path)
    result = index.search(vault, args.query, top=args.top, type=args.type, path=path, mode=args.mode)
    if args.as_json:
        print_json(result.to_json())
    else:
        render_search(result)
