"""A large refresh embeds its sections in forked workers (issue 29, the cold index's cost): the same
vectors as one process, every row where it belongs, an edit afterwards still re-embeds only what
changed, and Ctrl-C stays the parent's (no worker prints a traceback)."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from shardpy import index, workers
from shardpy.index import embed, vectors
from tests.index.conftest import write


def _vault(root: Path) -> Path:
    for i in range(30):
        write(
            root,
            f"area-{i % 3}/Note {i:02}.md",
            f"# Note {i}\n\nPreamble {i} on kilns and glazes.\n\n## Firing\n\nCone {i} in a gas kiln, "
            f"reduction at {900 + i} degrees.\n\n## Notes  with  runs   of spaces \n\nsecond {i}  \n",
        )
    return root


def _vectors(cache: Path, vault: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(cache))
    index.refresh(vault)
    with sqlite3.connect(index.index_path(vault)) as conn:
        rows = conn.execute(
            "SELECT f.path, c.line, v.vec FROM vectors AS v JOIN chunks AS c ON c.id = v.chunk_id "
            "JOIN files AS f ON f.id = c.file_id"
        ).fetchall()
    return {f"{path}:{line}": bytes(vec) for path, line, vec in rows}


def test_a_large_refresh_embeds_in_workers_and_stores_what_one_process_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    vault = _vault(tmp_path / "v")
    assert getattr(embed.load(), "forkable", False)  # the bundled model: numpy and plain-Python BPE
    monkeypatch.setattr(vectors, "EMBED_STEP", 7)  # 90 sections: 13 steps, the last one short
    serial = _vectors(tmp_path / "serial", vault, monkeypatch)

    pids = tmp_path / "pids"
    rows = vectors._rows

    def recorded(work: tuple[embed.Embedder, list[str]], lo: int, hi: int) -> bytes:
        with open(pids, "a", encoding="utf-8") as fh:
            fh.write(f"{os.getpid()}\n")
        return rows(work, lo, hi)

    monkeypatch.setattr(vectors, "_rows", recorded)
    monkeypatch.setattr(vectors, "PARALLEL_SECTIONS", 10)
    monkeypatch.setattr(workers, "available_workers", lambda: 2)
    parallel = _vectors(tmp_path / "parallel", vault, monkeypatch)

    seen = set(pids.read_text(encoding="utf-8").split())
    assert str(os.getpid()) not in seen and len(pids.read_text().split()) == 13  # every step, in workers
    assert len(serial) == 90 and parallel == serial  # byte for byte, each section's own vector

    # After the parallel build, an edit re-embeds one section, in this process (one is below the bar).
    pids.unlink()
    note = vault / "area-1/Note 04.md"
    note.write_text(note.read_text().replace("gas kiln", "wood kiln"), encoding="utf-8")
    assert index.refresh(vault).indexed == 1
    assert pids.read_text().split() == [str(os.getpid())]


def _ask_sigint(work: object, payload: int) -> str:
    import signal

    return str(signal.getsignal(signal.SIGINT))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are Linux-only")
def test_workers_leave_ctrl_c_to_the_parent() -> None:
    import signal

    got = list(workers.run_stream(None, iter([1, 2, 3]), 2, _ask_sigint))
    assert got == [str(signal.SIG_IGN)] * 3


def _children(pid: int) -> list[int]:
    """Processes whose parent is ``pid`` (Linux: /proc/N/stat, the field after the name)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_text()
            except OSError:
                continue
            if stat.rsplit(")", 1)[-1].split()[1] == str(pid):
                found.append(int(name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="workers are Linux-only")
def test_ctrl_c_during_a_parallel_cold_index_prints_no_traceback(tmp_path: Path) -> None:
    """Ctrl-C reaches the whole foreground process group: the workers too. Only the parent
    speaks (workers printed a KeyboardInterrupt traceback each), and nothing is kept. Sent as
    soon as the first worker exists: one forked a moment before still printed its traceback
    when it took the signal before ignoring it (1 run in 30 here, 0 with the signal held back
    across the fork)."""
    import signal
    import subprocess
    import time

    vault = tmp_path / "v"
    (vault / ".obsidian").mkdir(parents=True)
    section = "Cone {i} firing in a gas kiln with a long reduction and slow cooling. " * 6
    for i in range(2400):  # past both bars: 1,000 notes read in workers, 2,048 sections embedded
        body = "".join(f"## Part {k}\n\n{section.format(i=i)}\n\n" for k in range(4))
        write(vault, f"n/{i // 100:02}/Note {i:04}.md", f"# Note {i}\n\n{body}")
    env = {**os.environ, "SHARDPY_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "shardpy", "index", "."],
        cwd=vault,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 120
    while proc.poll() is None and not _children(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    if proc.poll() is not None:
        pytest.fail(f"the index finished before its workers were seen: {proc.communicate()}")
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C does on a terminal
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (out, err)
    assert "Interrupted" in err and "Traceback" not in err and "ForkPoolWorker" not in err, err
    assert not index.index_path(vault).exists() or not _rows_in(index.index_path(vault))


def _rows_in(db: Path) -> int:
    with sqlite3.connect(db) as conn:
        try:
            return int(conn.execute("SELECT count(*) FROM files").fetchone()[0])
        except sqlite3.OperationalError:
            return 0


def test_each_worker_gets_several_steps_and_the_rows_do_not_depend_on_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    model = embed.load()
    texts = [f"Note {i}: cone {i % 13} firing, glaze {i % 7}, kiln log" for i in range(3000)]
    monkeypatch.setattr(workers, "available_workers", lambda: 1)
    serial = list(vectors._embedded(model, texts))
    assert [s for s, _ in serial] == [(0, 3000)]  # one step of EMBED_STEP alone
    monkeypatch.setattr(workers, "available_workers", lambda: 2)
    parallel = list(vectors._embedded(model, texts))
    assert [s for s, _ in parallel] == [(lo, min(lo + 375, 3000)) for lo in range(0, 3000, 375)]
    assert b"".join(r for _, r in parallel) == serial[0][1]


def test_a_few_texts_give_the_bytes_many_give() -> None:
    """The write hook's few texts are embedded without the whole float32 table or the merges' dict
    (a hook process paid ~40 ms for them); a cold index's many texts with both: the same rows."""
    import numpy as np

    texts = [
        "",
        "Release reversal runbook: redeploy the previous tag",
        "Crème brûlée — 日本語のノート, Ελληνικά, emoji 🙂 and `code_fence()`",
        " ".join(f"word{i} kiln glaze cone {i}" for i in range(300)),  # past MAX_TOKENS
        *(f"# Note {i}\n\nPreamble {i} on kilns and glazes, at {900 + i} degrees." for i in range(40)),
    ]
    few = embed._wordllama()
    small = np.vstack([few.encode(texts[i : i + 3]) for i in range(0, len(texts), 3)])
    assert few.whole is None and not isinstance(few.tok.merges, dict)
    many = embed._wordllama()
    whole = many.encode(texts)
    assert len(texts) >= embed.MANY_TEXTS and many.whole is not None and isinstance(many.tok.merges, dict)
    assert small.tobytes() == whole.tobytes()
