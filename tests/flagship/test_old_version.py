"""The derived 0.9.0 is a coherent release of its own, differs from 1.0.0 in
exactly the advertised ways, and migrations/1.0.0.yaml carries it forward."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.flagship.old_version import (
    CLAUDE_PARAGRAPH_0_9_0,
    CLAUDE_PARAGRAPH_1_0_0,
    OLD_VERSION,
    add_user_notes,
    edit_claude_md,
    make_flagship_0_9_0,
    make_flagship_history,
    renames_1_0_0,
)
from tests.flagship.shardtools import (
    REPO_ROOT,
    SHARD_ROOT,
    claim,
    installable_files,
    lay_out_vault,
    load_yaml,
    no_bytecode,
    schema,
    shipped_text,
    strip_njk,
)

with no_bytecode():
    sys.path.insert(0, str(SHARD_ROOT / ".claude" / "scripts"))
    from vaultlib.notes import LinkIndex, check_note
    from vaultlib.vault import glob_match


@pytest.fixture(scope="module")
def old_source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_flagship_0_9_0(tmp_path_factory.mktemp("flagship") / "agent-vault-0.9.0")


def _files(source: Path) -> list[str]:
    return installable_files(source, source / "shard-template")


def test_layout_of_the_source_root(old_source: Path) -> None:
    assert (old_source / "shard-template/.shardmind/shard.yaml").is_file()
    assert (old_source / "migrations").is_dir() and not list((old_source / "migrations").iterdir())
    assert (old_source / ".shardmindignore").read_bytes() == (REPO_ROOT / ".shardmindignore").read_bytes()


def test_identity_says_0_9_0(old_source: Path) -> None:
    shard = old_source / "shard-template"
    m = load_yaml(shard / ".shardmind/shard.yaml")
    assert m["version"] == OLD_VERSION
    current = load_yaml(SHARD_ROOT / ".shardmind/shard.yaml")
    assert m["hooks"]["bootstrap"]["fingerprint"] != current["hooks"]["bootstrap"]["fingerprint"]
    vm = json.loads((shard / "vault-manifest.json").read_text())
    assert vm["version"] == OLD_VERSION and list(vm["version_fingerprints"]) == [OLD_VERSION]
    assert "## 1.0.0" not in (shard / "CHANGELOG.md").read_text()


def test_the_renames_are_reversed_everywhere(old_source: Path) -> None:
    shard = old_source / "shard-template"
    files = _files(old_source)
    for r in renames_1_0_0():
        assert r.old in files and r.new not in files
        for path in shard.rglob("*"):
            if path.is_file() and path.suffix in {".md", ".json", ".yaml", ".py", ".njk"}:
                text = path.read_text(encoding="utf-8")
                if path.name == "vault-manifest.json":  # its fingerprints name what 0.9.0 lacks
                    text = json.dumps(
                        {k: v for k, v in json.loads(text).items() if k != "version_fingerprints"}
                    )
                assert r.new_stem not in text, (path, r.new_stem)
    assert "standup" in schema(shard)["modules"]["claude"]["commands"]


def test_one_value_fewer_and_template_still_renders(old_source: Path) -> None:
    shard = old_source / "shard-template"
    sch = schema(shard)
    assert list(sch["values"]) == ["user_name", "org_name", "vault_purpose"]
    assert sch["migrations"] == []
    assert "qmd_enabled" not in (shard / ".mcp.json.njk").read_text()


def test_claude_md_paragraph(old_source: Path) -> None:
    old = (old_source / "shard-template/CLAUDE.md").read_text()
    new = (SHARD_ROOT / "CLAUDE.md").read_text()
    assert CLAUDE_PARAGRAPH_0_9_0 in old and CLAUDE_PARAGRAPH_1_0_0 not in old
    assert CLAUDE_PARAGRAPH_1_0_0 in new


def test_old_release_is_self_consistent(old_source: Path) -> None:
    shard = old_source / "shard-template"
    sch = schema(shard)
    files = [strip_njk(f) for f in _files(old_source)]
    vm = json.loads((shard / "vault-manifest.json").read_text())
    for rel in files:
        if rel.startswith((".claude/commands/", ".claude/agents/")):
            assert claim(rel, sch["modules"]) is not None, rel
    for path in vm["version_fingerprints"][OLD_VERSION]["exists"]:
        assert path in files
    for path in vm["version_fingerprints"][OLD_VERSION]["missing"]:
        assert path not in files
    index = LinkIndex(files)
    for rel in files:
        user = any(glob_match(p, rel) for p in vm["user_content_roots"])
        if rel.endswith(".md") and (user or rel == "Home.md"):
            problems = check_note(
                shipped_text(rel, shard), rel, vm["frontmatter_required"] if user else {}, index
            )
            assert problems == [], (rel, problems)


def test_forward_migration_restores_the_1_0_0_file_set(old_source: Path) -> None:
    old = set(_files(old_source))
    moved = {next((r.new for r in renames_1_0_0() if r.old == f), f) for f in old}
    assert moved == set(installable_files())


def test_fingerprints_tell_the_versions_apart(old_source: Path, tmp_path: Path) -> None:
    """What adopt relies on: each release's vault matches its own fingerprint only."""
    fingerprints = json.loads((SHARD_ROOT / "vault-manifest.json").read_text())["version_fingerprints"]
    old_vault = lay_out_vault(
        tmp_path / "old", state=False, source_root=old_source, shard_root=old_source / "shard-template"
    ).root
    new_vault = lay_out_vault(tmp_path / "new", state=False).root

    def matches(vault: Path) -> list[str]:
        return [
            v
            for v, fp in fingerprints.items()
            if all((vault / p).exists() for p in fp["exists"])
            and not any((vault / p).exists() for p in fp["missing"])
        ]

    assert matches(old_vault) == [OLD_VERSION]
    assert matches(new_vault) == ["1.0.0"]


