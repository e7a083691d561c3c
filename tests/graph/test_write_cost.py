"""A graph write's cost follows what it writes, not the size of the graph folder (issue 28,
"Speed": one ``add_observations`` listed the 20,000 notes of ``<memory_root>/graph/`` to look for
temporary files), while a killed write's temporary file is still removed by the next command."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from shardpy.apply.transaction import Op, Transaction
from shardpy.fsutil import TMP_MARK
from tests.graph.kit import graph_manifest
from tests.serve.kit import World, connect
from tests.shardkit import child_env

FOLDER = "memories/graph"


def _graph(vault: Path, n: int) -> None:
    graph_manifest(vault)
    folder = vault / FOLDER
    folder.mkdir(parents=True)
    for i in range(n):
        (folder / f"E{i}.md").write_text(f"---\nentity: E{i}\n---\n# E{i}\n", encoding="utf-8")


def test_a_finished_transaction_does_not_list_the_folders_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _graph(tmp_path, 50)
    listed: list[str] = []
    real = os.scandir

    def scandir(path: str | os.PathLike[str] = ".") -> Iterator[os.DirEntry[str]]:
        listed.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    Transaction(tmp_path, "serve-add-observations").run([Op.write(f"{FOLDER}/E7.md", b"# E7\n\n- new\n")])
    monkeypatch.undo()
    assert (tmp_path / FOLDER / "E7.md").read_bytes() == b"# E7\n\n- new\n"
    assert not [p for p in listed if Path(p) == tmp_path / FOLDER], listed
    assert not [p.name for p in (tmp_path / FOLDER).iterdir() if p.name.startswith(TMP_MARK)]


# A process killed between writing a note's temporary file and renaming it over the note: the
# journal says "applying", the temporary file is complete, the note is still the old one.
_KILLED_WRITER = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from shardpy.apply.session import session
    from shardpy.apply.transaction import Op
    from shardpy.fsutil import TMP_MARK

    real = os.replace

    def replace(src, dst, **kw):
        note = os.fspath(dst).endswith("/memories/graph/E3.md") and "backups" not in os.fspath(dst)
        if TMP_MARK in os.fspath(src) and note:
            os._exit(9)  # killed: no rollback, no cleanup runs
        return real(src, dst, **kw)

    os.replace = replace
    with session(Path(sys.argv[1]), "serve add-observations") as s:
        s.run([Op.write("memories/graph/E3.md", b"# E3\\n\\n- half\\n")], label="serve-add-observations")
    """
)


def test_a_killed_transactions_temp_file_is_removed_by_the_next_command(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _graph(vault, 5)
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_WRITER, str(vault)], env=child_env(), capture_output=True, text=True
    )
    assert killed.returncode == 9, killed.stderr
    temps = [p.name for p in (vault / FOLDER).iterdir() if p.name.startswith(TMP_MARK)]
    assert temps and (vault / ".shardmind/journal.json").exists()  # what the kill left
    (tmp_path / "atlas").mkdir()
    world = World(tmp_path, vault, tmp_path, {"atlas": tmp_path / "atlas"})

    async def next_write() -> dict[str, Any]:
        async with connect(world, cwd=world.repos["atlas"]) as s:
            args = {"observations": [{"entityName": "E3", "contents": ["whole"]}]}
            assert not (await s.client.call_tool("add_observations", args)).is_error
            got = await s.client.call_tool("open_nodes", {"names": ["E3"]})
            graph: dict[str, Any] | None = got.structured_content
            assert graph is not None
            return graph

    graph = anyio.run(next_write)
    assert graph["entities"][0]["observations"] == ["whole"]  # the killed write rolled back, not "half"
    assert not [p.name for p in (vault / FOLDER).iterdir() if p.name.startswith(TMP_MARK)]
    assert not (vault / ".shardmind/journal.json").exists()
