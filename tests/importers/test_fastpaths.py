"""Fast paths give what the slow reference gives, wherever they answer."""

from __future__ import annotations

import pathspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy.importers.basic_memory import DEFAULT_IGNORE, observation_text, spec_matcher
from shardpy.importers.bm_grammar import observation_texts, observations
from shardpy.importers.frontmatter import load_yaml, simple_mapping, split_frontmatter
from shardpy.importers.markdown import find_wikilinks, markdown_it_blocks, strip_code_spans
from tests.importers.fixtures import PLANNING, TEA, generated_note

KEYS = [
    "title",
    "type",
    "permalink",
    "tags",
    "aliases",
    "status",
    "a-b",
    "_x",
    "Title",
    "true",
    "y",
    "No",
    "created",
    "date",
    "k1",
    "k2",
    "k3",
    "k4",
    "k5",
    "k6",
]
SEPARATORS = [": ", ":", ":  ", " : ", ":\t"]
VALUES = [
    "",
    "plain words",
    "Coffee Brewing",
    "main/notes/coffee-brewing",
    "yes",
    "No",
    "null",
    "Null",
    "~",
    "on",
    "2024-01-02",
    "12",
    "1e3",
    ".inf",
    "'q: x'",
    "'it''s'",
    "''",
    "'unterminated",
    "'a' b'",
    '"dq"',
    '""',
    '"a\\"b"',
    '"a"b"',
    '"',
    "x # c",
    "'x' # c",
    "a: b",
    "a:b",
    "x:",
    "C#",
    "a#b",
    "[a, b]",
    "{a: 1}",
    "Über Blick",
    "é",
    "&a x",
    "*a",
    "!t x",
    "|",
    ">",
    "- x",
    "? x",
    "@x",
    "`x`",
    "%x",
    "\u00a0x",
    "x\ty",
    "x\x01",
    "trailing  ",
]
GOOD_VALUES = [
    "",
    "plain words",
    "Coffee",
    "main/x-y",
    "'q: x'",
    "'it''s'",
    '"dq"',
    "''",
    "C#",
    "Über",
    "x:y",
    "t  ",
]
values = st.one_of(st.sampled_from(GOOD_VALUES), st.sampled_from(VALUES))
scalar_entry = st.builds(
    lambda k, s, v: [k + s + v], st.sampled_from(KEYS), st.sampled_from(SEPARATORS), values
)
list_entry = st.builds(
    lambda k, ind, dashes, vs: [k + ":", *(ind + d + v for d, v in zip(dashes, vs, strict=False))],
    st.sampled_from(KEYS),
    st.sampled_from(["", "  ", " "]),
    st.lists(st.sampled_from(["- ", "- ", "-", "-  ", "--", "  - "]), min_size=4, max_size=4),
    st.lists(values, max_size=4),
)
noise = st.sampled_from(["", "   ", "# comment", "  sub: x", "...", "---", "x", "  continued", "\r"]).map(
    lambda x: [x]
)
blocks = st.tuples(
    st.lists(
        st.one_of(scalar_entry, scalar_entry, scalar_entry, list_entry, list_entry, noise),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["\n", "\r\n"]),
).map(lambda t: t[1].join(line for entry in t[0] for line in entry) + t[1])


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks)
@example("title: x\ntags:\n- a\n-\n- 'b'\naliases:\n")
@example("tags:\n  - a\n - b\n")
@example("title: x\ntitle: y\n")
def test_simple_mapping_equals_the_yaml_loader(fm: str) -> None:
    fast = simple_mapping(fm)
    if fast is None:
        return
    loaded = load_yaml(fm)
    assert isinstance(loaded, dict)
    assert {str(k): v for k, v in loaded.items()} == fast
    assert list(map(str, loaded)) == list(fast)


@pytest.mark.parametrize("text", [TEA, PLANNING, *(generated_note(i, 50)[1] for i in range(14))])
def test_simple_mapping_answers_for_ordinary_notes(text: str) -> None:
    fm = text.split("---\n")[1]
    fast = simple_mapping(fm)
    assert fast is not None
    assert fast == load_yaml(fm)
    assert split_frontmatter(text).data == fast


