"""Invariant 1: `install --defaults` equals a clone of the source minus the
exclusions, plus only `.shardmind/` and `shard-values.yaml` (CONTRACT §6).

The expectation comes from git's own gitignore engine and the Tier-1 list
(tests/shardkit.clone_expectation), never from shardpy's walk; a few
paths are also asserted by hand so the oracle itself is checked.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.shardkit import (
    Cli,
    assert_equals_clone,
    clone_expectation,
    describe,
    make_shard,
    read_json,
    run_shardpy,
    sha256,
    write_tree,
)

BINARY = bytes(range(256)) + b"\xff\xfe{{ not a template }}\x00"
STATIC_WITH_SYNTAX = "title: {{title}}\n{% raw %}{{ keep }}{% endraw %}\n{% if unclosed %}\n{#\n"

PERSONALIZE = """\
import json, os, pathlib
ctx = json.load(open(os.environ["SHARDPY_HOOK_CONTEXT"]))
p = pathlib.Path("Home.md")
p.write_text(p.read_text() + "personalised for " + ctx["values"]["user_name"] + "\\n")
"""

SCHEMA = {
    "values": {
        "user_name": {"type": "string", "default": "", "message": "Your name", "group": "setup"},
        "purpose": {
            "type": "select",
            "default": "engineering",
            "options": [{"value": "engineering"}, {"value": "research"}],
            "message": "Purpose",
            "group": "setup",
        },
    },
    "groups": [{"id": "setup", "label": "Setup"}],
    "modules": {
        "brain": {"label": "Brain", "paths": ["brain/"], "removable": False},
        "extras": {"label": "Extras", "paths": ["extras/"], "commands": ["om-extra"], "removable": True},
        "perf": {"label": "Perf", "paths": ["perf/"], "agents": ["brag"], "removable": True},
    },
}

SHARD_FILES: dict[str, str | bytes] = {
    # templates (rendered; only existence is promised)
    "Home.md.njk": "---\ntitle: Home of {{ user_name }}\ndate: '{{ install_date }}'\n---\n# {{ purpose }}\n",
    ".claude/settings.json.njk": '{"purpose": "{{ purpose }}", "year": {{ year }}}\n',
    # static files, copied byte for byte even when they look like templates
    "brain/North Star.md": "# North Star\n",
    "brain/static.md": STATIC_WITH_SYNTAX,
    "assets/blob.bin": BINARY,
    "extras/tool.md": "extra\n",
    "perf/Brag Doc.md": "brag\n",
    ".claude/commands/om-extra.md": "cmd\n",
    ".claude/agents/brag.md": "agent\n",
    ".claude/agents/other.md": "agent\n",
    "vault-manifest.json": '{"infrastructure": ["Home.md"], "user_content_roots": ["brain/"]}\n',
    # Tier 1: never installed (case-insensitive)
    ".git/HEAD": "ref: refs/heads/main\n",
    ".git/config": "[core]\n",
    ".github/workflows/ci.yml": "on: push\n",
    ".GitHub/ISSUE_TEMPLATE.md": "case variant\n",
    ".obsidian/app.json": "{}\n",
    ".obsidian/workspace.json": "{}\n",
    ".obsidian/workspace-mobile.json": "{}\n",
    ".obsidian/graph.json": "{}\n",
    ".obsidian/Workspace.JSON": "{}\n",
    "nested/checkout/.git": "gitdir: ../../.git/worktrees/x\n",
    "nested/checkout/file.md": "kept\n",
    # author exclusions: root file, negation, nested files (nearer wins)
    "scratch/todo.md": "ignored dir\n",
    "root-only.md": "ignored (anchored)\n",
    "notes/root-only.md": "kept: the pattern is anchored to the root\n",
    "notes/a.md": "a\n",
    "notes/build.log": "ignored by *.log\n",
    "notes/important.log": "re-included by !important.log\n",
    "notes/private/secret.md": "ignored by notes/.shardmindignore\n",
    "notes/private/shared.md": "git cannot re-include inside an excluded dir\n",
    "notes/sub/.shardmindignore": "!*.log\n",
    "notes/sub/trace.log": "re-included by the nearer file\n",
    "notes/.shardmindignore": "private/\n!private/shared.md\n",
    "CONTRIBUTING.md": "repo-only, excluded from the source root's ignore file\n",
    "draft.tmp": "excluded from the source root's ignore file\n",
    # a template that the author excludes must not render either
    "scratch/broken.md.njk": "{% if %}",
}

ROOT_IGNORE = "scratch/\n*.log\n!important.log\n/root-only.md\n"
SOURCE_ROOT_IGNORE = "shard/CONTRIBUTING.md\n*.tmp\n"


def _fixture(source_root: Path, *, shard_dir: str = "shard") -> Path:
    write_tree(source_root, {".shardmindignore": SOURCE_ROOT_IGNORE, "README-repo.md": "not the shard\n"})
    return make_shard(
        source_root / shard_dir,
        files=SHARD_FILES,
        schema=SCHEMA,
        ignore=ROOT_IGNORE,
        hooks={"personalize": PERSONALIZE},
    )


def _check_oracle(expected: dict[str, str | None]) -> None:
    """Hand-written facts the git oracle must agree with (guards the oracle)."""
    must = {
        "Home.md",
        ".claude/settings.json",
        "brain/static.md",
        "assets/blob.bin",
        ".obsidian/app.json",
        "notes/root-only.md",
        "notes/important.log",
        "notes/sub/trace.log",
        "nested/checkout/file.md",
        ".shardmindignore",
        "notes/.shardmindignore",
    }
    never = {
        ".git/HEAD",
        ".github/workflows/ci.yml",
        ".GitHub/ISSUE_TEMPLATE.md",
        ".obsidian/workspace.json",
        ".obsidian/Workspace.JSON",
        ".obsidian/graph.json",
        "nested/checkout/.git",
        "scratch/todo.md",
        "scratch/broken.md",
        "root-only.md",
        "notes/build.log",
        "notes/private/secret.md",
        "notes/private/shared.md",
        "CONTRIBUTING.md",
        "draft.tmp",
        "Home.md.njk",
    }
    assert must <= set(expected), sorted(must - set(expected))
    assert not never & set(expected), sorted(never & set(expected))
    assert not any(p.startswith(".shardmind/") for p in expected)


def test_defaults_install_equals_a_clone(tmp_path: Path, cli: Cli) -> None:
    source = tmp_path / "src"
    shard = _fixture(source)
    expected = clone_expectation(source, shard)
    _check_oracle(expected)

    vault = tmp_path / "vault"
    data = cli.install_json(f"{source}//shard", vault, "--defaults", cwd=tmp_path)

    assert_equals_clone(vault, expected)
    assert (vault / "brain/static.md").read_text() == STATIC_WITH_SYNTAX
    assert (vault / "assets/blob.bin").read_bytes() == BINARY
    assert data["hooks"] == [], "personalize must not run on a defaults install"
    assert data["counts"]["skipped_by_module"] == 0
    state = read_json(vault / ".shardmind/state.json")
    assert set(state["files"]) == set(expected)
    assert state["modules"] == {"brain": "included", "extras": "included", "perf": "included"}


def test_source_root_holding_the_shard_one_level_down(tmp_path: Path, cli: Cli) -> None:
    source = tmp_path / "src"
    shard = _fixture(source)
    expected = clone_expectation(source, shard)

    vault = tmp_path / "vault"
    cli.install_json(source, vault, "--defaults", cwd=tmp_path)
    assert_equals_clone(vault, expected)
    assert not (vault / "README-repo.md").exists()
    assert not (vault / "CONTRIBUTING.md").exists(), "the source root's .shardmindignore applies"


def test_shard_at_the_source_root(tmp_path: Path, cli: Cli) -> None:
    shard = make_shard(tmp_path / "shard", files=SHARD_FILES, schema=SCHEMA, ignore=ROOT_IGNORE)
    expected = clone_expectation(shard)
    assert "CONTRIBUTING.md" in expected and "draft.tmp" in expected  # no ancestor ignore file here

    vault = tmp_path / "vault"
    cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    assert_equals_clone(vault, expected)


def test_relative_source_and_dest_in_a_real_process(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shard = _fixture(source, shard_dir="deep")
    expected = clone_expectation(source, shard)

    proc = run_shardpy("install", "src//deep", "vault", "--defaults", cwd=tmp_path)
    assert proc.returncode == 0, describe(proc)
    assert_equals_clone(tmp_path / "vault", expected)
    assert "Installed" in proc.stdout


def test_excluded_module_is_exactly_the_clone_minus_its_files(tmp_path: Path, cli: Cli) -> None:
    source = tmp_path / "src"
    shard = _fixture(source)
    expected = clone_expectation(source, shard)
    perf = {"perf/Brag Doc.md", ".claude/agents/brag.md"}
    vault = tmp_path / "vault"
    data = cli.install_json(source, vault, "--defaults", "--exclude-module", "perf", cwd=tmp_path)
    assert_equals_clone(vault, {p: h for p, h in expected.items() if p not in perf})
    assert sorted(data["skipped_by_module"]["perf"]) == sorted(perf)
    assert read_json(vault / ".shardmind/state.json")["modules"]["perf"] == "excluded"


def test_bundled_shard_equals_a_clone(tmp_path: Path, cli: Cli) -> None:
    from shardpy.bundled import BUNDLED_SUBDIR, bundled_source_root

    root = bundled_source_root()
    expected = clone_expectation(root, root / BUNDLED_SUBDIR)
    vault = tmp_path / "vault"
    cli.install_json(vault, "--defaults", cwd=tmp_path)
    # The flagship's bootstrap hook runs `git init`: a hook's own files, not shard output.
    shutil.rmtree(vault / ".git", ignore_errors=True)
    assert_equals_clone(vault, expected)


def test_values_file_records_every_default(tmp_path: Path, cli: Cli) -> None:
    source = tmp_path / "src"
    _fixture(source)
    vault = tmp_path / "vault"
    cli.install_json(source, vault, "--defaults", cwd=tmp_path)
    text = (vault / "shard-values.yaml").read_text()
    assert text.startswith("#"), "the values file is commented"
    assert "Your name" in text
    from shardpy.shard.values import read_values_file

    assert read_values_file(vault / "shard-values.yaml") == {"user_name": "", "purpose": "engineering"}
    assert sha256((vault / ".shardmind/templates/Home.md.njk").read_bytes()) == sha256(
        SHARD_FILES["Home.md.njk"].encode()  # type: ignore[union-attr]
    )
