"""Issue 24, what `shardpy serve` writes and runs (items C, 4, 5, 8, 9, 10, 16), over the real SDK client.

- C: a QMD launcher named by the vault's synced `.mcp.json` runs only with this machine's consent.
- 4, 5: the audit log is never written through a link (the file, or `.shardmind/` itself).
- 8: a hostile `vault-manifest.json` path is refused as a whole, naming the key; nothing is written.
- 9, 10: every call is one audit line, of bounded size; huge arguments are refused with typed errors.
- 16: titles are bounded in bytes, lists by count, and no answer carries an absolute path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from shardpy.errors import ShardpyError
from shardpy.vault.manifest import vault_content_rules
from tests.serve.kit import MANIFEST, Shared, World, build_world, connect, shared
from tests.shardkit import child_env, run_shardpy, shardpy_argv, tree_snapshot

FAKE_QMD = Path(__file__).resolve().parent.parent / "serve" / "fake_qmd.py"
MB10 = "x" * (10 * 1024 * 1024)


def _config(world: World) -> dict[str, str]:
    """A config folder of this test's own (where a QMD consent is recorded), never the user's."""
    return {"XDG_CONFIG_HOME": str(world.root / "config")}


def _error(tool: str, args: dict[str, Any], s: Shared) -> MCPError:
    with pytest.raises(MCPError) as caught:
        s.call(tool, args)
    return caught.value


def _no_absolute_path(world: World, exc: MCPError) -> None:
    text = f"{exc.error.message} {json.dumps(exc.error.data)}"
    assert str(world.root) not in text and "/tmp" not in text, text


# -- items 4 and 5: the audit log is never written through a link ------------------------------


def test_audit_log_that_is_a_link_to_an_outside_file_is_never_written(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    victim = world.outside / "precious.txt"
    victim.write_text("precious\n", encoding="utf-8")
    (world.vault / ".shardmind").mkdir()
    (world.vault / ".shardmind/serve-audit.jsonl").symlink_to(victim)
    dangling = world.outside / "created-by-audit.txt"

    async def go() -> dict[str, Any]:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            await s.call("search", {"query": "caches lie"})
            await s.call("recall", {})
            return await s.call("health")

    health = anyio.run(go)
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert "serve-audit.jsonl" in health["audit"]["problem"] and health["audit"]["ok"] is False
    # A dangling link is not created through either.
    (world.vault / ".shardmind/serve-audit.jsonl").unlink()
    (world.vault / ".shardmind/serve-audit.jsonl").symlink_to(dangling)
    anyio.run(go)
    assert not dangling.exists()


def test_shardmind_folder_that_is_a_link_gets_no_audit_line(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    side = world.outside / "side"
    side.mkdir()
    (world.vault / ".shardmind").symlink_to(side, target_is_directory=True)

    async def go() -> tuple[dict[str, Any], MCPError]:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            await s.call("search", {"query": "caches lie"})
            with pytest.raises(MCPError) as refused:
                await s.call("remember", {"title": "Linked", "body": "b", "scope": "project"})
            return await s.call("health"), refused.value

    health, refused = anyio.run(go)
    assert list(side.iterdir()) == []
    assert ".shardmind/" in health["audit"]["problem"] and health["audit"]["ok"] is False
    assert "PATH_SYMLINK" in refused.error.message
    _no_absolute_path(world, refused)


# -- item 8: every path of vault-manifest.json is validated when read ---------------------------

HOSTILE = [
    ("user_content_roots", ["brain/", "../outside/"]),
    ("user_content_roots", ["brain/", "/etc/"]),
    ("user_content_roots", ["brain/", ".shardmind/"]),
    ("user_content_roots", ["brain/", ".git/hooks/"]),
    ("user_content_roots", ["brain/", "linkout/"]),
    ("memory_root", "../outside"),
    ("memory_root", ".shardmind"),
    ("mcp_exposed_roots", ["brain/", "linkout/"]),
    ("mcp_inbox", "../outside"),
]


def _hostile_manifest(world: World, key: str, value: Any) -> None:
    (world.vault / "linkout").symlink_to(world.outside, target_is_directory=True)
    (world.vault / ".git/hooks").mkdir(parents=True)
    (world.vault / "vault-manifest.json").write_text(json.dumps({**MANIFEST, key: value}), encoding="utf-8")


@pytest.mark.parametrize(("key", "value"), HOSTILE)
def test_hostile_manifest_path_is_refused_by_the_one_reader(tmp_path: Path, key: str, value: Any) -> None:
    world = build_world(tmp_path)
    _hostile_manifest(world, key, value)
    with pytest.raises(ShardpyError) as caught:
        vault_content_rules(world.vault)
    assert caught.value.code == "VAULT_MANIFEST_PATH" and key in caught.value.message


@pytest.mark.parametrize(("key", "value"), [HOSTILE[0], HOSTILE[4], HOSTILE[6]])
def test_hostile_manifest_refuses_every_write_as_a_whole(tmp_path: Path, key: str, value: Any) -> None:
    world = build_world(tmp_path)
    _hostile_manifest(world, key, value)
    before = tree_snapshot(world.vault, skip=[".shardmind"]), tree_snapshot(world.outside)

    async def go() -> list[MCPError]:
        errors = []
        async with connect(world, cwd=world.repos["atlas"]) as s:
            calls = [
                ("record_work", {"folder": "brain", "title": "Filed", "body": "b"}),
                ("remember", {"title": "Lesson", "body": "b", "scope": "project"}),
                ("search", {"query": "caches"}),
            ]
            for tool, args in calls:
                with pytest.raises(MCPError) as caught:
                    await s.call(tool, args)
                errors.append(caught.value)
        return errors

    errors = anyio.run(go)
    for exc in errors:
        assert "VAULT_MANIFEST_PATH" in exc.error.message and key in exc.error.message
        _no_absolute_path(world, exc)
    assert (tree_snapshot(world.vault, skip=[".shardmind"]), tree_snapshot(world.outside)) == before
    assert [line["error"] for line in world.audit()] == ["VAULT_MANIFEST_PATH"] * 3


# -- items 9, 10 and 16: one bounded audit line per call; huge and long arguments refused ---------


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, Shared]]:
    world = build_world(tmp_path_factory.mktemp("serve-writes"))
    with shared(world, cwd=world.repos["atlas"]) as session:
        yield world, session


def test_every_call_is_one_audit_line_unknown_tools_and_bad_arguments_too(
    atlas: tuple[World, Shared],
) -> None:
    world, s = atlas
    before = len(world.audit())
    calls: list[tuple[str, dict[str, Any]]] = [
        ("nonesuch", {"a": 1}),
        ("search", {"query": 5}),
        ("search", {"query": "q", "colour": "red"}),
        ("remember", {}),
        ("health", {"x": 1}),
    ]
    errors = [_error(tool, args, s) for tool, args in calls]
    lines = world.audit()[before:]
    assert [(line["event"], line["status"]) for line in lines] == [
        (f"tool:{tool}", "error") for tool, _ in calls
    ]
    assert lines[0]["error"] == "SERVE_UNKNOWN_TOOL"
    assert {line["error"] for line in lines[1:]} == {"SERVE_BAD_ARGUMENTS"}
    assert all(exc.error.message.startswith("[SERVE_") for exc in errors)


def test_huge_arguments_are_refused_and_their_audit_lines_bounded(atlas: tuple[World, Shared]) -> None:
    world, s = atlas
    before = len(world.audit())
    snapshot = tree_snapshot(world.vault, skip=[".shardmind"])
    memory = {"title": "t", "body": "b", "scope": "project"}
    calls: list[tuple[str, dict[str, Any]]] = [
        ("search", {"query": MB10}),
        ("search", {"query": "q", "path": MB10}),
        ("search", {"query": "q", "type": MB10}),
        ("expand", {"note": MB10}),
        ("recall", {"query": MB10}),
        ("remember", {**memory, "title": MB10}),
        ("remember", {**memory, "body": MB10}),
        ("remember", {**memory, "projects": [MB10]}),
        ("remember", {**memory, "projects": [f"p{i}" for i in range(200_000)]}),
        ("remember", {**memory, "platforms": [f"p{i}" for i in range(200_000)]}),
        ("remember", {**memory, "supersedes": [f"m{i}" for i in range(100_000)]}),
        ("record_work", {"folder": MB10, "title": "t", "body": "b"}),
        ("record_work", {"folder": "work/active", "title": MB10, "body": "b"}),
        ("record_work", {"folder": "work/active", "title": "t", "body": MB10}),
        # Twenty unknown keys of twenty long items each: refused, and still a small audit line.
        ("recall", {f"k{i}": ["y" * 500] * 20 for i in range(20)}),
    ]
    for tool, args in calls:
        exc = _error(tool, args, s)
        assert exc.error.message.startswith("[SERVE_"), (tool, exc.error.message[:200])
        assert len(exc.error.message) < 4000
    raw = (world.vault / ".shardmind/serve-audit.jsonl").read_bytes().splitlines()[before:]
    assert len(raw) == len(calls)
    assert max(len(line) for line in raw) <= 16 * 1024
    assert tree_snapshot(world.vault, skip=[".shardmind"]) == snapshot


def test_long_titles_are_bounded_in_bytes_and_answers_carry_no_absolute_path(
    atlas: tuple[World, Shared],
) -> None:
    world, s = atlas
    snapshot = tree_snapshot(world.vault, skip=[".shardmind"])
    wide = "\U0001f600" * 120  # 120 characters, 480 bytes: over any file system's 255-byte name
    for tool, args in (
        ("remember", {"title": wide, "body": "b", "scope": "project"}),
        ("record_work", {"folder": "work/active", "title": wide, "body": "b"}),
    ):
        exc = _error(tool, args, s)
        assert "SERVE_TOO_LONG" in exc.error.message and "bytes" in exc.error.message
        _no_absolute_path(world, exc)
    assert tree_snapshot(world.vault, skip=[".shardmind"]) == snapshot
    # A title of 200 bytes is written (its file name, date prefix included, fits in 255 bytes).
    done = s.call("remember", {"title": "\u00e9" * 100, "body": "wide name", "scope": "project"})
    assert done["recorded"] is True and (world.vault / done["path"]).is_file()


# -- item C: the vault's .mcp.json never names a command that runs without this machine's consent ---


def _planted_launcher(world: World) -> Path:
    """A pulled .mcp.json whose qmd entry writes a marker outside the vault (any command would do)."""
    marker = world.outside / "pwned"
    code = f"open({str(marker)!r}, 'w').write('ran')"
    mcp = {"mcpServers": {"qmd": {"command": sys.executable, "args": ["-c", code]}}}
    (world.vault / ".mcp.json").write_text(json.dumps(mcp), encoding="utf-8")
    return marker


def _fake_qmd(world: World) -> dict[str, str]:
    state = world.root / "fake-qmd"
    state.mkdir(exist_ok=True)
    hit = [{"file": "brain/North Star.md", "title": "North Star", "score": 0.7, "snippet": "Ship"}]
    (state / "results.json").write_text(json.dumps(hit), encoding="utf-8")
    return {"FAKE_QMD_DIR": str(state), **_config(world)}


def test_a_pulled_mcp_json_launcher_never_runs_without_consent(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    marker = _planted_launcher(world)

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with connect(world, cwd=world.repos["atlas"], env=_config(world)) as s:
            return await s.call("search", {"query": "caches lie"}), await s.call("health")

    found, health = anyio.run(go)
    assert not marker.exists()
    assert "qmd" not in found
    assert health["qmd"]["configured"] is False and "--trust-qmd" in health["qmd"]["note"]


def test_qmd_runs_once_consented_and_a_changed_launcher_revokes_it(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    env = _fake_qmd(world)
    mcp = {"mcpServers": {"qmd": {"command": sys.executable, "args": [str(FAKE_QMD)]}}}
    (world.vault / ".mcp.json").write_text(json.dumps(mcp), encoding="utf-8")
    trusted = run_shardpy("serve", world.vault, "--trust-qmd", cwd=world.root, env=env)
    assert trusted.returncode == 0, trusted.stderr
    assert str(FAKE_QMD) in trusted.stdout
    assert not (world.vault / ".shardmind").exists()  # the consent is this machine's, never the vault's

    async def search() -> dict[str, Any]:
        async with connect(world, cwd=world.repos["atlas"], env=env) as s:
            return await s.call("search", {"query": "caches lie"})

    assert anyio.run(search)["qmd"]["status"] == "ok"
    # A pull changes the launcher: the consent no longer matches, nothing runs.
    marker = _planted_launcher(world)
    assert "qmd" not in anyio.run(search)
    assert not marker.exists()


def test_qmd_named_by_the_serve_command_line_runs(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    marker = _planted_launcher(world)  # the vault's own entry is ignored when --qmd names one
    env = _fake_qmd(world)

    async def go() -> dict[str, Any]:
        args = ["--qmd", f"{sys.executable} {FAKE_QMD}"]
        async with connect(world, cwd=world.repos["atlas"], args=args, env=env) as s:
            return await s.call("search", {"query": "caches lie"})

    assert anyio.run(go)["qmd"]["status"] == "ok"
    assert not marker.exists()


def test_a_write_whose_index_refresh_fails_answers_no_absolute_path(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    (world.root / "cache").write_text("a file where the user cache folder should be\n", encoding="utf-8")

    async def go() -> tuple[dict[str, Any], MCPError]:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            done = await s.call("record_work", {"folder": "work/active", "title": "Filed", "body": "b"})
            with pytest.raises(MCPError) as failed:  # the index cannot be built: a typed error
                await s.call("search", {"query": "filed"})
            return done, failed.value

    done, failed = anyio.run(go)
    assert done["recorded"] is True and done["warnings"]
    assert not any(str(world.root) in w for w in done["warnings"]), done["warnings"]
    assert failed.error.message.startswith("[INDEX_")
    _no_absolute_path(world, failed)


def test_vault_configuration_linked_to_an_endless_device_is_not_read(tmp_path: Path) -> None:
    """A clone can carry `.mcp.json` and `vault-manifest.json` as links to /dev/zero: they read as
    absent (nothing runs, the default exposure applies) instead of hanging every call."""
    world = build_world(tmp_path)
    (world.vault / ".mcp.json").symlink_to("/dev/zero")
    (world.vault / "vault-manifest.json").unlink()
    (world.vault / "vault-manifest.json").symlink_to("/dev/zero")

    async def go() -> dict[str, Any]:
        async with connect(world, cwd=world.repos["atlas"], env=_config(world)) as s:
            await s.call("search", {"query": "caches lie"})
            return await s.call("health")

    health = anyio.run(go)
    assert health["qmd"] == {"configured": False, "live": False}


def test_a_qmd_that_cannot_start_is_reported_without_its_path(tmp_path: Path) -> None:
    world = build_world(tmp_path)
    missing = world.outside / "no-such-folder" / "qmd"

    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        args = ["--qmd", f"{missing} mcp"]
        async with connect(world, cwd=world.repos["atlas"], args=args, env=_config(world)) as s:
            return await s.call("search", {"query": "caches lie"}), await s.call("health")

    found, health = anyio.run(go)
    assert found["qmd"]["status"] == "failed" and health["qmd"]["live"] is False
    text = json.dumps([found["qmd"], found["notices"], health["qmd"]])
    assert str(world.root) not in text and "no-such-folder" not in text, text


def test_calls_the_sdk_refuses_before_any_handler_are_audited_too(tmp_path: Path) -> None:
    """Envelopes the SDK's client cannot send (so on the raw wire): `arguments` that are not an object,
    a call without a tool name, a read without a URI. Each is refused and is one audit line."""
    world = build_world(tmp_path)
    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    }
    frames: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "search", "arguments": "q"}},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"arguments": {}}},
        {"jsonrpc": "2.0", "id": 4, "method": "resources/read", "params": {}},
    ]
    proc = subprocess.Popen(
        shardpy_argv("serve", world.vault),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=world.repos["atlas"],
        env=child_env({"XDG_CACHE_HOME": str(world.root / "cache")}),
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(json.dumps(f).encode() + b"\n" for f in frames))
    proc.stdin.flush()
    answered: dict[int, Any] = {}
    while len(answered) < 4:
        line = proc.stdout.readline()
        if not line:
            break
        reply = json.loads(line)
        if "id" in reply:
            answered[reply["id"]] = reply
    proc.stdin.close()
    proc.wait(timeout=60)
    assert all("error" in answered[i] for i in (2, 3, 4)), answered
    events = [(line["event"], line["status"]) for line in world.audit()]
    assert events == [("tool:search", "error"), ("tools/call", "error"), ("resources/read", "error")]
