"""Item 1: every YAML input is bounded. An alias bomb (nine levels of
nine-fold aliases: ~490 million nodes from 28 written) is refused with a
typed error naming the file and line, quickly and without the memory
an expansion takes; the same for a document that contains itself."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardpy import yamlsafe
from shardpy.errors import ShardpyError
from shardpy.merge.frontmatter import merge_frontmatter
from shardpy.notes.frontmatter import split_frontmatter
from shardpy.shard.migrations import load_file_migrations
from shardpy.shard.values import read_values_file
from tests.hardening.test_yaml_bounds_data import BOMB, BOMB_LINE, bomb_under
from tests.shardkit import Cli, make_shard


def test_the_bomb_is_refused_by_the_low_level_loader_in_few_megabytes() -> None:
    from ruamel.yaml import YAML

    for loader in (None, YAML(typ="rt"), YAML(typ="safe", pure=True)):
        tracemalloc.start()
        with pytest.raises(yamlsafe.YamlTooLarge) as info:
            yamlsafe.load(BOMB, loader)
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert info.value.line == BOMB_LINE
        assert peak < 8 * 1024 * 1024, peak


def test_a_self_containing_document_is_refused() -> None:
    with pytest.raises(yamlsafe.YamlTooLarge, match="contain itself") as info:
        yamlsafe.load("top: 1\nx: &x [1, *x]\n")
    assert info.value.line == 2


def test_ordinary_aliases_and_shared_scalars_still_load() -> None:
    text = "base: &b {a: 1, b: [x, y]}\none: *b\ntwo: *b\nmany: [" + ",".join(["1"] * 150_000) + "]\n"
    data = yamlsafe.load(text)
    assert data["two"] == {"a": 1, "b": ["x", "y"]}
    assert len(data["many"]) == 150_000


def test_a_long_string_repeated_by_aliases_weighs_its_length() -> None:
    text = "s: &s " + "x" * 200_000 + "\nl: [" + ",".join(["*s"] * 40) + "]\n"
    with pytest.raises(yamlsafe.YamlTooLarge):
        yamlsafe.load(text)


@settings(max_examples=40, deadline=None)
@given(
    st.recursive(
        st.integers() | st.text(alphabet="ab *&!", max_size=5),
        lambda c: st.lists(c, max_size=4),
        max_leaves=30,
    )
)
def test_documents_without_aliases_load_as_the_plain_loader_reads_them(doc: object) -> None:
    # Quoted `*` and `&` are text, not aliases: the document loads unchanged.
    import json

    text = json.dumps({"k": doc})
    assert yamlsafe.load(text) == {"k": doc}


@pytest.mark.parametrize("where", ["shard.yaml", "shard-schema.yaml"])
def test_install_refuses_a_bomb_in_the_manifest_or_schema(tmp_path: Path, cli: Cli, where: str) -> None:
    shard = make_shard(tmp_path / "shard", files={"a.md": "a\n"})
    (shard / ".shardmind" / where).write_text(bomb_under(shard / ".shardmind" / where))
    res = cli.run("install", shard, tmp_path / "vault", "--defaults", "--json")
    assert res.exit_code == 1, res.output
    err = res.json()["error"]
    code = "SHARD_MANIFEST_INVALID" if where == "shard.yaml" else "SHARD_SCHEMA_INVALID"
    assert err["code"] == code
    assert err["path"] == f".shardmind/{where}"
    assert err["line"] is not None
    assert not (tmp_path / "vault").exists()


def test_a_values_file_bomb_is_a_typed_error(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "shard", files={"a.md": "a\n"})
    answers = tmp_path / "answers.yaml"
    answers.write_text(BOMB)
    res = cli.run("install", shard, tmp_path / "vault", "--defaults", "--values", answers, "--json")
    assert res.json()["error"]["code"] == "VALUES_FILE_INVALID"
    assert res.json()["error"]["line"] == BOMB_LINE
    with pytest.raises(ShardpyError) as info:
        read_values_file(answers)
    assert info.value.code == "VALUES_FILE_INVALID"


def test_a_migration_bomb_is_a_typed_error(tmp_path: Path) -> None:
    folder = tmp_path / "migrations"
    folder.mkdir()
    (folder / "2.0.0.yaml").write_text(BOMB)
    with pytest.raises(ShardpyError) as info:
        load_file_migrations(folder)
    assert info.value.line == BOMB_LINE


def test_an_imported_note_with_a_bomb_is_malformed_not_expanded() -> None:
    split = split_frontmatter(f"---\n{BOMB}---\nbody\n")
    assert split.state == "malformed"
    assert "aliases expand" in split.error


def test_a_merge_of_a_bomb_falls_back_instead_of_expanding() -> None:
    result = merge_frontmatter("a: 1\n", BOMB, "a: 2\n")
    assert result.inner is None
    assert "refused" in (result.fallback_reason or "")
