"""remember and record_work over stdio: duplicates, supersession, containment, bad input, concurrency."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from shardpy.notes.frontmatter import split_frontmatter
from tests.serve.kit import Shared, World, build_world, connect, shared
from tests.shardkit import child_env, shardpy_argv, tree_snapshot


@pytest.fixture
def world(tmp_path: Path) -> World:
    return build_world(tmp_path)


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Shared]]:
    """One server, started in the atlas repository (no roots: the launch folder names the caller)."""
    world = build_world(tmp_path_factory.mktemp("writes"))
    with shared(world, cwd=world.repos["atlas"]) as session:
        yield world, session


def _new_memories(world: World) -> list[Path]:
    return sorted(p for p in (world.vault / "memories").rglob("*.md") if "2026/11" not in str(p))


def test_remember_duplicate_and_supersession(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    audit_before = len(world.audit())
    done = s.call(
        "remember",
        {
            "title": "Pin the toolchain",
            "body": "Pin rustc in rust-toolchain.toml; see [[Gotchas]] and [[No Such Note]].",
            "scope": "project",
        },
    )
    assert done["recorded"] is True and done["projects"] == ["atlas"] and done["warnings"] == []
    first = done["path"]
    # A near-duplicate of a live memory is reported, with the suggestion, and nothing is written.
    before = tree_snapshot(world.vault, skip=[".shardmind"])
    dup = s.run(
        s.session.client.call_tool,
        "remember",
        {
            "title": "Pin toolchain",
            "body": "Pin rustc in rust-toolchain.toml; see Gotchas and No Such Note.",
            "scope": "project",
        },
    )
    assert dup.is_error and dup.structured_content is not None
    assert dup.structured_content["duplicates"][0]["path"] == first
    assert "supersedes" in dup.structured_content["suggestion"]
    assert tree_snapshot(world.vault, skip=[".shardmind"]) == before
    # Supersession: the old memory is kept, marked and back-linked; recall ranks it below live ones.
    new = s.call(
        "remember",
        {
            "title": "Pin the toolchain via mise",
            "body": "Pin rustc with mise, not rust-toolchain.toml.",
            "scope": "project",
            "supersedes": [first],
            "confidence": "verified",
        },
    )
    assert new["superseded"] == [first]
    recall = s.call("recall", {"query": "pin rustc", "limit": 50})
    order = [m["path"] for m in recall["memories"]]
    assert order.index(new["path"]) < order.index(first)
    assert recall["memories"][order.index(first)]["superseded"] is True

    files = {p.stem: p.read_text(encoding="utf-8") for p in _new_memories(world)}
    old = next(k for k in files if "mise" not in k)
    new = next(k for k in files if "mise" in k)
    assert split_frontmatter(files[old]).data["superseded_by"] == f"[[{new}]]"
    # The dangling link was neutralised, the live one kept.
    assert "Pin rustc in rust-toolchain.toml; see [[Gotchas]] and No Such Note." in files[old]
    fm = split_frontmatter(files[new]).data
    assert fm["scope"] == "project" and fm["projects"] == ["atlas"] and fm["origin"] == "atlas"
    assert fm["supersedes"] == [f"[[{old}]]"]
    assert fm["tags"] == ["memory"] and fm["confidence"] == "verified"
    events = [(line["event"], line["status"]) for line in world.audit()[audit_before:]]
    assert events.count(("tool:remember", "ok")) == 3  # the duplicate report is an answered call too
    assert not (world.vault / ".shardmind/journal.json").exists()


def test_record_work_containment(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    audit_before = len(world.audit())
    done = s.call("record_work", {"folder": "work/active", "title": "Atlas launch", "body": "Went live."})
    assert done["path"] == "work/active/Atlas launch.md" and done["warnings"] == []
    # Refreshed for that one note: searchable at once (an MCP write fires no editor hook).
    found = s.call("search", {"query": "went live", "mode": "lexical"})  # by words: that note alone
    assert [h["path"] for h in found["hits"]] == ["work/active/Atlas launch.md"]
    for folder in (
        "brain/../work",
        "../outside",
        "memories/2026",
        "work",
        "/etc",
        "brain/../reference",
    ):
        with pytest.raises(MCPError, match="SERVE_FOLDER_REFUSED"):
            s.call("record_work", {"folder": folder, "title": "Escape", "body": "x"})
    with pytest.raises(MCPError, match="SERVE_NOTE_EXISTS"):
        s.call("record_work", {"folder": "work/active/", "title": "Atlas launch", "body": "again"})

    text = (world.vault / "work/active/Atlas launch.md").read_text()
    data = split_frontmatter(text).data
    assert data["status"] == "active" and data["origin"] == "atlas" and text.endswith("Went live.\n")
    assert not any(p.name == "Escape.md" for p in world.root.rglob("*.md"))
    assert [line["status"] for line in world.audit()[audit_before:]].count("error") == 7


def test_bad_input_is_refused_and_writes_nothing(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    before = tree_snapshot(world.vault)

    cases = [
        ("recall", {"limit": 5, "colour": "red"}, "SERVE_BAD_ARGUMENTS.*colour"),
        ("remember", {"title": "t", "body": "b", "scope": "project", "shout": True}, "shout"),
        ("remember", {"title": "Big", "body": "x" * 1_048_576, "scope": "project"}, "SERVE_TOO_LONG"),
        ("remember", {"title": "a/b", "body": "b", "scope": "project"}, "SERVE_BAD_TITLE"),
        ("remember", {"title": "two\nlines", "body": "b", "scope": "project"}, "SERVE_BAD_TITLE"),
        ("remember", {"title": "ok", "body": "b", "scope": "general"}, "SERVE_BAD_SCOPE"),
        ("remember", {"title": "ok", "body": "b", "scope": "everywhere"}, "SERVE_BAD_ARGUMENTS"),
        (
            "remember",
            {"title": "ok", "body": "b", "scope": "project", "limit": "x"},
            "SERVE_BAD_ARGUMENTS",
        ),
        ("expand", {"note": "../outside/leak.md"}, "SERVE_NOTE_NOT_FOUND"),
        ("expand", {"note": "/etc/passwd.md"}, "SERVE_NOTE_NOT_FOUND"),
        (
            "record_work",
            {"folder": "work/active", "title": "x", "body": "y" * 30_000},
            "SERVE_TOO_LONG",
        ),
        ("nonesuch", {}, "unknown tool"),
    ]
    for tool, args, pattern in cases:
        assert isinstance(args, dict)
        with pytest.raises(MCPError, match=pattern):
            s.call(tool, args)

    assert tree_snapshot(world.vault, skip=[".shardmind"]) == {
        k: v for k, v in before.items() if not k.startswith(".shardmind")
    }


def test_invalid_utf8_on_the_wire(world: World) -> None:
    """Raw bytes the SDK client cannot send: a JSON-RPC error naming the problem, nothing written."""
    frames = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
    ]
    wire = b"".join(json.dumps(f).encode() + b"\n" for f in frames)
    call = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "remember",
                "arguments": {"title": "Bytes", "body": "BODY", "scope": "project"},
            },
        }
    ).encode()
    wire += call.replace(b"BODY", b"caf\xe9 \xff\xfe") + b"\n"
    proc = subprocess.Popen(
        shardpy_argv("serve", world.vault),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=world.repos["atlas"],
        env=child_env(),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(wire)
    proc.stdin.flush()
    reply: dict[str, object] = {}
    for _ in range(10):  # the initialize result, then (perhaps after other frames) the call's answer
        line = proc.stdout.readline()
        if not line:
            break
        reply = json.loads(line)
        if reply.get("id") == 2:
            break
    proc.stdin.close()
    stderr = proc.stderr.read() if proc.stderr else b""
    proc.wait(timeout=30)
    error = reply["error"]
    assert isinstance(error, dict)
    assert "SERVE_BAD_TEXT" in error["message"] and "UTF-8" in error["message"]
    assert not _new_memories(world)
    assert b"Traceback" not in stderr


def test_concurrent_remember_from_separate_servers(world: World) -> None:
    """Three servers (the one-per-repository deployment) write at once: every distinct memory lands
    whole, and of two writing the same title exactly one wins."""
    titles = ["Alpha lesson", "Same title", "Same title"]
    results: list[object] = [None] * len(titles)

    async def one(i: int) -> None:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            body = f"Lesson number {i}: " + " ".join(f"word{i}x{j}" for j in range(40))
            try:
                results[i] = await s.call(
                    "remember", {"title": titles[i], "body": body, "scope": "project", "force": True}
                )
            except MCPError as exc:
                results[i] = exc

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            for i in range(len(titles)):
                tg.start_soon(one, i)

    anyio.run(scenario)
    ok = [r for r in results if isinstance(r, dict) and r["recorded"]]
    refused = [r for r in results if isinstance(r, MCPError)]
    assert len(ok) == 2 and len(refused) == 1 and "SERVE_NOTE_EXISTS" in str(refused[0])
    files = _new_memories(world)
    assert len(files) == 2
    for f in files:
        split = split_frontmatter(f.read_text(encoding="utf-8"))
        assert split.state == "present" and split.data["scope"] == "project"
        assert split.body.rstrip().endswith("x39")  # whole, never torn
