"""The pure modules in-process: visibility, ranking, identity, audit bounds, search's over-fetch, config."""

from __future__ import annotations

import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardpy.index import hybrid
from shardpy.index.model import SearchHit
from shardpy.index.query import translate
from shardpy.serve import tools
from shardpy.serve.audit import FIELD_CHARS, AuditLog, bounded
from shardpy.serve.identity import Caller, caller_from_roots, root_to_path
from shardpy.serve.memories import Memory, parse_memory, ranked, visible
from tests.serve.kit import build_world
from tests.shardkit import Cli


def mem(scope: str, projects: tuple[str, ...] = (), platforms: tuple[str, ...] = (), **kw: Any) -> Memory:
    base: dict[str, Any] = {
        "path": kw.pop("path", "memories/m.md"),
        "title": "t",
        "body": "b",
        "scope": scope,
        "projects": projects,
        "platforms": platforms,
        "confidence": "observed",
        "date": "2026-11-01",
        "session": "",
        "origin": "",
        "superseded_by": "",
        "supersedes": (),
        "problems": (),
    }
    base.update(kw)
    return Memory(**base)


ATLAS = Caller("atlas", ("ios",), "folder")
NOBODY = Caller(None)


@pytest.mark.parametrize(
    ("memory", "caller", "seen"),
    [
        (mem("general"), NOBODY, True),  # general reaches everyone
        (mem("project", ("atlas",)), ATLAS, True),
        (mem("project", ("beta",)), ATLAS, False),  # default deny
        (mem("general", ("beta",)), ATLAS, True),
        (mem("platform", ("atlas",), ("web",)), ATLAS, True),  # a projects listing wins whatever the scope
        (mem("platform", (), ("ios",)), ATLAS, True),  # platforms overlap
        (mem("platform", (), ("web",)), ATLAS, False),
        (mem("platform", (), ("ios",)), NOBODY, False),  # no project: general only
        (mem("project", ("atlas",)), NOBODY, False),
        (mem("general", problems=("bad",)), ATLAS, False),  # failing validation: never recalled
    ],
)
def test_visibility_rule(memory: Memory, caller: Caller, seen: bool) -> None:
    assert visible(memory, caller) is seen


def test_ranking_superseded_then_specificity_then_date_then_session() -> None:
    a = mem("general", path="a", date="2026-11-09")
    b = mem("project", ("atlas",), path="b", date="2026-11-01")
    c = mem("platform", (), ("ios",), path="c", date="2026-11-05")
    d = mem("project", ("atlas",), path="d", date="2026-11-01", session="2026-11-01T12:00:00Z")
    old = mem("project", ("atlas",), path="old", date="2026-11-30", superseded_by="[[b]]")
    assert [m.path for m in ranked([a, b, c, d, old], None)] == ["d", "b", "c", "a", "old"]


@given(st.lists(st.sampled_from(["deploy", "friday", "tabs", "x"]), max_size=3))
def test_a_query_reorders_but_never_filters_nor_crosses_supersession(query_words: list[str]) -> None:
    live = [
        mem("general", path=f"l{i}", body=w, words=frozenset([w])) for i, w in enumerate(["deploy", "tabs"])
    ]
    dead = mem(
        "general", path="dead", body="deploy friday", superseded_by="[[l0]]", words=frozenset(["deploy"])
    )
    out = ranked([dead, *live], " ".join(query_words))
    assert sorted(m.path for m in out) == ["dead", "l0", "l1"]
    assert out[-1].path == "dead"


def test_parse_memory_reports_problems() -> None:
    m = parse_memory("memories/x.md", "---\nscope: platform\n---\n# X\n\nbody\n")
    assert m.problems == ("scope: platform with an empty platforms list reaches nobody",)
    assert parse_memory("memories/y.md", "---\nscope: general\n\n# unclosed\n").problems


def test_identity_from_roots(tmp_path: Path) -> None:
    repo = tmp_path / "My Repo"
    repo.mkdir()
    assert root_to_path("file:///a%20b/c") == Path("/a b/c")
    assert root_to_path("https://x/y") is None
    # "my repo" is not a valid project name: anonymous, general only.
    assert caller_from_roots([repo.as_uri()], tmp_path / "vault").project is None
    (repo / ".shardmind-project").write_text("Atlas-API\nplatforms: iOS, web\n")
    caller = caller_from_roots(["https://nope", repo.as_uri()], tmp_path / "vault")
    assert (caller.project, caller.platforms, caller.source) == ("atlas-api", ("ios", "web"), "roots")


def test_audit_fields_are_bounded_and_the_log_rotates(tmp_path: Path) -> None:
    assert bounded("x" * 10_000) == "x" * (FIELD_CHARS - 1) + "…"
    assert len(bounded(list(range(100)))) == 21
    log = AuditLog(tmp_path, rotate_bytes=2_000)
    for i in range(40):
        log.record("tool:search", {"project": "p"}, args={"query": "q" * 5_000}, n=i)
    lines = log.path.read_text().splitlines()
    assert all(len(line) < 1_000 for line in lines)
    assert (tmp_path / ".shardmind/serve-audit.1.jsonl").exists()
    assert json.loads(lines[-1])["n"] == 39


