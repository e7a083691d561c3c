"""FTS5 syntax widened only where the tokenizer alone cannot find the word (index/query._widened)."""

from __future__ import annotations

import sqlite3

from hypothesis import example, given, settings
from hypothesis import strategies as st

from shardpy.index.query import translate

_PIECES = st.sampled_from(
    [
        '"数据库"',
        "数据库",
        "数据库*",
        '"strasse"',
        "Straße",
        "cafe",
        '"soil moisture"',
        "AND",
        "OR",
        "NOT",
        "NEAR(",
        "(",
        ")",
        "title:",
        "{title body}:",
        "^",
        "+",
        "*",
        ",",
        " ",
        '"',
        '""',
        "数",
        "ß",
    ]
)


def _runs(conn: sqlite3.Connection, expr: str) -> bool:
    try:
        conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expr,)).fetchall()
    except sqlite3.OperationalError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(_PIECES, max_size=12))
def test_widening_changes_only_what_it_must_and_never_breaks_a_query(pieces: list[str]) -> None:
    query = " ".join(pieces)
    tr = translate(query)
    if not tr.advanced:
        return
    if not any(c in query for c in "数ßs"):
        assert tr.expression == query  # nothing to widen: as typed
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, body, cjk)")
    conn.execute("INSERT INTO fts VALUES ('Straße', '我们的数据库很慢', '数据 据库 库')")
    # A query FTS5 runs as typed still runs widened (one it rejects is retried as words anyway).
    assert not _runs(conn, query) or _runs(conn, tr.expression), tr.expression


def test_a_widened_query_finds_what_the_plain_word_finds() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, body, cjk)")
    conn.execute(
        "INSERT INTO fts VALUES ('Straße', '我们的数据库很慢', '我们 们的 的数 数据 据库 库很 很慢 慢')"
    )
    for query in ('"数据库"', "数据库*", '"strasse"', '"数据库" AND "Straße"'):
        expr = translate(query).expression
        assert conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (expr,)).fetchone()[0] == 1, expr
    for query in ("title:数据库", "NEAR(数据库 慢)", "^数据库"):  # exact meaning kept: nothing
        assert translate(query).expression == query


_WORDS = ["alpha", "beta", "gamma", "x"]
_PIECES_OF_SYNTAX = [
    '"数据库"',
    "数据库",
    "数据库*",
    '"strasse"',
    "Straße",
    "AND",
    "OR",
    "NOT",
    "NEAR",
    "NEAR(",
    "(",
    ")",
    "title:",
    "^",
    "+",
    "*",
    ",",
    "3",
]
_SYNTAX = st.sampled_from([*_WORDS, *_PIECES_OF_SYNTAX, '"alpha beta"'])
_DOCS = st.lists(st.lists(st.sampled_from(_WORDS), max_size=4), min_size=1, max_size=5)


@settings(max_examples=400, deadline=None)
@given(st.lists(_SYNTAX, min_size=1, max_size=10), _DOCS)
@example(["x", "NOT", "数据库", "alpha"], [["x"], ["x", "alpha"]])
def test_widening_never_changes_what_a_query_finds_where_it_can_add_nothing(
    pieces: list[str], docs: list[list[str]]
) -> None:
    """Over notes with no Chinese and no sharp s, the widened alternatives match nothing more: a
    widened query must find exactly what the typed one finds (an AND put in beside NOT changed it:
    `x NOT 数据库 y`, helper-found)."""
    query = " ".join(pieces)
    tr = translate(query)
    if not tr.advanced:
        return
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(title, body, cjk)")
    for words in docs:
        conn.execute("INSERT INTO fts VALUES (?, ?, '')", (words[0] if words else "", " ".join(words)))

    def found(expr: str) -> set[int] | None:
        try:
            return {r[0] for r in conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (expr,))}
        except sqlite3.OperationalError:
            return None

    typed = found(query)
    if typed is not None:
        assert found(tr.expression) == typed, tr.expression
