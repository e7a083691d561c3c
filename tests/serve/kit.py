"""A served vault on disk and a real MCP client session against ``python -m shardpy serve`` over stdio."""

from __future__ import annotations

import contextlib
import json
import os
import warnings
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.client.context import ClientRequestContext
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.shardkit import child_env, shardpy_argv

MANIFEST = {
    "template": "agent-vault",
    "memory_root": "memories",
    "mcp_exposed_roots": ["brain/", "work/active/", "work/Index.md"],
    "mcp_never_expose": ["SOUL.md"],
    "user_content_roots": ["brain/", "memories/", "reference/", "work/Index.md", "work/active/", "perf/*.md"],
    "qmd_context": "Test vault.",
}


def memory(scope: str, projects: Sequence[str] = (), platforms: Sequence[str] = (), **extra: str) -> str:
    lines = [
        "---",
        f"date: {extra.pop('date', '2026-11-01')}",
        "tags: [memory]",
        f"scope: {scope}",
        f"projects: [{', '.join(projects)}]",
        f"platforms: [{', '.join(platforms)}]",
        "confidence: observed",
        f"session: {extra.pop('session', '2026-11-01T10:00:00.000Z')}",
    ]
    lines += [f"{k}: {v}" for k, v in extra.items()]
    return "\n".join(lines) + "\n---\n"


NOTES: dict[str, str] = {
    "brain/North Star.md": "---\ndate: 2026-11-01\ntags: [brain]\ndescription: Goals\n---\n# North Star\n\n"
    "Ship [[Gotchas]] fixes. Also [[Secret Plans]] and [[Nowhere]].\n",
    "brain/Gotchas.md": "---\ntags: [brain]\n---\n# Gotchas\n\nCaches lie.\n",
    "brain/Secret Plans.md": "---\ntags: [brain, private]\n---\n# Secret\n\nhidden\n",
    "brain/soul.md": "# Soul\n\nnever served (mcp_never_expose, any case)\n",
    "brain/Unclosed.md": "---\ntags: [brain]\ndescription: the fence never closes\n\n# Unclosed\n",
    "work/active/Atlas.md": "---\ntags: [work]\n---\n# Atlas\n\nSee [[North Star]].\n",
    "work/active-secrets/Nope.md": "# Nope\n\nwork/active does not admit work/active-secrets\n",
    "work/Index.md": "# Index\n\n[[Atlas]]\n",
    "reference/Ref.md": "# Ref\n\noutside the exposed roots\n",
    "memories/2026/11/2026-11-01 Everyone.md": memory("general") + "# Everyone\n\nTabs over spaces.\n",
    "memories/2026/11/2026-11-02 Atlas only.md": memory("project", ["atlas"], date="2026-11-02")
    + "# Atlas only\n\nAtlas deploys on Fridays.\n",
    "memories/2026/11/2026-11-03 Beta only.md": memory("project", ["beta"], date="2026-11-03")
    + "# Beta only\n\nBeta uses Postgres.\n",
    "memories/2026/11/2026-11-04 Both.md": memory("general", ["atlas", "beta"], date="2026-11-04").replace(
        "scope: general", "scope: project"
    )
    + "# Both\n\nShared lesson for atlas and beta.\n",
    "memories/2026/11/2026-11-05 iOS.md": memory("platform", [], ["ios"], date="2026-11-05")
    + "# iOS\n\nSign builds before upload.\n",
    "memories/2026/11/2026-11-06 Old atlas.md": memory(
        "project", ["atlas"], date="2026-11-06", superseded_by='"[[2026-11-02 Atlas only]]"'
    )
    + "# Old atlas\n\nAtlas deploys on Mondays.\n",
    "memories/2026/11/2026-11-07 Broken.md": "---\nscope: sideways\n---\n# Broken\n\nfails validation\n",
}


