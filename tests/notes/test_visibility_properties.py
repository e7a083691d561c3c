"""Issue 25, "Must show": on random trees and manifests, every note an MCP surface returns is one
the index holds, and the withholding rules exclude the same notes from both.

Random trees: folders and file names in several cases, dot-folders, skipped folders
(``credentials``, ``Transcripts``, ``session-logs``), sync-conflict copies (the three spellings
docs/SEARCH.md names), ``.markdown`` and non-note files, the memory root and its ``graph/`` folder;
notes plain, private (tagged in a flow list, a block list or one string with ``#``, any case; or
``private: true``) and soft-deleted (``disabled: true``); links to notes, to folders, out of the
vault and nowhere. Random manifests: exposed roots (or the fallback) and ``mcp_never_expose``
names, paths and folders in any case.

The index is the real one (``shardpy.index.refresh`` and its files table); the surfaces are the
server's own functions (resources/list is ``Exposure.notes()``, resources/read ``read_text``,
recall the memory ``Store``, search ``tools.search``). The expected sets are computed here from the
rule as documented (docs/SEARCH.md "What is indexed", docs/SERVE.md "Exposure"), not from the code
under test.
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from shardpy import index
from shardpy.index import store
from shardpy.serve import tools
from shardpy.serve.identity import Caller
from shardpy.serve.memories import Store
from tests.security.test_exposure_properties import free_path, plant_link

FOLDERS = ["", "brain", "brain/sub", "Brain", "reference", "people/private", "People/Private/x", "secret",
           "memories", "memories/2026", "memories/graph", "memories/credentials", "credentials",
           "brain/Transcripts", "work/session-logs", ".hidden", "brain/.trash"]  # fmt: skip
NAMES = ["a.md", "B.md", "soul.md", "SOUL.md", "c.sync-conflict-20261101-120000-ABC.md",
         "d (conflicted copy).md", "g (Conflict 2026-11-01).md", "e.markdown", "f.txt", ".dot.md",
         "Secret.md"]  # fmt: skip
ROOTS = ["brain", "Brain", "reference", "people", "secret", "memories", "memories/2026", "brain/sub"]
NEVER = ["SOUL.md", "secret", "people/private/", "BRAIN/SUB", "b.md", "Memories/2026"]
KINDS = ["note", "note", "private", "private-string", "private-block", "private-key", "disabled"]
PRIVATE = ("private", "private-string", "private-block", "private-key")
SKIPPED = {"transcripts", "session-logs", "node_modules", "credentials"}
MEMORY = "memories"
FALLBACK = ("brain", "reference")


@dataclass(frozen=True)
class Spec:
    path: str
    kind: str  # a KINDS entry, "link" or "dirlink"
    target: str = ""  # for links: a vault path, "OUT" or "NONE"


paths = st.builds(lambda f, n: f"{f}/{n}" if f else n, st.sampled_from(FOLDERS), st.sampled_from(NAMES))
folders = st.sampled_from([f for f in FOLDERS if f])
trees = st.lists(
    st.one_of(
        st.builds(Spec, paths, st.sampled_from(KINDS)),
        st.builds(Spec, paths, st.just("link"), st.one_of(paths, st.sampled_from(["OUT", "NONE"]))),
        st.builds(Spec, st.sampled_from(["brain/linked", "reference/linked"]), st.just("dirlink"),
                  st.one_of(folders, st.just("OUT"))),
    ),
    min_size=1,
    max_size=16,
)  # fmt: skip
manifests = st.fixed_dictionaries(
    {
        "mcp_exposed_roots": st.lists(st.sampled_from(ROOTS), max_size=3),
        "mcp_never_expose": st.lists(st.sampled_from(NEVER), max_size=3),
    }
)


def _text(kind: str, marker: str) -> str:
    head = {
        "note": "tags: [note]\n",
        "private": "tags: [notes, Private]\n",
        "private-string": "tags: '#ideas, #PRIVATE'\n",  # one string: commas and blanks, # dropped
        "private-block": "tags:\n  - work\n  - private\n",
        "private-key": "private: true\n",
        "disabled": "disabled: true\ndisabled_at: 2026-11-01T00:00:00Z\n",
    }[kind]
    return f"---\n{head}scope: general\n---\n# T {marker}\n\nbody {marker}\n"


def _build(base: Path, tree: list[Spec], manifest: dict[str, Any]) -> tuple[Path, dict[str, Spec]]:
    """The vault on disk; returns it and {vault path of each regular file written: its spec}."""
    vault = base / "vault"
    vault.mkdir()
    outside = base / "outside"
    outside.mkdir()
    (outside / "OUT.md").write_text("# out\n\nMARKOUT\n")
    (vault / "vault-manifest.json").write_text(json.dumps({**manifest, "memory_root": MEMORY}))
    written: dict[str, Spec] = {}
    for n, spec in enumerate(tree):
        full = free_path(vault, spec.path)
        if full is None:
            continue
        if spec.kind in KINDS:
            full.write_text(_text(spec.kind, f"MARK{n}X"))
            written[spec.path] = spec
        else:
            plant_link(vault, full, spec.target, outside if spec.kind == "dirlink" else outside / "OUT.md")
    return vault, written


def _prefixes(path: str) -> list[str]:
    parts = path.casefold().split("/")
    return ["/".join(parts[: k + 1]) for k in range(len(parts))]


def _never(path: str, never: list[str]) -> bool:
    """mcp_never_expose as docs/SEARCH.md states it: a file or folder, by name or vault path, any case."""
    names = {n.strip("/").casefold() for n in never}
    return bool(names & (set(path.casefold().split("/")) | set(_prefixes(path))))


def _covered(path: str, spec: Spec, never: list[str]) -> bool:
    """What the index holds (docs/SEARCH.md "What is indexed", and issue 30's soft delete)."""
    parts = path.split("/")
    name = parts[-1]
    return not (
        not name.casefold().endswith((".md", ".markdown"))
        or any(p.startswith(".") for p in parts)
        or any(p.casefold() in SKIPPED for p in parts[:-1])
        or "sync-conflict" in name
        or "conflicted copy" in name
        or "(conflict" in name.casefold()
        or _never(path, never)
        or spec.kind == "disabled"
    )


def _roots(manifest: dict[str, Any]) -> list[str]:
    declared = [r for r in manifest["mcp_exposed_roots"] if r.casefold().split("/")[0] != MEMORY]
    return declared if manifest["mcp_exposed_roots"] else list(FALLBACK)


def _served(path: str, spec: Spec, manifest: dict[str, Any]) -> bool:
    """What the server adds on top (docs/SERVE.md "Exposure"): roots, the memory root, private."""
    return (
        path.endswith(".md")
        and path.casefold().split("/")[0] != MEMORY
        and spec.kind not in PRIVATE
        and any(path.startswith(root + "/") for root in _roots(manifest))
    )


def _index_paths(vault: Path) -> set[str]:
    index.refresh(vault)
    with sqlite3.connect(store.index_path(vault.resolve())) as conn:
        return {row[0] for row in conn.execute("SELECT path FROM files")}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees, manifest=manifests)
