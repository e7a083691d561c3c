"""QMD as the server's second search backend, over a real MCP stdio session to a stand-in ``qmd mcp``.

The stand-in (tests/serve/fake_qmd.py) is registered the way the flagship registers QMD: the
vault's ``.mcp.json`` → ``mcpServers.qmd``, approved on this machine with ``shardpy serve VAULT
--trust-qmd`` (a synced ``.mcp.json`` runs nothing without it: tests/security/test_serve_writes.py).
Its results name served notes, withheld notes and paths
outside the vault, so the tests see the result filtered (never the query), over-fetching, fusion with
the index's hits, and explicit degradation when QMD crashes, hangs or answers without structure.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio

from shardpy.serve.qmd import fuse, searches, vault_path
from tests.serve.kit import World, build_world, connect, uri
from tests.shardkit import run_shardpy

FAKE = Path(__file__).with_name("fake_qmd.py")

RESULTS = [
    {"docid": "#a1", "file": "brain/Gotchas.md", "title": "Gotchas", "score": 0.93, "context": None,
     "snippet": "1: Caches lie."},
    {"docid": "#a2", "file": "reference/Ref.md", "title": "Ref", "score": 0.9, "context": None,
     "snippet": "outside the exposed roots"},
    {"docid": "#a3", "file": "brain/soul.md", "title": "Soul", "score": 0.8, "context": None,
     "snippet": "never served"},
    {"docid": "#a4", "file": "qmd://vault/brain/North Star.md", "title": "North Star", "score": 0.7,
     "context": None, "snippet": "Ship fixes"},
    {"docid": "#a5", "file": "../outside/leak.md", "title": "Leak", "score": 0.6, "context": None,
     "snippet": "from outside the vault"},
]  # fmt: skip


def qmd_world(tmp_path: Path) -> tuple[World, Path]:
    world = build_world(tmp_path)
    state = tmp_path / "fake-qmd"
    state.mkdir()
    (state / "results.json").write_text(json.dumps(RESULTS), encoding="utf-8")
    mcp = {"mcpServers": {"qmd": {"command": sys.executable, "args": [str(FAKE)]}}}
    (world.vault / ".mcp.json").write_text(json.dumps(mcp), encoding="utf-8")
    trusted = run_shardpy("serve", world.vault, "--trust-qmd", cwd=tmp_path, env=env(state))
    assert trusted.returncode == 0, trusted.stderr
    return world, state


def calls(state: Path) -> list[dict[str, Any]]:
    path = state / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def starts(state: Path) -> int:
    path = state / "starts"
    return len(path.read_text().splitlines()) if path.exists() else 0


def env(state: Path, **extra: str) -> dict[str, str]:
    """The stand-in's folder, and a config folder of the test's own (where the consent is kept)."""
    return {"FAKE_QMD_DIR": str(state), "XDG_CONFIG_HOME": str(state.parent / "config"), **extra}


def test_search_fuses_filtered_qmd_hits_and_over_fetches(tmp_path: Path) -> None:
    world, state = qmd_world(tmp_path)

    async def go() -> None:
        async with connect(
            world, cwd=world.repos["atlas"], roots=[uri(world.repos["atlas"])], env=env(state)
        ) as s:
            # By words: the index finds only Gotchas then (by meaning it would find North Star too).
            out = await s.call("search", {"query": "caches lie", "limit": 10, "mode": "lexical"})
            paths = [h["path"] for h in out["hits"]]
            # Served notes from QMD are in; withheld ones and paths outside the vault are not.
            assert "brain/North Star.md" in paths
            assert not {"reference/Ref.md", "brain/soul.md", "../outside/leak.md"} & set(paths)
            by_path = {h["path"]: h for h in out["hits"]}
            assert by_path["brain/Gotchas.md"]["source"] == "both"  # the index found it too
            assert by_path["brain/North Star.md"]["source"] == "qmd"
            assert out["qmd"] == {"status": "ok", "served": 2}  # nothing said about the withheld ones
            assert "withheld" not in out
            # Over-fetch: max(limit * 4, 20); lex + vec for a keyword query, hyde only for a question.
            first = calls(state)[-1]
            assert first["tool"] == "query" and first["args"]["limit"] == 40
            assert [q["type"] for q in first["args"]["searches"]] == ["lex", "vec"]
            await s.call("search", {"query": "how do we stop caches from lying?", "limit": 3})
            second = calls(state)[-1]["args"]
            assert second["limit"] == 20
            assert [q["type"] for q in second["searches"]] == ["lex", "vec", "hyde"]
            # A path filter applies to QMD's hits too; a type filter skips QMD (it knows no types).
            work = await s.call("search", {"query": "caches lie", "path": "work"})
            assert all(h["path"].startswith("work/") for h in work["hits"])
            typed = await s.call("search", {"query": "caches lie", "type": "note"})
            assert typed["qmd"]["status"] == "off"
            health = await s.call("health")
            assert health["qmd"] == {"configured": True, "live": True, "documents": 7}
        assert starts(state) == 1  # one child for the whole session

    anyio.run(go)
    audit = [e for e in world.audit() if e["event"] == "tool:search"]
    assert audit and "brain/North Star.md" in audit[0]["served"]


FAILURES = [
    ("crash", ""),
    ("text-only", "no structured content"),
    ("error", "index locked"),
    ("slow", "did not answer in time"),
]


def test_a_failing_qmd_degrades_that_one_search_and_says_so(tmp_path: Path) -> None:
    world, state = qmd_world(tmp_path)

    async def go() -> None:
        # No cooldown here, so each failure mode meets a fresh child in one server session.
        extra = env(state, SHARDPY_SERVE_QMD_TIMEOUT="3", SHARDPY_SERVE_QMD_COOLDOWN="0")
        async with connect(world, cwd=world.repos["atlas"], env=extra) as s:
            for mode, reason in FAILURES:
                (state / "mode").write_text(mode)
                out = await s.call("search", {"query": "caches lie", "mode": "lexical"})
                assert out["qmd"]["status"] == "failed", mode
                assert reason in out["qmd"]["reason"], (mode, out["qmd"])
                assert any(n.startswith("qmd failed") for n in out["notices"]), mode
                # The index's own hits still stand: a QMD failure never looks like an empty vault.
                assert [h["path"] for h in out["hits"]] == ["brain/Gotchas.md"], mode
                assert {h["source"] for h in out["hits"]} == {"index"}, mode

    anyio.run(go)


def test_a_dead_qmd_is_replaced_only_after_the_cooldown(tmp_path: Path) -> None:
    world, state = qmd_world(tmp_path)
    (state / "mode").write_text("crash")

    async def go() -> None:
        async with connect(
            world, cwd=world.repos["atlas"], env=env(state, SHARDPY_SERVE_QMD_COOLDOWN="2")
        ) as s:
            assert (await s.call("search", {"query": "caches lie"}))["qmd"]["status"] == "failed"
            died = time.monotonic()
            assert starts(state) == 1
            again = await s.call("search", {"query": "caches lie"})
            if time.monotonic() - died < 2:  # inside the cooldown: no new child, and it says why
                assert "cooldown" in again["qmd"]["reason"]
                assert starts(state) == 1
            (state / "mode").write_text("ok")
            await anyio.sleep(max(0.0, 2.2 - (time.monotonic() - died)))
            back = await s.call("search", {"query": "caches lie"})
            assert back["qmd"]["status"] == "ok"
            assert starts(state) == 2

    anyio.run(go)


def test_without_a_registered_qmd_search_and_health_say_so(tmp_path: Path) -> None:
    world = build_world(tmp_path)

    async def go() -> None:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            out = await s.call("search", {"query": "caches lie"})
            assert "qmd" not in out
            assert (await s.call("health"))["qmd"] == {"configured": False, "live": False}

    anyio.run(go)


# -- units ---------------------------------------------------------------------------------------


def test_searches_add_hyde_only_for_questions_of_four_words() -> None:
    assert [q["type"] for q in searches("caches lie")] == ["lex", "vec"]
    assert [q["type"] for q in searches("why do caches lie")] == ["lex", "vec", "hyde"]
    assert [q["type"] for q in searches("caches lie to us?")] == ["lex", "vec", "hyde"]
    assert [q["type"] for q in searches("caches lie to us")] == ["lex", "vec"]


def test_vault_path_maps_qmd_spellings_to_existing_vault_files(tmp_path: Path) -> None:
    (tmp_path / "brain").mkdir()
    (tmp_path / "brain/A.md").write_text("# A\n")
    assert vault_path(tmp_path, "brain/A.md") == "brain/A.md"
    assert vault_path(tmp_path, "qmd://myvault/brain/A.md") == "brain/A.md"
    assert vault_path(tmp_path, "myvault/brain/A.md") == "brain/A.md"
    assert vault_path(tmp_path, "/brain/A.md") == "brain/A.md"
    assert vault_path(tmp_path, "../x.md") == "../x.md"  # left as is: exposure refuses it


def test_fuse_ranks_by_reciprocal_rank_and_marks_sources() -> None:
    index_hits = [
        {"path": "a.md", "heading": ["x"]},
        {"path": "b.md", "heading": []},
        {"path": "a.md", "heading": ["y"]},
    ]
    qmd_hits = [{"path": "c.md"}, {"path": "b.md"}]
    out = fuse(index_hits, qmd_hits, 10)
    assert [(h["path"], h["source"]) for h in out] == [
        ("b.md", "both"),  # rank 2 in the index + rank 2 in QMD beats either alone
        ("a.md", "index"),
        ("c.md", "qmd"),
        ("a.md", "index"),
    ]
    assert out[1]["heading"] == ["x"]
    assert len(fuse(index_hits, qmd_hits, 2)) == 2
