"""Issue 11 for import: a planted or damaged run journal, a corrupt ledger, a hostile source line,
--into a hidden folder, a live run, and an import over an unfinished install. Issue 12 item 5:
--resume after a kill while the plan was still being written."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from shardpy.apply.batch import JOURNAL_NAME, JOURNAL_SCHEMA, PLAN_NAME
from tests.importers.fixtures import basic_memory_project, mcp_lines
from tests.security.kit import import_killed, killed_after, make_victim
from tests.shardkit import Cli, make_shard, run_shardpy, tree_snapshot, write_tree
from tests.sources.support import GIT_ENV, git

RUN = "20260101T000000Z-abcdef"
PWNED = b"---\ntitle: pwned\n---\npwned\n"


def plant_run(vault: Path, target: str, *, vault_id: str | None) -> None:
    """A sealed import run whose one step writes ``target``, as a repository could ship it."""
    import hashlib

    run = vault / ".shardmind/imports" / RUN
    run.mkdir(parents=True)
    (run / PLAN_NAME).write_text("{}")
    conn = sqlite3.connect(run / JOURNAL_NAME)
    conn.executescript(JOURNAL_SCHEMA)
    meta = {"format": "basic-memory", "source": str(vault), "into": "memories/x", "state": "applying"}
    meta |= {"steps": "1", "imported_at": "2026-01-01T00:00:00.000Z", "into_existed": ""}
    if vault_id is not None:
        meta["vault_id"] = vault_id
        write_tree(vault, {".shardmind/vault-id": vault_id + "\n"})
    conn.executemany("INSERT INTO meta VALUES (?, ?)", list(meta.items()))
    conn.execute(
        "INSERT INTO steps (idx, action, kind, source_path, target, pre_sha, new_sha, source_hash,"
        " render_key, base_sha, new) VALUES (0, 'create', 'note', 'a.md', ?, NULL, ?, 'x', 'x', 'x', ?)",
        (target, hashlib.sha256(PWNED).hexdigest(), PWNED),
    )
    conn.commit()
    conn.close()


@pytest.mark.parametrize("bound", [False, True], ids=["planted", "planted-with-vault-id"])
def test_planted_import_journal_in_a_cloned_repository_never_writes_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bound: bool
) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    victim, before = make_victim(tmp_path)
    repo = write_tree(tmp_path / "repo", {"notes/a.md": "a\n"})
    plant_run(repo, "../victim/pwned.md", vault_id="0" * 32 if bound else None)
    git(repo, "init", "-q", "--template=", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "hostile")
    clone = tmp_path / "work" / "clone"
    clone.parent.mkdir()
    git(clone.parent, "clone", "-q", str(repo), str(clone))
    for verb in ("--resume", "--abandon"):
        code, _, err = _import(verb, cwd=clone)
        assert (code, err) == (1, "IMPORT_RUN_JOURNAL_INVALID")
    assert tree_snapshot(victim) == before
    assert not (tmp_path / "work/victim").exists() and not (tmp_path / "victim/pwned.md").exists()


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return basic_memory_project(tmp_path / "src", extras=False)


def _import(*args: str | Path, cwd: Path) -> tuple[int, dict[str, object], str]:
    """(exit code, the JSON document or {}, the error code or "") of ``shardpy import ARGS --json``."""
    done = run_shardpy("import", *args, "--json", cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    try:
        out = json.loads(done.stdout)
    except ValueError:
        out = {}
    # import prints its errors as text on stderr (issue 12 item 11 moves them to stdout as JSON)
    error = out.get("error") if isinstance(out, dict) else None
    found = re.search(r"\[([A-Z0-9_]+)\]", done.stderr)
    code = str(error["code"]) if isinstance(error, dict) else (found.group(1) if found else "")
    return done.returncode, out, code


def test_resume_after_a_kill_while_the_plan_was_written_never_reports_success(
    tmp_path: Path, source: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    import_killed("seal", "--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    done = run_shardpy("import", "--resume", "--vault", vault, cwd=tmp_path)
    assert done.returncode == 1
    assert "IMPORT_NOTHING_TO_RESUME" in done.stderr and "was interrupted while its plan" in done.stderr
    assert list((vault / ".shardmind/imports").iterdir()) == []
    code, out, _err = _import("--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    assert code == 0, out


def test_truncated_run_journal_is_a_typed_error_and_abandon_sets_it_aside(
    tmp_path: Path, source: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    import_killed("execute", "--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    (journal,) = (vault / ".shardmind/imports").glob(f"*/{JOURNAL_NAME}")
    data = journal.read_bytes()
    journal.write_bytes(data[: len(data) // 3])
    code, out, err = _import("--resume", "--vault", vault, cwd=tmp_path)
    assert (code, err) == (1, "IMPORT_RUN_JOURNAL_CORRUPT")
    code, out, err = _import("--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    assert (code, err) == (1, "IMPORT_RUN_INTERRUPTED")
    code, out, err = _import("--abandon", "--vault", vault, cwd=tmp_path)
    assert code == 0 and out["journal_unreadable"] is True, out
    code, out, err = _import("--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    assert code == 0, out


def test_corrupt_ledger_is_a_typed_error_with_a_way_out(tmp_path: Path, source: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    code, out, err = _import("--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    assert code == 0, out
    ledger = vault / ".shardmind/imports/ledger.sqlite3"
    ledger.write_bytes(b"this is not a database" * 100)
    for extra in ((), ("--apply",)):
        code, out, err = _import("--from", "basic-memory", source, vault, *extra, cwd=tmp_path)
        assert (code, err) == (1, "IMPORT_LEDGER_CORRUPT")
    ledger.rename(ledger.with_name("ledger.sqlite3.damaged"))  # the hint's way out
    before = tree_snapshot(vault / "memories")
    _, out, err = _import("--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    assert err == "" and "summary" in out, out
    assert tree_snapshot(vault / "memories") == before, "notes the import no longer knows were overwritten"


def test_deeply_nested_jsonl_line_is_skipped_as_a_bad_line(tmp_path: Path) -> None:
    graph = tmp_path / "memory.jsonl"
    good = mcp_lines([{"type": "entity", "name": "Dana", "entityType": "person", "observations": ["x"]}])
    graph.write_bytes(good + b"\n" + b"[" * 200_000 + b"\n")
    vault = tmp_path / "vault"
    vault.mkdir()
    code, out, _err = _import("--from", "mcp-memory", graph, vault, cwd=tmp_path)
    assert code == 0, out
    text = json.dumps(out)
    assert "nested too deeply" in text


def test_into_a_hidden_folder_below_the_first_level_is_refused(tmp_path: Path, source: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    for into in ("notes/.shardmind", "notes/.obsidian/x", ".shardmind/imports"):
        code, _out, err = _import("--from", "basic-memory", source, vault, "--into", into, cwd=tmp_path)
        assert (code, err) == (1, "IMPORT_INTO_UNSAFE"), into
    assert not (vault / "notes").exists()


HOLD_LOCK = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
sys.stdin.read()
"""