def _hit(path: str) -> SearchHit:
    return SearchHit(path, "t", (), "", 1.0, None, 1)


@dataclass
class FakeIndex:
    """The lexical search's contract: ranked hits over the WHOLE vault, paged by offset."""

    paths: list[str]
    calls: list[tuple[int, int]] = field(default_factory=list)

    def search(self, vault: Path, query: str, *, top: int, offset: int, **kw: Any) -> Any:
        self.calls.append((top, offset))

        @dataclass
        class Result:
            hits: list[SearchHit]
            match: str = "all"
            notices: list[str] = field(default_factory=list)
            unranked: bool = False

        return Result([_hit(p) for p in self.paths[offset : offset + top]])

    def ranked(self, vault: Path, query: str, *, top: int, offset: int, **kw: Any) -> Any:
        """searcher.ranked's shape: the page and how it was found (no expression: no snippets)."""
        return self.search(vault, query, top=top, offset=offset), ("", translate(query), query)


def test_search_over_fetches_until_the_filtered_result_fills_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = build_world(tmp_path)
    served = tools.Served.open(world.vault)
    # 50 withheld hits (memories, private, outside the roots) rank above the two served ones.
    withheld = ["memories/2026/11/2026-11-01 Everyone.md", "brain/Secret Plans.md", "reference/Ref.md"] * 17
    fake = FakeIndex([*withheld[:50], "brain/Gotchas.md", "work/active/Atlas.md"])
    monkeypatch.setattr(hybrid, "ranked", fake.ranked)  # the filtered paging is the index's
    out = tools.search(served, Caller("atlas"), tools.SearchArgs(query="q", limit=2, mode="lexical"))
    assert [h["path"] for h in out["hits"]] == ["brain/Gotchas.md", "work/active/Atlas.md"]
    assert "withheld" not in out and fake.calls == [(20, 0), (20, 20), (20, 40)]


def test_search_stops_examining_hits_once_the_limit_is_filled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    world = build_world(tmp_path)
    served = tools.Served.open(world.vault)
    fake = FakeIndex(["brain/Gotchas.md", "work/active/Atlas.md", *["brain/Secret Plans.md"] * 30])
    monkeypatch.setattr(hybrid, "ranked", fake.ranked)
    asked: list[str] = []
    may_read = served.exposure.may_read
    monkeypatch.setattr(served.exposure, "may_read", lambda p: asked.append(p) or may_read(p))
    out = tools.search(served, Caller("atlas"), tools.SearchArgs(query="q", limit=2, mode="lexical"))
    assert [h["path"] for h in out["hits"]] == ["brain/Gotchas.md", "work/active/Atlas.md"]
    assert "withheld" not in out and fake.calls == [(20, 0)]
    assert asked == ["brain/Gotchas.md", "work/active/Atlas.md"]


def test_print_config_for_each_client(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    world = build_world(tmp_path)
    monkeypatch.chdir(world.repos["beta-repo"])
    claude = json.loads(cli.run("serve", str(world.vault), "--print-config").stdout)
    args = claude["mcpServers"]["vault"]["args"]
    assert args[-4:] == ["serve", str(world.vault.resolve()), "--project", "beta"]
    gemini = json.loads(cli.run("serve", str(world.vault), "--print-config", "--for", "gemini").stdout)
    assert gemini == claude
    codex = tomllib.loads(cli.run("serve", str(world.vault), "--print-config", "--for", "codex").stdout)
    assert codex["mcp_servers"]["vault"]["args"] == args
    bad = cli.run("serve", str(world.vault), "--print-config", "--for", "vim")
    assert bad.exit_code == 2


def test_only_the_server_module_imports_the_sdk() -> None:
    """`--version`, status and install keep their start-up: nothing but shardpy.serve.server (and the
    prompts it uses) loads `mcp`."""
    import subprocess
    import sys

    code = (
        "import sys, shardpy.cli.commands, shardpy.flows.serve, shardpy.serve.tools, shardpy.serve.config\n"
        "import shardpy.importers.claude_code, shardpy.importers.mcp_memory\n"
        "bad = [m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))]\n"
        "assert not bad, bad"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("# Heading Title\n\nbody\n", "Heading Title"),
        ("---\ntitle: From the key\n---\n# Heading\n", "From the key"),
        ("---\ntitle: 42\n---\n# Heading\n", "42"),
        ("```\n# not a heading\n```\nplain\n", "Plain note"),
    ],
)
def test_a_served_notes_title_is_the_one_rule(tmp_path: Path, text: str, want: str) -> None:
    """expand and resources/list named a note by its file name where search used its heading (or
    a title that is not a string): both now ask notes/note.title."""
    from shardpy.serve.exposure import _note_of

    assert _note_of("brain/Plain note.md", text).title == want