def test_simple_mapping_declines_what_yaml_must_decide() -> None:
    for fm in (
        "n: 12\n",
        "d: 2024-01-02\n",
        "a: yes\n",
        "x: [a]\n",
        "m:\n  k: v\n",
        "a: b # c\n",
        "a: 1\na: 2\n",
    ):
        assert simple_mapping(fm) is None, fm


# --- ignore rules: one combined regex vs pathspec's loop ---------------------------------------

PARTS = ["a", "b.db", "node_modules", "x.md", "config.json", "build", "env", "Thumbs.db", "y~", "d.db-wal"]
PARTS += ["z.tmp", "__pycache__", "r.swp", "dist", "Desktop.ini", "n.db.bak", "venv", "sub dir", "é.md"]
GITIGNORES = [
    DEFAULT_IGNORE,
    ["*.md", "!keep.md"],
    ["/build", "docs/**/*.tmp", "#comment", "", "a/"],
    ["**/x.md", "sub dir/", "\\#literal"],
]


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(range(len(GITIGNORES))),
    st.lists(st.sampled_from(PARTS), min_size=1, max_size=4),
    st.booleans(),
)
def test_spec_matcher_equals_pathspec(which: int, parts: list[str], is_dir: bool) -> None:
    lines = GITIGNORES[which]
    rel = "/".join(parts) + ("/" if is_dir else "")
    spec = pathspec.PathSpec.from_lines("gitignore", lines)
    assert spec_matcher(lines)(rel) == bool(spec.match_file(rel))


# --- wikilinks: jumping between "[[", "]]" and blank lines vs a character-by-character scan -------


def _reference_wikilinks(text: str) -> list[tuple[int, int, bool, str]]:
    masked = strip_code_spans(text)
    out: list[tuple[int, int, bool, str]] = []
    pos = masked.find("[[")
    n = len(masked)
    while pos != -1:
        if pos > 0 and masked[pos - 1] == "\\":
            pos = masked.find("[[", pos + 2)
            continue
        depth, i, end = 1, pos + 2, -1
        while i < n:
            two = masked[i : i + 2]
            if two == "[[":
                depth += 1
                i += 2
            elif two == "]]":
                depth -= 1
                if depth == 0:
                    end = i
                    break
                i += 2
            elif masked[i] == "\n" and i + 1 < n and masked[i + 1] == "\n":
                break
            else:
                i += 1
        if end == -1:
            break
        embed = pos > 0 and masked[pos - 1] == "!"
        out.append((pos - 1 if embed else pos, end + 2, embed, text[pos + 2 : end]))
        pos = masked.find("[[", end + 2)
    return out


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.sampled_from(["[[", "]]", "[", "]", "\n", "\n\n", "a", "b|c", "#", "`", "\\", "!", " "]),
        max_size=16,
    )
)
def test_find_wikilinks_equals_the_reference_scan(pieces: list[str]) -> None:
    text = "".join(pieces)
    got = [(w.start, w.end, w.embed, w.inner) for w in find_wikilinks(text)]
    assert got == _reference_wikilinks(text)


# --- observation texts without Observation objects vs parse_observation -------------------------

OBS_PIECES = [
    "[cat] ",
    "[x] ",
    "[ ] ",
    "[] ",
    "[a] ",
    "[00:01] ",
    "[[L]] ",
    "[t](u) ",
    "@2026-01-02 ",
    "@effective:x ",
]
OBS_PIECES += [
    "text ",
    "#tag ",
    "#a#b ",
    "C# ",
    "(ctx)",
    "(a) b",
    " #bm:links_to",
    "()",
    "- ",
    "> ",
    "# ",
    "\n",
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(OBS_PIECES), max_size=6).map("".join), max_size=6).map("\n".join))
def test_observation_texts_equal_parsed_observations(body: str) -> None:
    blocks = markdown_it_blocks(body)
    assert observation_texts(blocks) == [observation_text(o) for o in observations(blocks)]