@dataclass
class World:
    root: Path
    vault: Path
    outside: Path
    repos: dict[str, Path] = field(default_factory=dict)

    def audit(self) -> list[dict[str, Any]]:
        path = self.vault / ".shardmind/serve-audit.jsonl"
        if not path.exists():
            return []
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def build_world(tmp: Path) -> World:
    vault = tmp / "vault"
    for rel, text in NOTES.items():
        p = vault / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    (vault / "vault-manifest.json").write_text(json.dumps(MANIFEST), encoding="utf-8")
    outside = tmp / "outside"
    outside.mkdir()
    (outside / "leak.md").write_text("# Leak\n\nfrom outside the vault\n", encoding="utf-8")
    (vault / "brain/Leak.md").symlink_to(outside / "leak.md")
    (vault / "brain/Alias.md").symlink_to(vault / "brain/Gotchas.md")  # inside its root: served
    (vault / "work/active/Cross.md").symlink_to(vault / "reference/Ref.md")  # inside the vault, not its root
    (vault / "brain/linked-dir").symlink_to(outside, target_is_directory=True)
    world = World(tmp, vault, outside)
    for name, marker in (("atlas", None), ("beta-repo", "beta\nplatforms: ios\n"), ("web", None)):
        repo = tmp / name
        repo.mkdir()
        if marker:
            (repo / ".shardmind-project").write_text(marker, encoding="utf-8")
        world.repos[name] = repo
    return world


def uri(path: Path) -> str:
    return path.resolve().as_uri()


@dataclass
class Session:
    client: ClientSession
    roots: list[str]
    errlog: Path

    async def call(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result = await self.client.call_tool(tool, args or {})
        assert result.structured_content is not None, result
        return dict(result.structured_content)

    async def change_roots(self, roots: list[str]) -> None:
        self.roots[:] = roots
        with warnings.catch_warnings():  # roots are deprecated from 2026-07-28; this is the 2025 era
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await self.client.send_roots_list_changed()


@contextlib.asynccontextmanager
async def connect(
    world: World,
    *,
    cwd: Path,
    roots: list[str] | None = None,
    args: Sequence[str] = (),
    modern: bool = False,
    env: dict[str, str] | None = None,
) -> AsyncIterator[Session]:
    """A real server child (``python -m shardpy serve VAULT ARGS``) and an SDK client session on its stdio."""
    argv = shardpy_argv("serve", world.vault, *args)
    extra = {"XDG_CACHE_HOME": str(world.root / "cache"), **(env or {})}
    params = StdioServerParameters(command=argv[0], args=argv[1:], cwd=str(cwd), env=child_env(extra))
    state = list(roots or [])
    callback: Any = None
    if roots is not None:

        async def callback(context: ClientRequestContext) -> types.ListRootsResult | types.ErrorData:
            return types.ListRootsResult(roots=[types.Root(uri=u) for u in state])

    errlog = world.root / f"stderr-{os.getpid()}-{id(state)}.log"
    with errlog.open("w") as err:
        async with (
            stdio_client(params, errlog=err) as (read, write),
            ClientSession(read, write, list_roots_callback=callback) as client,
        ):
            if modern:
                # The SDK gives a discover probe 10 s; a loaded test machine can take longer than that
                # just to import the SDK in the server child.
                import mcp.client.session as client_session

                client_session.DISCOVER_TIMEOUT_SECONDS = 120.0
                await client.discover()
            else:
                await client.initialize()
            yield Session(client, state, errlog)
    assert "Traceback" not in errlog.read_text(), errlog.read_text()


@dataclass
class Shared:
    """A session kept open across tests (one server start, the expensive part: the SDK's import)."""

    portal: Any
    session: Session

    def call(self, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        result: dict[str, Any] = self.portal.call(self.session.call, tool, args)
        return result

    def run(self, fn: Any, *args: Any) -> Any:
        return self.portal.call(fn, *args)


@contextlib.contextmanager
def shared(world: World, **kwargs: Any) -> Iterator[Shared]:
    from anyio.from_thread import start_blocking_portal

    with (
        start_blocking_portal() as portal,
        portal.wrap_async_context_manager(connect(world, **kwargs)) as session,
    ):
        yield Shared(portal, session)
