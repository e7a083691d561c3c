"""Issue 24, items 0-3, 6, 7: what `shardpy serve` shows a session of another repository.

Driven over stdio by the MCP SDK's own client (tests/serve/kit.py). The vault is the serve
kit's, with the flagship's shipped exposure (`mcp_exposed_roots: []`), a never-exposed folder,
folders the index skips, and links from an exposed folder to everything withheld. Every withheld
file carries a ``MARK-`` string that no answer may contain.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from tests.serve.kit import MANIFEST, Shared, World, build_world, connect, memory, shared, uri
from tests.shardkit import run_shardpy

BETA_PASSWORD = "memories/2026/11/2026-11-09 Beta password.md"
MEMORY_LINK = "memories/2026/11/2026-11-10 Linked.md"
NIGHTJAR = "memories/2026/11/2026-11-08 Beta launch codename NIGHTJAR.md"

WITHHELD_FILES: dict[str, str] = {
    "CLAUDE.md": "# Claude\n\nMARK-CLAUDE instructions for the vault's own sessions\n",
    "README.md": "# Readme\n\nMARK-README\n",
    "work/Old.md": "# Old\n\nMARK-WORKOLD work/ was never declared, only work/active/\n",
    "SOUL.md": "# Soul\n\nMARK-SOUL never exposed\n",
    "secrets/keys.md": "# Keys\n\napi key sk-live-4242 MARK-SECRET\n",
    "work/active/credentials/token.md": "# Token\n\nMARK-CRED\n",
    "work/active/transcripts/t.md": "# Transcript\n\nMARK-TRANSCRIPT\n",
    "brain/Gotchas.sync-conflict-20261101-120000-ABCDEFG.md": "# Gotchas\n\nMARK-CONFLICT\n",
    "brain/Gotchas (conflicted copy 2026-11-01).md": "# Gotchas\n\nMARK-CONFLICT2\n",
    BETA_PASSWORD: memory("project", ["beta"], date="2026-11-09")
    + "# Beta password\n\npassword hunter2 MARK-BETA\n",
    NIGHTJAR: "---\nscope: sideways\nprojects: [beta]\n---\n# NIGHTJAR\n\nMARK-NIGHTJAR\n",
    ".shardmind/state.json": '{"MARK-STATE": true}\n',
}
# brain/<name> -> its target, relative to brain/
LINKS: dict[str, str] = {
    "mem-link.md": f"../{BETA_PASSWORD}",
    "soul-link.md": "../SOUL.md",
    "secret-link.md": "../secrets/keys.md",
    "state-link.md": "../.shardmind/state.json",
    "audit-link.md": "../.shardmind/serve-audit.jsonl",
    "claude-link.md": "../CLAUDE.md",
    "private-link.md": "Secret Plans.md",
    "chain1.md": "chain2.md",
    "chain2.md": "../secrets/keys.md",
    "loop1.md": "loop2.md",
    "loop2.md": "loop1.md",
}
# The kit's own notes the derived default serves (brain/Alias.md and work/active/Cross.md are links).
SERVED = {
    "brain/North Star.md",
    "brain/Gotchas.md",
    "reference/Ref.md",
    "work/Index.md",
    "work/active/Atlas.md",
}


def hostile_world(tmp: Path, **manifest: Any) -> World:
    world = build_world(tmp)
    data = {**MANIFEST, "mcp_exposed_roots": [], "mcp_never_expose": ["SOUL.md", "secrets/"], **manifest}
    (world.vault / "vault-manifest.json").write_text(json.dumps(data), encoding="utf-8")
    for rel, text in WITHHELD_FILES.items():
        path = world.vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (world.vault / ".shardmind/serve-audit.jsonl").write_text('{"MARK-AUDIT": 1}\n', encoding="utf-8")
    for name, target in LINKS.items():
        os.symlink(target, world.vault / "brain" / name)
    os.symlink("2026-11-01 Everyone.md", world.vault / MEMORY_LINK)  # a link is never a memory either
    return world


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Shared]]:
    world = hostile_world(tmp_path_factory.mktemp("exposure"))
    with shared(world, cwd=world.repos["web"], roots=[uri(world.repos["atlas"])]) as session:
        yield world, session


def _listed(s: Shared) -> set[str]:
    from urllib.parse import unquote

    result = s.run(s.session.client.list_resources)
    return {unquote(str(r.uri).removeprefix("vault://note/")) for r in result.resources}


def _no_marker(answer: Any) -> None:
    text = json.dumps(answer, default=str, ensure_ascii=False)
    assert "MARK-" not in text and "hunter2" not in text and "sk-live" not in text, text[:2000]


def _search(s: Shared, query: str, **extra: Any) -> dict[str, Any]:
    """A search's answer without the echo of the caller's own query."""
    answer = s.call("search", {"query": query, **extra})
    answer.pop("query")
    _no_marker(answer)
    return answer


def _refused(s: Shared, call: Any, *args: Any) -> None:
    with pytest.raises(MCPError) as caught:
        answer = s.run(call, *args)
        _no_marker(answer)  # only reached when it was answered: the failure names what leaked
    assert "SERVE_NOTE_NOT_FOUND" in str(caught.value) or "SERVE_BAD_TEXT" in str(caught.value)
    _no_marker(str(caught.value))


# -- item 0: the default is the declared user content, not the whole vault --------------------


def test_default_exposure_is_the_declared_user_content(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    assert _listed(s) == SERVED
    health = s.call("health")
    assert health["exposure"] == {
        "source": "derived",
        "roots": ["brain", "reference", "work/Index.md", "work/active"],  # perf/ is absent; memories stripped
    }
    for words in ("MARK-CLAUDE", "MARK-README", "MARK-WORKOLD"):
        assert _search(s, words, mode="lexical")["hits"] == [], words
        # By meaning a search always has nearest notes (issue 29): only served ones, no withheld text.
        assert {h["path"] for h in _search(s, words)["hits"]} <= SERVED, words
    # The owner's own search is not narrowed by the exposure list.
    own = run_shardpy("search", "MARK-CLAUDE", "--vault", world.vault, "--json", cwd=world.root)
    assert own.returncode == 0, own.stderr
    assert "CLAUDE.md" in own.stdout


def test_fallback_and_manifest_sources(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    data = {k: v for k, v in MANIFEST.items() if k not in ("mcp_exposed_roots", "user_content_roots")}
    (world.vault / "vault-manifest.json").write_text(json.dumps(data), encoding="utf-8")
    (world.vault / "CLAUDE.md").write_text("# Claude\n\nMARK-CLAUDE\n", encoding="utf-8")

    async def scenario() -> None:
        async with connect(world, cwd=world.repos["atlas"]) as session:
            health = await session.call("health")
            assert health["exposure"] == {"source": "fallback", "roots": ["brain", "reference"]}
            listed = await session.client.list_resources()
            assert {str(r.uri) for r in listed.resources} == {
                "vault://note/brain/North%20Star.md",
                "vault://note/brain/Gotchas.md",
                "vault://note/reference/Ref.md",
            }
        (world.vault / "vault-manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
        async with connect(world, cwd=world.repos["atlas"]) as session:
            health = await session.call("health")
            assert health["exposure"] == {
                "source": "manifest",
                "roots": ["brain", "work/active", "work/Index.md"],
            }

    anyio.run(scenario)


# -- item 1: links are never served ----------------------------------------------------------


def test_links_are_never_served(atlas: tuple[World, Shared]) -> None:
    _world, s = atlas
    client = s.session.client
    listed = _listed(s)
    for name in [*LINKS, "Alias.md", "Leak.md"]:
        rel = f"brain/{name}"
        assert rel not in listed
        _refused(s, s.session.call, "expand", {"note": rel})
        _refused(s, s.session.call, "expand", {"note": f"[[{name[:-3]}]]"})
        _refused(s, client.read_resource, "vault://note/" + rel)
    recalled = [m["path"] for m in s.call("recall", {"limit": 50})["memories"]]
    assert MEMORY_LINK not in recalled and "memories/2026/11/2026-11-01 Everyone.md" in recalled
    # The reproduction, word for word: beta's memory through a link, as atlas.
    _refused(s, s.session.call, "expand", {"note": "brain/mem-link.md"})
    for words in ("hunter2", "MARK-SOUL", "sk-live-4242", "MARK-STATE", "MARK-AUDIT", "hidden"):
        _search(s, words)


# -- item 2: every reference is one clean vault path, and only that path is asked ---------------

URIS = [
    "../outside/leak.md",
    "brain/../secrets/keys.md",
    "brain/..%2Fsecrets%2Fkeys.md",
    "%2e%2e/outside/leak.md",
    "brain/%2e%2e/SOUL.md",
    "brain%2F..%2F..%2Foutside%2Fleak.md",
    "%252e%252e/outside/leak.md",
    "secrets/keys.md%00brain/Gotchas.md",
    "brain/Gotchas.md?x=../../secrets/keys.md",
    "secrets/keys.md#frag",
    "secrets/keys.md",
    "secrets%2Fkeys.md",
    "SECRETS/keys.md",
    "%EF%BD%93ecrets/keys.md",  # full-width s
    "%2Fetc%2Fpasswd",
    "/etc/passwd",
    "brain%5C..%5Csecrets%5Ckeys.md",
    BETA_PASSWORD.replace(" ", "%20"),
    "Memories" + BETA_PASSWORD.removeprefix("memories").replace(" ", "%20"),
    "brain/mem-link.md",
    "brain/chain1.md",
    "brain/state-link.md",
    ".shardmind/state.json",
    "CLAUDE.md",
    "brain/linked-dir/leak.md",
    "brain/./../SOUL.md",
    "%C0%AE%C0%AE/outside/leak.md",  # overlong UTF-8 dots
    "work/active/credentials/token.md",
]


def test_uris_resolve_to_one_clean_path(atlas: tuple[World, Shared]) -> None:
    _world, s = atlas
    client = s.session.client
    assert len(URIS) >= 24
    for tail in URIS:
        _refused(s, client.read_resource, "vault://note/" + tail)
    # One decoding, then the one path: an encoded slash names the same served note.
    for tail in ("brain/Gotchas.md", "brain%2FGotchas.md", "brain/North%20Star.md"):
        text = s.run(client.read_resource, "vault://note/" + tail).contents[0].text
        assert "# " in text
        _no_marker(text)


def expand_references(vault: Path) -> list[str]:
    real = os.path.realpath(vault)
    return [
        "../outside/leak.md",
        "brain/../../outside/leak.md",
        f"{real}/secrets/keys.md",
        f"{real}/brain/Gotchas.md",
        "/etc/passwd",
        "secrets/keys.md",
        "./secrets/keys.md",
        "//secrets/keys.md",
        "brain//../secrets/keys.md",
        "secrets\\keys.md",
        "brain\\..\\secrets\\keys.md",
        "SECRETS/keys.md",
        "Secrets/Keys.md",
        "\uff53ecrets/keys.md",
        "%2e%2e/SOUL.md",
        "brain/%2e%2e/SOUL.md",
        "brain%2F..%2FSOUL.md",
        "brain/../SOUL.md",
        "SOUL.md",
        "soul.md",
        "brain/soul.md",
        "[[SOUL]]",
        "[[soul]]",
        "[[keys]]",
        "[[secrets/keys]]",
        "[[secrets/keys.md]]",
        "[[secrets/keys|k]]",
        "secrets/keys.md#x",
        "secrets/keys.md|alias",
        "[[Beta password]]",
        "[[2026-11-09 Beta password]]",
        "[[memories/2026/11/2026-11-09 Beta password]]",
        BETA_PASSWORD,
        BETA_PASSWORD.upper(),
        "[[CLAUDE]]",
        "CLAUDE.md",
        "claude.md",
        "README.md",
        "[[README]]",
        "work/Old.md",
        "[[Old]]",
        "[[Secret Plans]]",
        "brain/Secret Plans.md",
        ".shardmind/state.json",
        "../.shardmind/state.json",
        "brain/Gotchas.md\x00",
        "secrets/keys.md\x00.md",
        "work/active/credentials/token.md",
        "work/active/transcripts/t.md",
        "brain/Gotchas.sync-conflict-20261101-120000-ABCDEFG.md",
        "[[Gotchas.sync-conflict-20261101-120000-ABCDEFG]]",
        "brain/Gotchas (conflicted copy 2026-11-01).md",
        "brain/linked-dir/leak.md",
        "brain/loop1.md",
    ]


def test_expand_references_resolve_to_one_clean_path(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    refs = expand_references(world.vault)
    assert len(refs) >= 50
    for ref in refs:
        _refused(s, s.session.call, "expand", {"note": ref})
    for ref in ("brain/Gotchas.md", "[[Gotchas]]", "[[brain/Gotchas]]", "[[Gotchas#Heading|alias]]"):
        answer = s.call("expand", {"note": ref})
        assert answer["path"] == "brain/Gotchas.md"
        _no_marker(answer)


# -- item 3: one admission rule, at least as strict as the index's ------------------------------


@pytest.mark.parametrize("entry", ["secrets", "secrets/", "SECRETS"])
def test_never_exposed_folders_and_index_skips(tmp_path: Path, entry: str) -> None:
    world = hostile_world(
        tmp_path, mcp_exposed_roots=["brain/", "secrets/", "work/"], mcp_never_expose=[entry]
    )

    async def scenario() -> None:
        async with connect(world, cwd=world.repos["atlas"]) as session:
            listed = await session.client.list_resources()
            names = {str(r.uri) for r in listed.resources}
            _no_marker([r.model_dump() for r in listed.resources])
            assert not any(n.startswith("vault://note/secrets/") for n in names), names
            assert "vault://note/work/Old.md" in names  # the declared roots still serve
            for rel in (
                "secrets/keys.md",
                "work/active/credentials/token.md",
                "work/active/transcripts/t.md",
                "brain/Gotchas.sync-conflict-20261101-120000-ABCDEFG.md",
                "brain/Gotchas (conflicted copy 2026-11-01).md",
                "brain/private-link.md",
                "brain/mem-link.md",
            ):
                assert "vault://note/" + rel.replace(" ", "%20") not in names, rel
                with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
                    await session.call("expand", {"note": rel})
                with pytest.raises(MCPError, match="SERVE_NOTE_NOT_FOUND"):
                    await session.client.read_resource("vault://note/" + rel)
            found = await session.call("search", {"query": "sk-live-4242", "mode": "lexical"})
            assert found["hits"] == []
            # By meaning there are always nearest notes: served ones only (work/ is served here).
            near = await session.call("search", {"query": "sk-live-4242"})
            paths = {h["path"] for h in near["hits"]}
            assert paths and all(
                p.startswith(("brain/", "work/")) and "/credentials/" not in p for p in paths
            )
            assert not any(m in json.dumps(near["hits"]) for m in ("sk-live", "MARK-SECRET", "MARK-CRED"))

    anyio.run(scenario)


# -- item 6: withheld notes change nothing a caller sees --------------------------------------


def test_search_answers_nothing_about_withheld_text(atlas: tuple[World, Shared]) -> None:
    _world, s = atlas

    # The probe: a yes/no question about beta's memory, asked as atlas. By words, the answer
    # is the answer for an absent word; by meaning (issue 29) it is the answer of a vault without the
    # withheld notes (tests/serve/test_search_hybrid.py) and never holds their text (_search checks).
    lexical = {"mode": "lexical"}
    assert _search(s, "hunter2", path="memories", **lexical) == _search(
        s, "hunter3", path="memories", **lexical
    )
    assert _search(s, "hunter2", **lexical) == _search(s, "hunter3", **lexical)
    # Several words: `match` and the hits are decided on what atlas may read (Gotchas says "caches").
    assert _search(s, "caches hunter2", **lexical) == _search(s, "caches hunter3", **lexical)
    for mode in ("lexical", "hybrid"):
        assert _search(s, "caches hunter2", mode=mode)["match"] == "any"
        assert {h["path"] for h in _search(s, "hunter2", mode=mode)["hits"]} <= SERVED
    assert "withheld" not in _search(s, "caches lie")


# -- item 7: health names no memory the caller cannot recall ------------------------------------


def test_health_names_no_foreign_memory(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    health = s.call("health")
    assert health["memories"]["invalid_count"] == 2  # the kit's Broken one and beta's NIGHTJAR
    assert "NIGHTJAR" not in json.dumps(health) and "Broken" not in json.dumps(health)
    assert "path" not in health["index"]  # the index's file is in the owner's cache: no absolute path
    recall = s.call("recall")
    for answer in (health, recall):  # the caller's folder by name only: an answer holds no absolute path
        assert str(world.root) not in json.dumps(answer) and answer["caller"]["root"] == "atlas"

    async def as_beta() -> None:
        async with connect(world, cwd=world.repos["beta-repo"]) as session:
            named = (await session.call("health"))["memories"]["invalid"]
            assert [m["path"] for m in named] == [NIGHTJAR]

    anyio.run(as_beta)


def test_a_linked_project_marker_is_not_read(tmp_path: Path) -> None:
    """A repository's `.shardmind-project` that is a link (here into the vault) would show the first
    line of its target back as the caller's project name."""
    world = build_world(tmp_path)
    (world.vault / "brain/pin.md").write_text("nightjar\n", encoding="utf-8")
    repo = world.repos["web"]
    (repo / ".shardmind-project").symlink_to(world.vault / "brain/pin.md")

    async def scenario() -> None:
        async with connect(world, cwd=repo) as session:
            caller = (await session.call("recall"))["caller"]
            assert caller["project"] == "web" and caller["source"] == "folder"

    anyio.run(scenario)
