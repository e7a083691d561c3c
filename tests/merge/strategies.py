"""Hypothesis strategies: texts built from a small alphabet of lines so repeats happen."""

from __future__ import annotations

from hypothesis import strategies as st

# Lines without their newline. Includes blank, punctuation-only (no alnum:
# git joins conflicts across such lines), non-ASCII, a trailing CR and
# lines that differ only in trailing whitespace.
ALPHABET = ["a", "b", "c", "d", "", "}", "x y", "x y ", "é", "日本", "- [ ] todo", "a\r", "---"]

line = st.sampled_from(ALPHABET)
fresh_line = st.sampled_from([*ALPHABET, "new 1", "new 2", "🙂 3"])


@st.composite
def texts(draw: st.DrawFn, max_lines: int = 14) -> list[str]:
    return draw(st.lists(line, max_size=max_lines))


@st.composite
def edited(draw: st.DrawFn, base: list[str], max_edits: int = 5) -> list[str]:
    """Apply a few random deletions, insertions and replacements to ``base``."""
    out = list(base)
    for _ in range(draw(st.integers(0, max_edits))):
        op = draw(st.sampled_from(["del", "ins", "rep", "block"]))
        if op == "ins" or not out:
            out.insert(draw(st.integers(0, len(out))), draw(fresh_line))
        elif op == "del":
            del out[draw(st.integers(0, len(out) - 1))]
        elif op == "rep":
            out[draw(st.integers(0, len(out) - 1))] = draw(fresh_line)
        else:
            at = draw(st.integers(0, len(out) - 1))
            size = draw(st.integers(1, 3))
            out[at : at + size] = draw(st.lists(fresh_line, max_size=3))
    return out


def join(lines: list[str], final_newline: bool) -> str:
    text = "".join(line + "\n" for line in lines)
    if not final_newline and text:
        text = text[:-1]
    return text


@st.composite
def triples(draw: st.DrawFn) -> tuple[str, str, str]:
    """(base, user, shard) texts; each may lack its final newline."""
    base = draw(texts())
    user = draw(edited(base))
    shard = draw(edited(base))
    return (
        join(base, draw(st.integers(0, 4)) > 0),
        join(user, draw(st.integers(0, 4)) > 0),
        join(shard, draw(st.integers(0, 4)) > 0),
    )
