"""Issue 24, items 12, 13, 15: what a search query, a manifest's search section or one note can do.

Every query string gets an answer or a typed error (never an ``sqlite3`` traceback); a hostile
``search`` section is refused by key, quickly; one note nested 400 deep is indexed as plain text
and breaks nothing else (index, CLI, MCP search and expand).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from shardpy import index
from shardpy.errors import ShardpyError
from tests.serve.kit import build_world, connect
from tests.shardkit import child_env, run_shardpy

# FTS5's own syntax, weighted so that most generated queries are mostly syntax.
_SYNTAX = ['"', "*", "(", ")", ":", "^", "+", "-", "{", "}", ",", " ", "AND", "OR", "NOT", "NEAR", "title"]
QUERIES = st.lists(st.one_of(st.sampled_from(_SYNTAX), st.text(max_size=3)), max_size=40).map("".join)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search-inputs") / "vault"
    (root / "brain").mkdir(parents=True)
    (root / "brain/Probes.md").write_text("# Probes\n\ncapacitive probes and title words\n", encoding="utf-8")
    index.refresh(root)
    return root


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=QUERIES)
def test_any_query_string_answers_or_is_a_typed_error(vault: Path, query: str) -> None:
    try:
        result = index.search(vault, query, max_age=float("inf"))
    except ShardpyError:
        return
    assert result.match in ("all", "any")


@pytest.mark.parametrize("query", ['"', "*", "(" * 500, "^", ":", '"""'])
def test_fts5_syntax_without_words_answers_nothing_with_a_notice(vault: Path, query: str) -> None:
    result = index.search(vault, query, max_age=float("inf"))
    assert result.hits == [] and any("not understood" in n for n in result.notices)


def test_cli_never_prints_a_traceback_for_a_query(vault: Path, tmp_path: Path) -> None:
    for query in ('"', "*", "(" * 500):
        proc = run_shardpy("search", query, "--vault", vault, cwd=tmp_path)
        assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
        assert proc.returncode == 0 and "No notes match" in proc.stdout


# --- item 13: a hostile `search` section in vault-manifest.json ---------------------------------

# *a*a…*b against a long name of a's: pathspec's regex backtracks through every split of the name.
BACKTRACKS = "*a" * 25 + "*b"


