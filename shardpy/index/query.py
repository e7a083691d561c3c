"""From what a person types to an FTS5 MATCH expression.

Plain words are each quoted (so punctuation never becomes syntax) and ANDed;
``or_expression`` is the fallback used when that finds nothing. A query
already written in FTS5's language (quotes, ``prefix*``, parentheses,
``AND``/``OR``/``NOT``/``NEAR``, ``column:``) passes through unchanged; if
FTS5 rejects it, the caller retries it as plain words.
"""

from __future__ import annotations

import re

from shardpy.index.script import run_query, unsegmented
from shardpy.record import Record

MAX_QUERY_CHARS = 1000
_SYNTAX = re.compile(r'["*():^]|\b(?:AND|OR|NOT|NEAR)\b')
_WORD = re.compile(r"\w+")
# An English clitic after an apostrophe ("zephyrometer's", "don't"): the tokenizer splits it
# off as a word of its own, so keeping it made the query the phrase "zephyrometer s", which a
# note saying "zephyrometer" does not hold (issue 26 item 17, tests/hardening/test_search_words.py).
_CLITIC = re.compile(r"['\u2019](?:s|t|d|ll|re|ve|m)(?!\w)", re.IGNORECASE)


class Translated(Record, frozen=True):
    """A query as FTS5 MATCH expressions."""

    expression: str  # the MATCH expression to run first
    fallback: str | None  # the OR expression, when the first is an AND of several terms
    advanced: bool  # passed through as FTS5 syntax
    plain: str | None  # the plain-words expression to retry with when FTS5 rejects an advanced one
    cjk_runs: tuple[str, ...]  # unsegmented runs, for snippets FTS5 cannot mark
    terms: tuple[str, ...] = ()  # the fallback's terms, each a MATCH expression of its own
    # FTS5 syntax that left a phrase holding a run of an unsegmented script as typed (beside another
    # word, in NEAR(...), after a column filter, ^ or +): it matches only a whole run of it.
    narrow: bool = False


def _phrase(words: list[str]) -> str:
    """The quoted phrase of ``words``, or both spellings of a sharp s: the tokenizer folds case
    but keeps "ß", so "strasse" and "Straße" are different words to it (issue 26 item 17)."""
    text = " ".join(words)
    folded = text.casefold()
    both = "ß" in folded or "ss" in folded
    spellings = dict.fromkeys([text.lower(), folded, folded.replace("ss", "ß")] if both else [text])
    quoted = ['"' + s + '"' for s in spellings]
    return quoted[0] if len(quoted) == 1 else "(" + " OR ".join(quoted) + ")"


def _term(word: str) -> str | None:
    """One whitespace-separated word as an FTS5 term (None when it holds nothing searchable)."""
    word = _CLITIC.sub("", word)
    parts: list[str] = []
    pos = 0
    for m in unsegmented(word):
        latin = _WORD.findall(word[pos : m.start()])
        if latin:
            parts.append(_phrase(latin))
        parts.append(run_query(m.group(0)))
        pos = m.end()
    latin = _WORD.findall(word[pos:])
    if latin:
        parts.append(_phrase(latin))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"


def plain_terms(query: str) -> list[str]:
    return [t for t in (_term(w) for w in query.split()) if t is not None]


def any_of(terms: list[str] | tuple[str, ...]) -> str:
    """The any-word expression of plain terms (the fallback when not all of them match)."""
    return " OR ".join(terms)


# FTS5's query language as far as :func:`_widened` reads it (sqlite.org/fts5.html, "Full-text
# Query Syntax"): strings ("" inside is a quote), barewords, the characters that are syntax, spaces.
_FTS_TOKEN = re.compile(r'"(?:[^"]|"")*"?|[^\s"(){}:*^+,]+|[(){}:*^+,]|\s+')
_KEYWORDS = frozenset({"AND", "OR", "NOT", "NEAR"})


def _is_phrase(token: str) -> bool:
    return token[:1] == '"' or (
        token[:1] not in "(){}:*^+," and not token.isspace() and token not in _KEYWORDS
    )


