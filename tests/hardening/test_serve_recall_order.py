"""Issue 26, item 20: ``recall`` ranked a memory naming two projects above one naming only the
caller's. Seed 000's recall ordering: "a memory naming only your project outranks one naming
five" — the narrower reach is the more specific. A superseded memory still never rises above a
live one (it names only the caller's project, and is the newest)."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.serve.kit import build_world, connect, uri


def test_the_narrower_reach_ranks_first(tmp_path: Path) -> None:
    world = build_world(tmp_path)

    async def scenario() -> None:
        async with connect(world, cwd=world.repos["web"], roots=[uri(world.repos["atlas"])]) as s:
            atlas = [m["title"] for m in (await s.call("recall", {"limit": 50}))["memories"]]
            # "Both" (atlas and beta) is newer than "Atlas only"; "Old atlas" is newest and superseded.
            assert atlas == ["Atlas only", "Both", "Everyone", "Old atlas"]
            await s.change_roots([uri(world.repos["beta-repo"])])
            beta = [m["title"] for m in (await s.call("recall", {"limit": 50}))["memories"]]
            assert beta == ["Beta only", "Both", "iOS", "Everyone"]

    anyio.run(scenario)
