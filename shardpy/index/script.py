"""Scripts written without spaces between words (Chinese, Japanese, Korean, Thai...).

unicode61 makes one token of a whole run of such characters, so a word inside
it could never be found. Those runs are also indexed as overlapping character
bigrams (the classic CJK analyzer: 数据库 → 数据 据库, plus the run's last
character alone) in a separate ``cjk`` column; a query run becomes the phrase
of its bigrams. Bigrams rather than trigrams because most Chinese words are
two characters long and SQLite's trigram tokenizer cannot match fewer than
three. Cyrillic, Greek and other spaced scripts need none of this: unicode61
tokenizes and case-folds them like Latin.
"""

from __future__ import annotations

import re

UNSEGMENTED = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]+"
)


def bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]


def cjk_column(*texts: str) -> str:
    """The cjk column's text for a chunk: the bigrams of every unsegmented run."""
    runs = [m.group(0) for t in texts if t and not t.isascii() for m in UNSEGMENTED.finditer(t)]
    return "\n".join(" ".join(bigrams(r)) for r in runs)


def run_query(run: str) -> str:
    """The FTS5 expression finding ``run`` in the cjk column."""
    if len(run) == 1:
        return f'cjk : "{run}"*'
    return 'cjk : "' + " ".join(bigrams(run)[:-1]) + '"'