def _widen_one(token: str, prefix: bool) -> str | None:
    """``token`` (a phrase of one word) OR the word as a plain search finds it, when the two differ:
    a word inside a run of an unsegmented script (数据库 is one token of 我们的数据库很慢 to FTS5; the
    cjk column finds it) or a sharp s (the tokenizer keeps "ß": "strasse" is not "Straße" to it)."""
    text = token[1:-1].replace('""', '"') if token[:1] == '"' else token
    if not text or any(c.isspace() for c in text) or (token[:1] == '"' and not token.endswith('"')):
        return None  # a phrase of several words (or an unclosed string) keeps its exact meaning
    cjk = any(True for _ in unsegmented(text))
    sharp = not prefix and ("ß" in text.casefold() or "ss" in text.casefold())
    if not (cjk or sharp):
        return None
    alt = _term(text)
    return None if alt is None else f"({token}{'*' if prefix else ''} OR {alt})"


# Tokens a neighbouring operand is not: FTS5's implicit AND joins phrases only, and binds tighter
# than NOT (`x NOT a b` is `x NOT (a AND b)`), so a phrase that touches another operand is left as
# typed: a group there would be a syntax error, or an AND put in would change what NOT takes away
# (helper-found; tests/index/test_query_widen.py).
# So a phrase is widened only with one of these just before it and one just after (a column
# filter's ``:``, ``^`` and ``+`` are not among them: what they bind keeps its meaning too).
_FREE_BEFORE = frozenset({"", "AND", "OR", "NOT", "(", ","})
_FREE_AFTER = frozenset({"", "AND", "OR", "NOT", ")", ","})


def _protected(tokens: list[str], i: int, inside: bool, prefix: bool) -> bool:
    """The phrase at ``i`` keeps its exact meaning: inside NEAR(...), a column filter's group or a
    column set; a column's name; after ``^`` or a column filter; joined by ``+``; or beside
    another operand (an implicit AND)."""
    before = next((t for t in reversed(tokens[:i]) if t and not t.isspace()), "")
    rest = [t for t in tokens[i + 1 :] if t and not t.isspace()]
    after = (rest[1:] if prefix else rest)[:1]
    return inside or before not in _FREE_BEFORE or (after[0] if after else "") not in _FREE_AFTER


def _widened(query: str) -> tuple[str, bool]:
    """``query`` in FTS5 syntax with each standalone one-word phrase also searched as plain words
    search it (:func:`_widen_one`): `"数据库"`, `数据库*`, `"strasse" OR x` find what `数据库` and
    `strasse` find (tests/index/test_search.py). Anything else keeps its exact meaning. Also
    whether a phrase holding a run of an unsegmented script was left as typed (Translated.narrow)."""
    tokens = _FTS_TOKEN.findall(query)
    if "".join(tokens) != query:
        return query, False
    out: list[str] = []
    narrow = False
    groups: list[bool] = []  # per open parenthesis: a NEAR(...) or column-filter group
    braces = False
    for i, token in enumerate(tokens):
        if token == "{" or token == "}":
            braces = token == "{"
        elif token == "(":
            before = next((t for t in reversed(tokens[:i]) if not t.isspace()), "")
            groups.append(before in ("NEAR", ":") or any(groups))
        elif token == ")" and groups:
            groups.pop()
        elif _is_phrase(token):
            prefix = next((t for t in tokens[i + 1 :] if not t.isspace()), "") == "*"
            kept = _protected(tokens, i, braces or any(groups), prefix)
            narrow = narrow or (kept and any(True for _ in unsegmented(token)))
            wide = None if kept else _widen_one(token, prefix)
            if wide is not None:
                if prefix:
                    tokens[tokens.index("*", i + 1)] = ""  # taken into the widened group
                out.append(wide)
                continue
        out.append(token)
    return "".join(out), narrow


def translate(query: str, *, words_only: bool = False) -> Translated:
    """The expressions for ``query``; ``words_only`` reads FTS5 syntax as plain words."""
    runs = tuple(m.group(0) for m in unsegmented(query))
    terms = plain_terms(query)
    plain = " AND ".join(terms) if terms else None
    fallback = any_of(terms) if len(terms) > 1 else None
    if not words_only and _SYNTAX.search(query):
        expression, narrow = _widened(query)
        return Translated(expression, None, True, plain, runs, narrow=narrow)
    return Translated(plain or "", fallback, False, None, runs, tuple(terms) if fallback else ())