def test_dry_run_during_a_live_apply_does_not_claim_it_was_interrupted(tmp_path: Path, source: Path) -> None:
    import subprocess
    import sys

    vault = tmp_path / "vault"
    vault.mkdir()
    import_killed("execute", "--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(vault)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        code, _, err = _import("--from", "basic-memory", source, vault, cwd=tmp_path)
        assert (code, err) == (1, "VAULT_LOCKED")
    finally:
        holder.communicate("")
    code, _out, err = _import("--from", "basic-memory", source, vault, cwd=tmp_path)
    assert (code, err) == (1, "IMPORT_RUN_INTERRUPTED")


def test_import_over_an_unfinished_install_rolls_it_back_first(
    tmp_path: Path, cli: Cli, source: Path
) -> None:
    shard = make_shard(tmp_path / "shard", files={f"notes/n{i}.md": f"n{i}\n" for i in range(6)})
    vault = tmp_path / "vault"
    killed_after(3, "install", "--defaults", shard, vault, cwd=tmp_path)
    assert (vault / ".shardmind/journal.json").is_file()
    code, out, _err = _import("--from", "basic-memory", source, vault, "--apply", cwd=tmp_path)
    assert code == 0, out
    assert not (vault / ".shardmind/journal.json").exists()
    assert not (vault / "notes").exists(), "the interrupted install was not rolled back"
    ledger = vault / ".shardmind/imports/ledger.sqlite3"
    assert ledger.is_file()
    done = run_shardpy("status", "--json", cwd=vault)
    assert done.returncode == 0
    assert ledger.is_file(), "the next command deleted the import records"
    res = cli.run("install", shard, vault, "--defaults", "--json", cwd=tmp_path)
    assert res.exit_code == 0, res.output
    assert ledger.is_file()