def _tree_hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(root).parts and "__pycache__" not in p.parts
    }


def test_git_history_has_both_tags(tmp_path: Path) -> None:
    repo = make_flagship_history(tmp_path / "agent-vault")
    tags = subprocess.run(
        ["git", "-C", str(repo), "tag"], capture_output=True, text=True, check=True
    ).stdout.split()
    assert tags == ["v0.9.0", "v1.0.0"]
    head = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "HEAD", "v1.0.0^{commit}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert head[0] == head[1]
    old_manifest = subprocess.run(
        ["git", "-C", str(repo), "show", "v0.9.0:shard-template/.shardmind/shard.yaml"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "\nversion: 0.9.0\n" in old_manifest
    # HEAD is the repository's real shard, byte for byte.
    expected = {f"shard-template/{k}": v for k, v in _tree_hashes(SHARD_ROOT).items()}
    expected.update({f"migrations/{k}": v for k, v in _tree_hashes(REPO_ROOT / "migrations").items()})
    expected[".shardmindignore"] = hashlib.sha256((REPO_ROOT / ".shardmindignore").read_bytes()).hexdigest()
    assert _tree_hashes(repo) == expected
    status = subprocess.run(
        ["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True, check=True
    ).stdout
    assert status == ""


def test_user_side_helpers(tmp_path: Path) -> None:
    vault = lay_out_vault(tmp_path / "v").root
    notes = add_user_notes(vault, 50)
    assert len(notes) == 50 and len({n.parent for n in notes}) == 5
    texts = [n.read_text() for n in notes]
    assert sum("[[Decisions Log]]" in t for t in texts) == 17
    assert sum("[[Decisions Log|the decision log]]" in t for t in texts) == 17
    assert sum("[[Decisions Log#Decisions]]" in t for t in texts) == 16
    added = edit_claude_md(vault)
    assert (vault / "CLAUDE.md").read_text().endswith(added)