def _vault_with(root: Path, manifest: dict[str, object], names: tuple[str, ...] = ("brain/Fine.md",)) -> Path:
    vault = root / "vault"
    for name in names:
        (vault / name).parent.mkdir(parents=True, exist_ok=True)
        (vault / name).write_text("# Fine\n\nordinary words\n", encoding="utf-8")
    (vault / "vault-manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return vault


@pytest.mark.parametrize(
    ("search", "key"),
    [
        ({"include": ["../**", "/etc/**"]}, "search.include[0]"),
        ({"include": ["brain/", "/etc/**"]}, "search.include[1]"),
        ({"exclude": ["brain/../../x"]}, "search.exclude[0]"),
        ({"exclude": ["x" * 300]}, "search.exclude[0]"),
        ({"exclude": ["x/"] * 201}, "search.exclude"),
        ({"exclude": "templates/"}, "search.exclude"),
        ({"include": ["[z-a]"]}, "search.include[0]"),
        ({"refresh_seconds": -1}, "search.refresh_seconds"),
        ({"refresh_seconds": 1e999}, "search.refresh_seconds"),
        ({"refresh_seconds": "soon"}, "search.refresh_seconds"),
    ],
)
def test_a_hostile_search_section_is_refused_naming_the_key(tmp_path: Path, search: object, key: str) -> None:
    vault = _vault_with(tmp_path, {"search": search})
    with pytest.raises(ShardpyError) as err:
        index.refresh(vault)
    assert err.value.code == "SEARCH_CONFIG_INVALID" and key in err.value.message


def test_cli_refuses_a_hostile_search_section_without_a_traceback(tmp_path: Path) -> None:
    vault = _vault_with(tmp_path, {"search": {"include": ["../**", "/etc/**"], "refresh_seconds": -1}})
    proc = run_shardpy("index", vault, "--json", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    error = json.loads(proc.stdout)["error"]
    assert error["code"] == "SEARCH_CONFIG_INVALID" and "search.include[0]" in error["message"]


def test_patterns_that_backtrack_exponentially_cost_nothing_special(tmp_path: Path) -> None:
    # The child's timeout is a hang guard: on pathspec's regex, each of these names takes minutes.
    names = ("brain/Fine.md", *(f"brain/{'a' * 200}{k}.md" for k in range(3)))
    manifest = {
        "search": {"exclude": [BACKTRACKS, f"**/{BACKTRACKS}/"]},
        "frontmatter_required": {"t": {"required": [], "path_match": BACKTRACKS}},
    }
    vault = _vault_with(tmp_path, manifest, names)
    proc = run_shardpy("index", vault, "--json", cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["indexed"] == 4


SEGMENT = st.lists(st.sampled_from(["a", "b", "*", "?", "[ab]", "**"]), min_size=1, max_size=3).map("".join)
PATTERN = st.lists(SEGMENT, min_size=1, max_size=3).map("/".join)
PATH = st.lists(st.text("ab", min_size=1, max_size=3), min_size=1, max_size=4).map("/".join)


@settings(max_examples=500, deadline=None)
@given(pattern=PATTERN, path=PATH, folder=st.booleans())
def test_globs_match_what_pathspec_matches(pattern: str, path: str, folder: bool) -> None:
    """The backtracking-free matcher keeps gitignore's meaning (pathspec as the oracle), except a
    trailing ``/**`` on its own folder (gitignore: everything inside it, which is what is walked)."""
    import pathspec

    from shardpy.index.config import Globs

    assume(not pattern.rstrip("/").endswith("**"))
    ref = pathspec.GitIgnoreSpec.from_lines([pattern if pattern.startswith("**") else "/" + pattern])
    rel = path + "/" if folder else path
    assert Globs([pattern]).match_file(rel) == ref.match_file(rel)


# --- item 15: one note nested 400 deep ---------------------------------------------------------

DEEP = 400
DEEP_NOTE = "---\ntags: " + "[" * DEEP + "]" * DEEP + "\n---\n# Deep\n\nabyssal words\n"


@pytest.mark.parametrize(
    "text",
    [
        "tags: " + "[" * DEEP + "]" * DEEP + "\n",  # flow
        "- " * DEEP + "x\n",  # compact block sequences on one line
        "".join(" " * i + f"k{i}:\n" for i in range(DEEP)) + " " * DEEP + "x: 1\n",  # block mappings
        "a: &a [[[[[[[[[[1]]]]]]]]]]\n"  # aliases: ten deep each, nested through each other
        + "".join(f"a{i}: &a{i} [[[[[[[[[[*a{i - 1 if i else ''}]]]]]]]]]]\n" for i in range(10)),
    ],
    ids=["flow", "compact-block", "indented-block", "aliases"],
)
def test_deep_yaml_is_a_typed_error_before_any_walk(text: str) -> None:
    from shardpy.yamlsafe import YamlTooDeep, YamlTooLarge, load

    with pytest.raises(YamlTooDeep) as err:
        load(text)
    assert isinstance(err.value, YamlTooLarge)  # what every caller of load already handles


def test_the_c_loader_never_sees_a_document_deep_enough_to_crash_it(tmp_path: Path) -> None:
    # 100,000 levels overflow the C composer's stack (a segmentation fault): a child, so that on
    # code without the bound only this test dies.
    code = (
        "from shardpy.yamlsafe import YamlTooDeep, load\n"
        "try:\n    load('x: ' + '[' * 100000 + ']' * 100000)\nexcept YamlTooDeep:\n    print('refused')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], env=child_env(), capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "refused", proc.stderr[-500:]


def test_a_deep_note_is_plain_text_and_the_rest_of_the_vault_is_indexed(tmp_path: Path) -> None:
    from shardpy.notes.frontmatter import split_frontmatter

    assert split_frontmatter(DEEP_NOTE).state == "malformed"
    vault = tmp_path / "vault"
    (vault / "brain").mkdir(parents=True)
    (vault / "brain/Deep.md").write_text(DEEP_NOTE, encoding="utf-8")
    (vault / "brain/Fine.md").write_text("# Fine\n\nordinary words\n", encoding="utf-8")
    proc = run_shardpy("index", vault, "--json", cwd=tmp_path)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    assert report["indexed"] == 2
    assert [d[0] if isinstance(d, list) else d["path"] for d in report["degraded"]] == ["brain/Deep.md"]
    for query, path in (("ordinary", "brain/Fine.md"), ("abyssal", "brain/Deep.md")):
        # By words: a search by meaning would also list the other note, the nearer one second.
        proc = run_shardpy("search", query, "--vault", vault, "--mode", "lexical", "--json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert [h["path"] for h in json.loads(proc.stdout)["hits"]] == [path]


def test_mcp_search_and_expand_survive_a_deep_note_and_any_query(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    (world.vault / "brain/Deep.md").write_text(DEEP_NOTE, encoding="utf-8")

    async def scenario() -> None:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            found = await s.call("search", {"query": "Caches", "mode": "lexical"})  # by words: one note
            assert [h["path"] for h in found["hits"]] == ["brain/Gotchas.md"]
            assert (await s.call("search", {"query": "Caches"}))["hits"][0]["path"] == "brain/Gotchas.md"
            assert (await s.call("expand", {"note": "brain/Gotchas.md"}))["path"] == "brain/Gotchas.md"
            deep = await s.call("search", {"query": "abyssal", "mode": "lexical"})
            assert [h["path"] for h in deep["hits"]] in ([], ["brain/Deep.md"])
            for query in ('"', "*", "(" * 500):  # item 12 through the server
                answer = await s.call("search", {"query": query})
                assert answer["hits"] == []

    anyio.run(scenario)


def test_a_deep_copier_yml_is_a_typed_error(tmp_path: Path) -> None:
    # copier reads copier.yml with PyYAML (its composer recurses per level): bounded first.
    template = tmp_path / "tpl"
    template.mkdir()
    deep = "[" * 5000 + "]" * 5000
    (template / "copier.yml").write_text(f"name:\n  type: str\n  default: {deep}\n", encoding="utf-8")
    (template / "a.md").write_text("a\n", encoding="utf-8")
    env = {"COPIER_SETTINGS_PATH": str(tmp_path / "none.yml")}
    proc = run_shardpy("install", template, tmp_path / "dest", "--defaults", "--json", cwd=tmp_path, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["error"]["code"] == "COPIER_CONFIG_INVALID"


def test_a_deep_yaml_file_a_copier_template_includes_is_a_typed_error(tmp_path: Path) -> None:
    template = tmp_path / "tpl"
    template.mkdir()
    (template / "copier.yml").write_text("--- !include deep.yml\n---\nname: w\n", encoding="utf-8")
    (template / "deep.yml").write_text("a: " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    env = {"COPIER_SETTINGS_PATH": str(tmp_path / "none.yml")}
    proc = run_shardpy("install", template, tmp_path / "dest", "--defaults", "--json", cwd=tmp_path, env=env)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["error"]["code"] == "COPIER_RENDER_FAILED"
