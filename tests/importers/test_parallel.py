"""The second pass in worker processes gives the same plan and journal as in one process."""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from shardpy import workers as parallel
from shardpy.flows.importflow import make_adapter
from shardpy.plan.importplan import PlanOptions
from tests.importers.fixtures import basic_memory_project, generated_project
from tests.importers.helpers import do_import, planned

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are Linux-only")


def _plan(src: Path, vault: Path, workers: int, *, sink: bool) -> tuple[dict[str, Any], list[Any]]:
    opts = PlanOptions(
        into="memories/basic-memory",
        imported_at="2026-11-29T00:00:00.000Z",
        keep_resolved_links=True,
        source_label=str(src),
        workers=workers,
    )
    return planned(make_adapter("basic-memory", src, strict=False), vault, opts, apply=sink)


def _source(tmp_path: Path) -> Path:
    src = generated_project(tmp_path / "src", 300)
    basic_memory_project(src / "fixture")
    return src


@pytest.mark.parametrize("sink", [False, True])
def test_workers_plan_like_one_process(tmp_path: Path, sink: bool) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Home.md").write_text("# Home\n\nSee [[Generated Note 3]].\n", encoding="utf-8")
    one = _plan(src, vault, 1, sink=sink)
    two = _plan(src, vault, 2, sink=sink)
    assert one == two
    assert one[0]["summary"]["create"] > 300
    if sink:
        assert [s.index for s, *_ in two[1]] == list(range(len(two[1])))


def test_workers_plan_updates_and_merges_like_one_process(tmp_path: Path) -> None:
    src = _source(tmp_path)
    vault = tmp_path / "vault"
    vault.mkdir()
    do_import("basic-memory", src, vault, apply=True)
    notes = sorted((vault / "memories/basic-memory").rglob("Generated Note 1*.md"))
    for p in notes[:3]:  # edited in the vault only
        p.write_text(p.read_text("utf-8") + "\nmy own line\n", encoding="utf-8")
    for p in sorted(src.rglob("Generated Note 2*.md"))[:3]:  # changed in the source only
        p.write_text(p.read_text("utf-8") + "- [late] added #x\n", encoding="utf-8")
    one = _plan(src, vault, 1, sink=True)
    two = _plan(src, vault, 2, sink=True)
    assert one == two
    counts = one[0]["summary"]
    assert counts["update"] >= 3 and counts["unchanged"] > 300


def test_a_worker_closes_inherited_folder_descriptors(tmp_path: Path) -> None:
    """A worker must not hold the vault lock (an flock on the vault folder) after its parent dies."""
    folder_fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(folder_fd, fcntl.LOCK_EX)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - child
        try:
            parallel._close_inherited_folders()
            try:
                os.fstat(folder_fd)
                os.write(w, b"open")
            except OSError:
                os.write(w, b"closed")
        finally:
            os._exit(0)
    os.close(w)
    answer = os.read(r, 16)
    os.waitpid(pid, 0)
    os.close(r)
    fcntl.flock(folder_fd, fcntl.LOCK_UN)
    os.close(folder_fd)
    assert answer == b"closed"


@pytest.mark.parametrize(
    ("rss_mb", "budget", "expected"),
    [(60, None, 2), (120, None, 2), (150, None, 1), (190, None, 1), (190, "1000", 2), (50, "10", 1)],
)
def test_second_pass_workers_fit_the_memory_budget(
    monkeypatch: pytest.MonkeyPatch, rss_mb: int, budget: str | None, expected: int
) -> None:
    from shardpy.importers import pool

    monkeypatch.delenv(pool.WORKERS_ENV, raising=False)
    if budget is None:
        monkeypatch.delenv(pool.MEMORY_ENV, raising=False)
    else:
        monkeypatch.setenv(pool.MEMORY_ENV, budget)
    monkeypatch.setattr(parallel, "available_workers", lambda: 2)
    monkeypatch.setattr(parallel, "resident_bytes", lambda: rss_mb * 1024 * 1024)
    opts = PlanOptions(into="x", imported_at="t")
    assert pool._worker_count(opts, 50_000, shares_state=True) == expected
    assert pool._worker_count(opts, 50_000) == 2  # reading the source shares no planning state
    assert pool._worker_count(opts, 100) == 1  # too few records to pay for forking


def test_walked_items_travel_to_workers_unchanged() -> None:
    import pickle

    from shardpy.importers.walk import Found
    from shardpy.plan.importplan import LinkRow, Skipped

    items = [
        Found("a/b.md", "/src/a/b.md", 12),
        Skipped("c.md", "empty file"),
        LinkRow("a/b.md", "[[X]]", "resolved", "m/X.md", "", None),
    ]
    assert pickle.loads(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL)) == items


def test_planning_leaves_the_collector_on_and_as_it_was(tmp_path: Path) -> None:
    import gc

    from shardpy.importers.pool import collector_settled

    # The entry point freezes what is alive when a command ends (cli/app.py); a test that ran it
    # in this worker before left that behind (the suite failed by the order xdist chose).
    gc.unfreeze()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with collector_settled() as settle:
        settle()
        assert gc.isenabled() and gc.get_freeze_count() > 0
        cycle: list[object] = []
        cycle.append(cycle)  # garbage cycles made while planning (ruamel makes them) are still collected
        del cycle
        assert gc.collect() >= 1
    assert gc.get_freeze_count() == 0
    src = generated_project(tmp_path / "src", 30)
    (tmp_path / "v").mkdir()
    _plan(src, tmp_path / "v", 1, sink=False)
    assert gc.isenabled() and gc.get_freeze_count() == 0
