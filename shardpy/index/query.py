"""From what a person types to an FTS5 MATCH expression.

Plain words are each quoted (so punctuation never becomes syntax) and ANDed;
``or_expression`` is the fallback used when that finds nothing. A query
already written in FTS5's language (quotes, ``prefix*``, parentheses,
``AND``/``OR``/``NOT``/``NEAR``, ``column:``) passes through unchanged; if
FTS5 rejects it, the caller retries it as plain words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from shardpy.index.script import run_query, unsegmented

MAX_QUERY_CHARS = 1000
_SYNTAX = re.compile(r'["*():^]|\b(?:AND|OR|NOT|NEAR)\b')
_WORD = re.compile(r"\w+")
# An English clitic after an apostrophe ("zephyrometer's", "don't"): the tokenizer splits it
# off as a word of its own, so keeping it made the query the phrase "zephyrometer s", which a
# note saying "zephyrometer" does not hold (issue 26 item 17, tests/hardening/test_search_words.py).
_CLITIC = re.compile(r"['\u2019](?:s|t|d|ll|re|ve|m)(?!\w)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Translated:
    expression: str  # the MATCH expression to run first
    fallback: str | None  # the OR expression, when the first is an AND of several terms
    advanced: bool  # passed through as FTS5 syntax
    plain: str | None  # the plain-words expression to retry with when FTS5 rejects an advanced one
    cjk_runs: tuple[str, ...]  # unsegmented runs, for snippets FTS5 cannot mark
    terms: tuple[str, ...] = ()  # the fallback's terms, each a MATCH expression of its own


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


def translate(query: str, *, words_only: bool = False) -> Translated:
    """The expressions for ``query``; ``words_only`` reads FTS5 syntax as plain words."""
    runs = tuple(m.group(0) for m in unsegmented(query))
    terms = plain_terms(query)
    plain = " AND ".join(terms) if terms else None
    fallback = any_of(terms) if len(terms) > 1 else None
    if not words_only and _SYNTAX.search(query):
        return Translated(query, None, True, plain, runs)
    return Translated(plain or "", fallback, False, None, runs, tuple(terms) if fallback else ())
