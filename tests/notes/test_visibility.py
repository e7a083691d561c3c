"""The one walker and admission rule (shardpy/notes/visibility.py, issue 25): where the index and
the server read a note differently, each case below failed on main before they both asked it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardpy.index.config import IndexConfig
from shardpy.index.walk import walk
from shardpy.notes import visibility
from shardpy.serve import tools
from tests.shardkit import run_shardpy
from tests.sync.kit import STATE


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _vault(tmp_path: Path, notes: dict[str, str], **manifest: object) -> Path:
    vault = tmp_path / "vault"
    vault.mkdir()
    data = {"memory_root": "memories", "mcp_exposed_roots": ["brain/"], **manifest}
    (vault / "vault-manifest.json").write_text(json.dumps(data), encoding="utf-8")
    for rel, text in notes.items():
        _write(vault, rel, text)
    return vault.resolve()


def _served(vault: Path) -> set[str]:
    return set(tools.Served.open(vault).exposure.notes())


def _search(vault: Path, query: str, env: dict[str, str]) -> list[str]:
    done = run_shardpy("search", query, "--json", "--mode", "lexical", cwd=vault, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return sorted(h["path"] for h in json.loads(done.stdout)["hits"])


def test_cli_search_hides_a_soft_deleted_note_as_the_server_does(tmp_path: Path) -> None:
    """Issue 30: `shardpy rm` hides a note from search and every MCP tool. The server withheld it;
    `shardpy search` listed it until it asked the same rule."""
    gone = "---\ntags: [x]\n---\n# Gone\n\nrocket gone\n"
    vault = _vault(tmp_path, {"brain/Keep.md": "# Keep\n\nrocket keep\n", "brain/Gone.md": gone})
    _write(vault, ".shardmind/state.json", STATE)  # an installed vault: `shardpy rm` works in one
    env = {"SHARDPY_CACHE_DIR": str(tmp_path / "cache")}
    assert _search(vault, "rocket", env) == ["brain/Gone.md", "brain/Keep.md"]
    done = run_shardpy("rm", "brain/Gone.md", cwd=vault, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _search(vault, "rocket", env) == ["brain/Keep.md"]
    assert _served(vault) == {"brain/Keep.md"}
    done = run_shardpy("restore", "brain/Gone.md", cwd=vault, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _search(vault, "rocket", env) == ["brain/Gone.md", "brain/Keep.md"]


@pytest.mark.parametrize(
    "head",
    [
        "\ufeff---\ntags: [private]\n---\n",  # a byte-order mark before the fence
        "---\ntags: work, private\n---\n",  # one string of tags, as the index splits it
        "---\ntags: '#private'\n---\n",
        "---\ntags: '#ideas, #PRIVATE'\n---\n",  # every tag's # dropped (hypothesis found it)
    ],
)
def test_a_private_note_is_withheld_however_its_tags_are_written(tmp_path: Path, head: str) -> None:
    vault = _vault(tmp_path, {"brain/Open.md": "# Open\n", "brain/Secret.md": head + "# Secret\n\nhunter2\n"})
    served = tools.Served.open(vault).exposure
    assert set(served.notes()) == {"brain/Open.md"}
    assert served.may_read("brain/Secret.md") is None


def test_one_depth_bound_for_the_index_and_the_server(tmp_path: Path) -> None:
    """The server walked 16 folders below each root, the index without a bound: a deep note was
    indexed but never listed. Now both stop at visibility.MAX_DEPTH folders below the vault."""
    deepest = "brain/" + "/".join(f"d{k}" for k in range(visibility.MAX_DEPTH - 1)) + "/Deep.md"
    too_deep = deepest.replace("/Deep.md", "/x/TooDeep.md")
    vault = _vault(tmp_path, {deepest: "# Deep\n", too_deep: "# Too deep\n", "brain/Top.md": "# Top\n"})
    indexed = set(walk(vault, IndexConfig.for_vault(vault))[0])
    assert indexed == {deepest, "brain/Top.md"}
    assert _served(vault) == indexed
    served = tools.Served.open(vault).exposure
    assert served.may_read(deepest) is not None and served.may_read(too_deep) is None


def test_the_rule_on_paper() -> None:
    rule = visibility.Rule.of(["Secret", "people/private/", "SOUL.md"], "Memories")
    covered = ["brain/a.md", "people/privates/a.md", "brain/b.markdown", "brain/secretive.md"]
    withheld = [
        "secret/a.md",
        "SECRET/a.md",
        "brain/secret/a.md",  # a folder name anywhere, as a file name is
        "People/Private/b.md",
        "brain/soul.md",
        "credentials/k.md",
        "brain/Transcripts/t.md",
        "brain/a.sync-conflict-20261101-ABC.md",
        "brain/a (conflicted copy).md",
        ".obsidian/a.md",
        "brain/.a.md",
        "brain/a.txt",
        "brain/../a.md",
    ]
    assert [p for p in covered if not rule.covers(p)] == []
    assert [p for p in withheld if rule.covers(p)] == []
    assert rule.in_memory("MEMORIES/2026/a.md") and not rule.in_memory("memories-x/a.md")


def test_deleted_reads_only_a_true_disabled_key() -> None:
    assert visibility.deleted("---\ndisabled: true\ndisabled_at: 2026-11-01T00:00:00Z\n---\nbody\n")
    assert visibility.deleted("\ufeff---\r\ndisabled: true\r\n---\r\n")
    for text in ["---\ndisabled: yes\n---\n", "---\ndisabled: 'true'\n---\n", "# x\n\ndisabled: true\n"]:
        assert not visibility.deleted(text), text
