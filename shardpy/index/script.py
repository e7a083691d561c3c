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
from collections.abc import Iterator

_UNSEGMENTED = (
    "[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]+"
)


def unsegmented(text: str) -> Iterator[re.Match[str]]:
    """The runs of unsegmented scripts in ``text``. The pattern is compiled when first needed (re's
    cache): its ranges cost 3-15 ms of a one-shot search that never meets such a script (issue 29)."""
    if text.isascii():
        return iter(())
    return re.finditer(_UNSEGMENTED, text)


def bigrams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)] + [run[-1]]


def cjk_column(*texts: str) -> str:
    """The cjk column's text for a chunk: the bigrams of every unsegmented run."""
    runs = [m.group(0) for t in texts if t for m in unsegmented(t)]
    return "\n".join(" ".join(bigrams(r)) for r in runs)


def run_query(run: str) -> str:
    """The FTS5 expression finding ``run`` in the cjk column."""
    if len(run) == 1:
        return f'cjk : "{run}"*'
    return 'cjk : "' + " ".join(bigrams(run)[:-1]) + '"'
