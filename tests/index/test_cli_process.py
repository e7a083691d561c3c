"""`shardpy index` / `shardpy search` as real processes (the Typer-free fast path hooks use)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.index.conftest import write


def _shardpy(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "shardpy", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=os.environ.copy(),
    )


def test_index_only_and_search_json_in_a_child_process(tmp_path: Path) -> None:
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\n## Plans\n\nlaunch the rocket\n")
    done = _shardpy("index", "--json", cwd=vault)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["indexed"] == 1
    write(vault, "b.md", "# B\n\nthe rocket is late\n")
    done = _shardpy("index", "--only", "b.md", cwd=vault)
    assert done.returncode == 0 and "Indexed 1 notes" in done.stdout, done.stdout + done.stderr
    done = _shardpy("search", "rocket launch", "--json", "--top", "5", "--mode", "lexical", cwd=vault)
    data = json.loads(done.stdout)
    assert [h["path"] for h in data["hits"]] == ["a.md"] and data["match"] == "all"
    done = _shardpy("search", "", "--json", cwd=vault)
    assert done.returncode == 1 and json.loads(done.stdout)["error"]["code"] == "SEARCH_EMPTY_QUERY"
    assert "Traceback" not in done.stderr


def test_importing_the_package_is_cheap() -> None:
    code = "import sys, shardpy.index; print('sqlite3' in sys.modules, 'ruamel' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]


# What only a refresh needs (the walker, the note parser, gitignore matching), and Typer.
REFRESH_ONLY = (
    "shardpy.index.build",
    "shardpy.index.chunk",
    "shardpy.notes.frontmatter",
    "shardpy.notes.visibility",
    "pathspec",
    "shardpy.cli.status",
    "typer",
)


def _search_probe(vault: Path, then: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A reworded `shardpy search --json` in a child process that then runs ``then`` (which
    reports on stderr), the index taken as fresh."""
    probe = (
        "import os, runpy, sys\n"
        "sys.argv = ['shardpy', 'search', 'how do we roll back a bad deploy?', '--json']\n"
        "try:\n    runpy.run_module('shardpy', run_name='__main__')\nexcept SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n" + then
    )
    env = {**env, "SHARDPY_SEARCH_REFRESH_SECONDS": "3600"}
    done = subprocess.run([sys.executable, "-c", probe], cwd=vault, capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def test_a_search_that_does_not_refresh_loads_no_refresh_machinery(tmp_path: Path) -> None:
    """Issue 29: a one-shot `shardpy search` is a whole process; one that finds its index fresh
    loads nothing only a refresh uses (it imported the parser, the walker and pathspec: a fifth
    of the process)."""
    vault = tmp_path / "v"
    write(vault, "vault-manifest.json", '{"user_content_roots": ["notes/"], "search": {"exclude": ["x/"]}}')
    write(vault, "notes/Release reversal runbook.md", "# Release reversal runbook\n\nPin the old tag.\n")
    write(vault, "notes/Bread.md", "# Bread\n\nFeed the starter with rye flour.\n")
    hour_ago = time.time_ns() - 3600 * 10**9
    for folder in (vault, vault / "notes"):  # written well before the walk (searcher.MTIME_SLACK)
        os.utime(folder, ns=(hour_ago, hour_ago))
    assert _shardpy("index", cwd=vault).returncode == 0
    said = f"print(sorted(m for m in {REFRESH_ONLY!r} if m in sys.modules), file=sys.stderr)\n"
    done = _search_probe(vault, said, {**os.environ})
    hits = json.loads(done.stdout)["hits"]
    assert hits[0]["path"] == "notes/Release reversal runbook.md", hits
    assert done.stderr.strip().splitlines()[-1] == "[]", done.stderr[-2000:]


def test_a_search_process_starts_one_blas_thread_unless_told(tmp_path: Path) -> None:
    """A one-shot search by meaning imports numpy for one matrix-vector product; OpenBLAS's thread
    pool cost more CPU than the search (issue 29, the whole process). shardpy.index asks for one
    thread before numpy loads; a value the user set is kept."""
    vault = tmp_path / "v"
    write(vault, "notes/Release reversal runbook.md", "# Release reversal runbook\n\nPin the old tag.\n")
    assert _shardpy("index", cwd=vault).returncode == 0
    said = (
        "tasks = len(os.listdir('/proc/self/task')) if os.path.isdir('/proc/self/task') else 1\n"
        "print('numpy' in sys.modules, os.environ.get('OPENBLAS_NUM_THREADS'), tasks, file=sys.stderr)\n"
    )
    for given, expected in ((None, "1"), ("2", "2")):
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
        if given is not None:
            env["OPENBLAS_NUM_THREADS"] = given
        done = _search_probe(vault, said, env)
        loaded, threads, tasks = done.stderr.strip().splitlines()[-1].split()
        if loaded == "False":
            continue  # no model here: the search was lexical and loaded no numpy
        assert threads == expected
        if given is None:
            assert int(tasks) == 1  # no BLAS worker threads


def test_a_notes_escape_sequences_never_reach_the_terminal(tmp_path: Path) -> None:
    """A note holding an escape sequence retitled the terminal when its snippet was shown."""
    vault = tmp_path / "v"
    write(vault, "a.md", "# A\n\nplatypus \x1b]0;PWNED\x07 and \x1b[31mred\x1b[0m \x9b text\n")
    done = _shardpy("search", "platypus", "--mode", "lexical", cwd=vault)
    assert done.returncode == 0, done.stderr
    assert "platypus" in done.stdout and "PWNED" in done.stdout
    assert not any(c in done.stdout for c in "\x1b\x07\x9b"), repr(done.stdout)


def test_path_filters_given_from_here_or_absolute(tmp_path: Path) -> None:
    """--path /abs/vault/work, or ../work from inside brain/, named nothing: an empty list, no
    notice. They name the vault folder they point at."""
    from tests.shardkit import run_shardpy

    vault = tmp_path / "v"
    write(vault, "work/w.md", "# W\n\nquixotic plans\n")
    write(vault, "brain/b.md", "# B\n\nquixotic thoughts\n")
    env = {"SHARDPY_CACHE_DIR": str(tmp_path / "cache")}

    def hits(*args: str, cwd: Path) -> list[str]:
        done = run_shardpy(
            "search",
            "quixotic",
            "--mode",
            "lexical",
            "--json",
            "--vault",
            str(vault),
            *args,
            cwd=cwd,
            env=env,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return sorted(h["path"] for h in json.loads(done.stdout)["hits"])

    assert hits("--path", str(vault / "work"), cwd=tmp_path) == ["work/w.md"]
    assert hits("--path", "../work", cwd=vault / "brain") == ["work/w.md"]
    assert hits("--path", ".", cwd=vault / "brain") == ["brain/b.md"]
    assert hits("--path", "work", cwd=vault / "brain") == ["work/w.md"]  # plain: vault-relative