# Recall served a soft-deleted memory the index leaves out (found by this test).
@example(tree=[Spec("memories/a.md", "disabled")], manifest={"mcp_exposed_roots": [], "mcp_never_expose": []})
def test_every_served_note_is_indexed_and_both_withhold_alike(
    tree: list[Spec], manifest: dict[str, Any]
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(os.path.realpath(tmp))
        old = os.environ.get("SHARDPY_CACHE_DIR")
        os.environ["SHARDPY_CACHE_DIR"] = str(base / "cache")
        try:
            _check(base, tree, manifest)
        finally:
            if old is None:
                os.environ.pop("SHARDPY_CACHE_DIR", None)
            else:
                os.environ["SHARDPY_CACHE_DIR"] = old


def _check(base: Path, tree: list[Spec], manifest: dict[str, Any]) -> None:
    vault, written = _build(base, tree, manifest)
    never = manifest["mcp_never_expose"]
    expected_index = {p for p, s in written.items() if _covered(p, s, never)}
    expected_served = {p for p in expected_index if _served(p, written[p], manifest)}
    expected_recall = {
        p for p in expected_index if p.startswith(MEMORY + "/") and p.endswith(".md") and "/graph/" not in p
    }

    indexed = _index_paths(vault)
    assert indexed == expected_index, (sorted(indexed ^ expected_index), tree, manifest)

    served = tools.Served.open(vault)
    listed = set(served.exposure.notes())  # resources/list, expand's links and backlinks, health
    assert listed == expected_served, (sorted(listed ^ expected_served), tree, manifest)
    assert listed <= indexed

    links = {s.path for s in tree if s.kind in ("link", "dirlink")}
    for path in {*written, *links, *(f"{link}/a.md" for link in links)}:
        text = served.exposure.read_text(path)  # resources/read, expand, each search and QMD hit
        assert (text is not None) == (path in expected_served), (path, tree, manifest)

    recalled = {m.path for m in Store(vault, MEMORY).all()}  # recall, before each caller's reach
    assert recalled == expected_recall, (sorted(recalled ^ expected_recall), tree, manifest)
    assert recalled <= indexed

    for n in range(len(tree)):
        result = tools.search(served, Caller("atlas"), tools.SearchArgs(query=f"MARK{n}X"))
        assert {h["path"] for h in result["hits"]} <= expected_served & indexed
