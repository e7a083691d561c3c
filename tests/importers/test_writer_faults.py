"""The batched writer under a failure at any point (a property test over where it strikes).

A write that fails in a writer thread, or a batch whose flush or record
fails, stops the run; ``--resume`` then ends with exactly the notes of an
uninterrupted run, and ``--abandon`` with the vault as it was. Chunk and
batch sizes are drawn too, so the failure lands before, inside and between
flushes that run beside the writers.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shardpy.apply import executor as apply_mod
from shardpy.apply.batch import incomplete_runs
from shardpy.flows import importflow as service
from shardpy.flows.importflow import abandon_run, resume
from tests.importers.fixtures import generated_project, tree_hash
from tests.importers.helpers import do_import

NOTES = 40
NOW = service.utc_now()


def _notes(vault: Path) -> dict[str, str]:
    return {k: v for k, v in tree_hash(vault).items() if not k.startswith(".shardmind")}


@pytest.fixture(scope="module")
def reference() -> Iterator[tuple[Path, dict[str, str]]]:
    with tempfile.TemporaryDirectory() as tmp:
        src = generated_project(Path(tmp) / "src", NOTES)
        ref = Path(tmp) / "ref"
        ref.mkdir()
        do_import("basic-memory", src, ref, apply=True, now=NOW)
        yield src, _notes(ref)


class Boom(RuntimeError):
    pass


def _failing_at(real: Any, nth: int) -> Any:
    calls = {"n": 0}

    def call(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == nth:
            raise Boom(f"failure at call {nth}")
        return real(*args, **kwargs)

    return call


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    where=st.sampled_from(["_do_step", "_flush", "record_flushed"]),
    nth=st.integers(min_value=1, max_value=NOTES),
    sync_every=st.sampled_from([1, 4, 16, 1024]),
    chunk=st.sampled_from([1, 3, 256]),
    then=st.sampled_from(["resume", "abandon"]),
)
def test_a_failure_anywhere_in_the_writer_is_finished_or_undone_exactly(
    reference: tuple[Path, dict[str, str]],
    monkeypatch: pytest.MonkeyPatch,
    where: str,
    nth: int,
    sync_every: int,
    chunk: int,
    then: str,
) -> None:
    src, expected = reference
    with tempfile.TemporaryDirectory() as tmp, monkeypatch.context() as mp:
        vault = Path(tmp) / "vault"
        vault.mkdir()
        (vault / "Mine.md").write_text("the user's own\n", encoding="utf-8")
        before = _notes(vault)
        mp.setattr(apply_mod, "SYNC_EVERY", sync_every)
        mp.setattr(apply_mod, "SYNCFS_MIN", 1)  # small batches flushed by syncfs as large ones are
        mp.setattr(apply_mod, "WRITE_CHUNK", chunk)
        owner: Any = apply_mod._Run if where == "record_flushed" else apply_mod
        if where != "_do_step":
            nth = 1 + (nth - 1) % 4  # a run has fewer flushes than steps: strike one it makes
        mp.setattr(owner, where, _failing_at(getattr(owner, where), nth))
        try:
            do_import("basic-memory", src, vault, apply=True, now=NOW)
        except Boom:
            failed = True
        else:
            failed = False  # it struck past the last call: the run is simply complete
        mp.undo()
        if not failed:
            assert incomplete_runs(vault) == []
        elif then == "resume":
            out = resume(vault)
            assert out.applied.changed == [] and out.applied.errors == []
            assert out.applied.written + out.applied.already == out.remaining
        else:
            _, res = abandon_run(vault)
            assert res.left == []
            assert _notes(vault) == before
            return
        assert incomplete_runs(vault) == []
        assert {k: v for k, v in _notes(vault).items() if k != "Mine.md"} == expected
        again = do_import("basic-memory", src, vault, now=NOW).plan.counts()
        assert again["create"] == again["update"] == again["error"] == 0
