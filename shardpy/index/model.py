"""What the index answers: search hits, search results and refresh reports."""

from __future__ import annotations

from shardpy.record import Record, field

TYPE_CHECKING = False  # no typing at run time: a one-shot search pays for none of it (shardpy/record.py)
if TYPE_CHECKING:
    from typing import Any, Literal

    Match = Literal["all", "any"]
    Mode = Literal["hybrid", "lexical", "semantic"]


class SearchHit(Record, frozen=True):
    """One note a search found, at its best section."""

    path: str  # vault-relative POSIX path of the note
    title: str  # frontmatter title, else the first # heading, else the file stem
    heading: tuple[str, ...]  # heading path of the section hit; () for the note's preamble
    snippet: str  # excerpt, matched words marked «like this», elisions as …
    score: float  # higher is better (negated bm25)
    type: str | None  # frontmatter `type:`, else the vault manifest's folder convention
    line: int  # 1-based line where the section starts
    mode: Mode | None = None  # how the search that found it ranked (None: the plain lexical API)
    ranks: dict[str, int] | None = None  # 1-based rank of the note in each signal that found it

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "title": self.title,
            "heading": list(self.heading),
            "snippet": self.snippet,
            "score": round(self.score, 4),
            "type": self.type,
            "line": self.line,
        }
        if self.mode is not None:
            out["mode"] = self.mode
            out["ranks"] = dict(self.ranks or {})
        return out


class SearchResult(Record, frozen=True):
    """A search's page of hits and what it wants said."""

    query: str
    match: Match  # "any" when the AND query found nothing and the OR fallback answered
    hits: list[SearchHit]
    notices: list[str] = field(default_factory=list)
    mode: Mode | None = None  # hybrid, lexical or semantic (None: the plain lexical API)
    # Not ranked by words, as asked (searcher.ranked's ``words``): for the caller, not the output.
    unranked: bool = False

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"query": self.query, "match": self.match}
        if self.mode is not None:
            out["mode"] = self.mode
        out["hits"] = [h.to_json() for h in self.hits]
        out["notices"] = list(self.notices)
        return out


class RefreshReport(Record, frozen=True):
    """What a refresh of the index did."""

    indexed: int  # notes read and (re)chunked
    unchanged: int  # notes left as they were (same mtime+size, or same content hash)
    pruned: int  # notes removed from the index (deleted, renamed, now excluded or a symlink)
    chunks: int  # sections written by this refresh
    seconds: float
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason): not indexed
    # (path, problem): indexed, but as plain text or with replacement characters
    degraded: list[tuple[str, str]] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)  # e.g. "index rebuilt: schema changed"
    total_notes: int = 0  # notes in the index after the refresh
    total_chunks: int = 0
    db: str = ""  # the index file

    def to_json(self) -> dict[str, Any]:
        return {
            "indexed": self.indexed,
            "unchanged": self.unchanged,
            "pruned": self.pruned,
            "chunks": self.chunks,
            "seconds": round(self.seconds, 4),
            "skipped": [{"path": p, "reason": r} for p, r in self.skipped],
            "degraded": [{"path": p, "problem": r} for p, r in self.degraded],
            "notices": list(self.notices),
            "total_notes": self.total_notes,
            "total_chunks": self.total_chunks,
            "db": self.db,
        }
