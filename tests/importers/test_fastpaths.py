"""Fast paths give what the slow reference gives, wherever they answer."""

from __future__ import annotations

from pathlib import Path

import pathspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy.importers.basic_memory import DEFAULT_IGNORE, spec_matcher
from shardpy.importers.bm_grammar import Observation, observation_count, observation_texts, semantics
from shardpy.importers.links import Resolver, VaultIndex, wikilink_parts
from shardpy.notes.blocks import InlineBlock, markdown_it_blocks, strip_code_spans
from shardpy.notes.frontmatter import load_yaml, simple_mapping, split_frontmatter
from shardpy.notes.note import is_note_name, without_ext
from shardpy.notes.note import stem as note_stem
from shardpy.notes.wikilinks import find_wikilinks
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
flow_entry = st.builds(
    lambda k, sep, vs, end: [k + ": [" + sep.join(vs) + end],
    st.sampled_from(KEYS),
    st.sampled_from([", ", ",", " , ", ",  "]),
    st.lists(values, max_size=4),
    st.sampled_from(["]", " ]", "", "] ", ",]"]),
)
noise = st.sampled_from(["", "   ", "# comment", "  sub: x", "...", "---", "x", "  continued", "\r"]).map(
    lambda x: [x]
)
blocks = st.tuples(
    st.lists(
        st.one_of(scalar_entry, scalar_entry, scalar_entry, list_entry, list_entry, flow_entry, noise),
        min_size=1,
        max_size=6,
    ),
    st.sampled_from(["\n", "\r\n"]),
).map(lambda t: t[1].join(line for entry in t[0] for line in entry) + t[1])


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(blocks)
@example("title: x\ntags:\n- a\n-\n- 'b'\naliases:\n")
@example("tags:\n  - a\n - b\n")
@example("tags: [a, b c]\ntitle: x\nk1: []\n")
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
        "x: [a, b: c]\n",
        "x: [a, 'b']\n",
        "x: [a, 1]\n",
        "x: [a,]\n",
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
    # A link recipe keeps only each link's text: its inner text and embed flag are read back from it.
    assert [wikilink_parts(text[s:e]) for s, e, _, _ in got] == [(inner, embed) for _, _, embed, inner in got]


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


def observation_text(o: Observation) -> str:
    """An observation as the fast path prints it (the reference: basic-memory's parsed fields)."""
    return f"[{o.category or ''}] {o.content}" + (f" ({o.context})" if o.context else "")


def observations(blocks: list[InlineBlock]) -> list[Observation]:
    return semantics(blocks)[0]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(OBS_PIECES), max_size=6).map("".join), max_size=6).map("\n".join))
def test_observation_texts_equal_parsed_observations(body: str) -> None:
    blocks = markdown_it_blocks(body)
    assert observation_texts(blocks) == [observation_text(o) for o in observations(blocks)]
    assert observation_count(blocks) == len(observation_texts(blocks))


# --- the compact link resolver vs the dict-of-lists one it replaced ----------------------------


class _ReferenceResolver:
    """The former resolver: exact and casefolded tables of target lists (import part only)."""

    def __init__(self) -> None:
        self.names: dict[str, list[str]] = {}
        self.keys: dict[str, list[str]] = {}
        self.names_cf: dict[str, list[str]] = {}
        self.keys_cf: dict[str, list[str]] = {}

    @staticmethod
    def _push(table: dict[str, list[str]], key: str, value: str) -> None:
        if not key.strip():
            return
        lst = table.setdefault(key, [])
        if value not in lst:
            lst.append(value)

    def add(self, target: str, names: tuple[str, ...], keys: tuple[str, ...]) -> None:
        for n in names:
            self._push(self.names, n, target)
            self._push(self.names_cf, n.casefold(), target)
        for k in keys:
            self._push(self.keys, k, target)
            self._push(self.keys_cf, k.casefold(), target)

    def resolve(self, text: str, scope: str) -> tuple[str, str | None, str] | None:
        t = text.strip()
        if not t:
            return ("unresolved", None, "empty link")
        if t.lower().endswith(".md"):
            t = t[:-3]
        for table, key in (
            (self.names, text),
            (self.names, t),
            (self.keys, t),
            (self.names_cf, t.casefold()),
            (self.keys_cf, t.casefold()),
        ):
            hits = table.get(key)
            if hits:
                uniq = sorted(set(hits))
                if len(uniq) > 1 and scope:
                    scoped = [h for h in uniq if h.startswith(scope)]
                    if len(scoped) == 1:
                        uniq = scoped
                if len(uniq) == 1:
                    return ("resolved", uniq[0], "")
                return (
                    "ambiguous",
                    None,
                    f"{len(uniq)} imported notes answer to this name: " + ", ".join(uniq[:3]),
                )
        return None  # the vault's turn (same code in both)


WORDS = [
    "Alpha",
    "alpha",
    "ALPHA",
    " Alpha",
    "Alpha ",
    "Beta",
    "beta.md",
    "Straße",
    "STRASSE",
    "a/b",
    "A/B",
    " ",
    "",
]


@settings(max_examples=800, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(WORDS), max_size=2), st.lists(st.sampled_from(WORDS), max_size=3)),
        max_size=6,
    ),
    st.lists(st.sampled_from([*WORDS, "Alpha.md", "alpha.MD", " beta "]), min_size=1, max_size=6),
    st.sampled_from(["", "n0/", "n1/"]),
)
def test_compact_resolver_equals_the_reference(
    records: list[tuple[list[str], list[str]]], queries: list[str], scope: str
) -> None:
    ref = _ReferenceResolver()
    res = Resolver(VaultIndex(Path("/nonexistent")), lambda _: False)
    for i, (names, keys) in enumerate(records):
        target = f"n{i}/note {i}.md"
        ref.add(target, tuple(names), tuple(keys))
        res.add_record(target, tuple(names), tuple(keys), f"src{i}.md")
    for q in queries:
        want = ref.resolve(q, scope)
        if want is None:
            continue
        got = res.resolve(q, scope)
        assert (got.status, got.target, got.reason) == want, q


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["A.md", "a.md", "x/A.md", "x/b.md", "img.png", "x/IMG.png", "A", "c.md"]), max_size=5
    ),
    st.lists(
        st.sampled_from(["n/A.md", "n/b.md", "n/img.png", "n/d.md", "x/b.md"]),
        min_size=1,
        max_size=4,
        unique=True,
    ),
)
def test_link_names_equal_the_counting_reference(vault_files: list[str], targets: list[str]) -> None:
    vault = VaultIndex(Path("/nonexistent"))
    for rel in vault_files:
        vault.add(rel)
    res = Resolver(vault, set(targets).__contains__)
    for i, target in enumerate(targets):
        res.add_record(target, (f"t{i}",), (), f"s{i}")
    counts: dict[str, int] = {}
    for rel in set(vault_files) | set(targets):
        key = note_stem(rel).casefold() if is_note_name(rel) else rel.rsplit("/", 1)[-1].casefold()
        counts[key] = counts.get(key, 0) + 1
    for target in targets:
        if is_note_name(target):
            want = note_stem(target) if counts[note_stem(target).casefold()] <= 1 else without_ext(target)
        else:
            name = target.rsplit("/", 1)[-1]
            want = name if counts[name.casefold()] <= 1 else target
        assert res.link_name(target) == want
