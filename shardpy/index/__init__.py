"""Vault search: a local SQLite FTS5 index of a folder of Markdown notes.

    from shardpy import index

    report = index.refresh(vault)                       # build or refresh incrementally
    report = index.refresh(vault, only=["brain/Gotchas.md"])   # one note (hooks, MCP writes)
    result = index.search(vault, "capacitive probes", top=5, type="incident")
    for hit in result.hits: print(hit.path, hit.heading, hit.snippet)

Importing this package is cheap: sqlite3 and the parser load on first use.
See docs/SEARCH.md for the schema, chunking, ranking and query syntax.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from shardpy.index.model import RefreshReport, SearchHit, SearchResult

# Every numpy import of shardpy is in this package, so this runs first: one BLAS thread. numpy
# embeds (an index refresh, a folder model, recall's re-ranking); a search scans with SimSIMD and
# does not import it. OpenBLAS's thread pool cost a one-shot `shardpy search` more CPU than the
# search when it did (`import numpy` 236 ms CPU against 124 ms with one thread), and threads
# fighting over 2 shared cores made a small BERT batch 15x slower (34 s against 2.4 s). A value
# the user set is kept (tests/index/test_cli_process.py).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

__all__ = ["RefreshReport", "SearchHit", "SearchResult", "index_path", "refresh", "search"]


def index_path(vault: Path) -> Path:
    """The SQLite file for this vault (platformdirs user cache dir, keyed by the vault's realpath).
    Never inside the vault."""
    from shardpy.index.store import index_path as _index_path

    return _index_path(vault)


def refresh(
    vault: Path,
    *,
    full: bool = False,
    only: Sequence[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> RefreshReport:
    """Build or incrementally refresh. ``only``: vault-relative POSIX paths to refresh (a listed
    path that no longer exists, or is no longer a note the index covers, is pruned)."""
    from shardpy.index.build import refresh as _refresh

    return _refresh(vault, full=full, only=only, progress=progress)


def search(
    vault: Path,
    query: str,
    *,
    top: int = 10,
    offset: int = 0,
    type: str | None = None,
    path: str | None = None,
    max_age: float | None = None,
    mode: str | None = None,
    keep: Callable[[str], bool] | None = None,
) -> SearchResult:
    """Ranked hits, the best section of each note. Refreshes incrementally first when the index
    is older than ``max_age`` seconds (None: the configured default; 0: always; inf: never,
    except that a vault without an index gets one). ``mode``: None is BM25 as this API always
    answered; "auto" is hybrid when the index has vectors (else lexical); "hybrid", "lexical",
    "semantic" ask for one (shardpy/index/hybrid.py). ``keep`` (with a mode): only the notes whose
    vault path it accepts are ranked, as if the others did not exist (an MCP exposure policy)."""
    if mode is None and keep is None:
        from shardpy.index.searcher import ranked

        return ranked(vault, query, top=top, offset=offset, type=type, path=path, max_age=max_age)[0]
    from shardpy.index.hybrid import search as _hybrid

    chosen = None if mode == "auto" else mode
    return _hybrid(
        vault, query, mode=chosen, top=top, offset=offset, type=type, path=path, max_age=max_age, keep=keep
    )
