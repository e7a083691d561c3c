"""FTS5 syntax widened only where the tokenizer alone cannot find the word (index/query._widened)."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
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
