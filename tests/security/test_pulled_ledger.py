"""Issue 24 B, D and 17: the import ledger arrives with `git pull`, so it is untrusted input.

Two machines share a vault through a bare hub (tests/gitsync/kit.py). Machine A imports and
pushes, then commits a hostile ledger; machine B pulls and runs `shardpy import --apply` as a
user would (a child process, ``--json``). Nothing outside the vault, in ``.git/`` or in
``.shardmind/`` may change; the answer is a typed error, never a traceback. A ledger that is a
view recursing forever must neither hang the merge driver nor the importer (a subprocess timeout
guards against the hang; no time is asserted).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from shardpy.apply.batch import Journal
from shardpy.apply.transaction import Op, Transaction
from shardpy.errors import ShardpyError
from shardpy.plan.importplan import Step
from shardpy.vault.ledger import SCHEMA
from tests.gitsync.kit import NOTE_V1, Mesh, git, git_env
from tests.shardkit import Cli, child_env, run_shardpy, shardpy_argv, tree_snapshot

LEDGER = ".shardmind/imports/ledger.sqlite3"
INTO = "memories/basic-memory"
ALPHA = "notes/alpha.md"
HOOK = b"#!/bin/sh\necho the user's own hook\n"
OUTSIDE = b"---\ntitle: precious\n---\nthe user's file outside the vault\n"
COLUMNS = (
    "format, into_dir, source_path, kind, target, target_cf, source_hash, render_key, base_sha, base,"
    " written_sha, written, run_id, updated_at"
)
# A view named like the ledger's table whose rows never end (the issue's hang).
ENDLESS_VIEW = f"""
CREATE VIEW records ({COLUMNS}) AS
  WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r)
  SELECT 'basic-memory', '{INTO}', 'notes/' || n || '.md', 'note', 'x', 'x', 'h', 'k', 'b', NULL,
         'w', NULL, 'run', n FROM r;
"""


@pytest.fixture
def mesh(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> Mesh:
    git_env(monkeypatch, tmp_path / "home")
    m = Mesh(tmp_path, cli)
    m.release("1.0.0", {"brain/Note.md": NOTE_V1})
    m.start()
    return m


def _note(name: str, fact: str) -> str:
    head = f"---\ntitle: {name}\ntype: note\npermalink: notes/{name.lower()}\n---\n\n"
    return f"{head}# {name}\n\n- [fact] {fact}\n"


def _source(root: Path, names: tuple[str, ...] = ("Alpha", "Beta")) -> Path:
    for name in names:
        (root / "notes").mkdir(parents=True, exist_ok=True)
        (root / "notes" / f"{name.lower()}.md").write_text(_note(name, f"{name} v1"), encoding="utf-8")
    return root


def _import(machine: Path, source: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    """(exit code, the JSON document, its error code or '') of ``shardpy import ... --apply --json``."""
    done = run_shardpy(
        "import", "--from", "basic-memory", source, ".", "--apply", "--json", *extra, cwd=machine
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    out = json.loads(done.stdout)
    err = out.get("error", {}).get("code", "") if isinstance(out, dict) else ""
    return done.returncode, out, err


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _aim(ledger: Path, target: str, sha: str) -> None:
    """Point alpha's record at ``target``, its hashes set to ``sha`` (the file there, when known)."""
    with contextlib.closing(sqlite3.connect(ledger)) as conn:
        conn.execute(
            "UPDATE records SET target=?, target_cf=?, base_sha=?, written_sha=? WHERE source_path=?",
            (target, target.casefold(), sha, sha, ALPHA),
        )
        assert conn.total_changes == 1
        conn.commit()


def _shared_import(mesh: Mesh, source: Path) -> None:
    """A imports ``source`` and pushes; B pulls: both machines hold the same notes and ledger."""
    code, out, _ = _import(mesh.a, source)
    assert code == 0, out
    mesh.commit(mesh.a, "A: import")
    mesh.push(mesh.a)
    assert mesh.pull(mesh.b).returncode == 0


def _guarded(mesh: Mesh) -> dict[str, dict[str, str]]:
    """What must not change on B: the folder beside the vault, B's .git/ and .shardmind/."""
    return {
        "outside": tree_snapshot(mesh.root / "outside"),
        ".git": tree_snapshot(mesh.b / ".git"),
        ".shardmind": tree_snapshot(mesh.b / ".shardmind"),
        "brain": tree_snapshot(mesh.b / "brain"),
    }


@pytest.mark.parametrize(
    ("target", "on_conflict"),
    [
        ("../outside/pwned.md", "keep"),  # B: hashes matching the outside file
        ("../outside/pwned.md", "theirs"),
        (".git/hooks/pre-commit", "theirs"),  # 17
        (".shardmind/vault-id", "theirs"),  # 17
        ("brain/Note.md", "theirs"),  # inside the vault, but not the import's folder
        ("/tmp/x/pwned.md", "theirs"),
        (f"{INTO}/../../outside/pwned.md", "keep"),
    ],
)
def test_pulled_ledger_record_aimed_out_of_the_import_is_refused(
    mesh: Mesh, tmp_path: Path, target: str, on_conflict: str
) -> None:
    source = _source(tmp_path / "src")
    _shared_import(mesh, source)
    (mesh.root / "outside").mkdir()
    (mesh.root / "outside/pwned.md").write_bytes(OUTSIDE)
    (mesh.b / ".git/hooks/pre-commit").write_bytes(HOOK)
    known = mesh.b / target if not target.startswith("/") else None
    sha = _sha(known.read_bytes()) if known is not None and known.is_file() else _sha(b"")
    _aim(mesh.a / LEDGER, target, sha)
    mesh.commit(mesh.a, "A: a hostile ledger record")
    mesh.push(mesh.a)
    assert mesh.pull(mesh.b).returncode == 0
    (source / ALPHA).write_text(_note("Alpha", "Alpha v2, changed in the source"), encoding="utf-8")
    before = _guarded(mesh)
    code, out, err = _import(mesh.b, source, "--on-conflict", on_conflict)
    assert (code, err) == (1, "IMPORT_LEDGER_INVALID"), out
    problems = out["error"]["details"]["problems"]
    assert any(ALPHA in p and "basic-memory" in p for p in problems), problems
    assert _guarded(mesh) == before
    assert (mesh.root / "outside/pwned.md").read_bytes() == OUTSIDE
    assert not any(mesh.b.glob(".shardmind/imports/*/")), "a run was started"


def test_pulled_link_on_the_way_to_a_record_writes_nothing_outside(mesh: Mesh, tmp_path: Path) -> None:
    """A pulled folder link inside the import folder, the record's target through it: the record
    is a plain path, so the ledger passes; the write is refused at the link, per note."""
    source = _source(tmp_path / "src")
    _shared_import(mesh, source)
    (mesh.root / "outside").mkdir()
    (mesh.root / "outside/pwned.md").write_bytes(OUTSIDE)
    (mesh.a / INTO / "lnk").symlink_to("../../../outside")
    _aim(mesh.a / LEDGER, f"{INTO}/lnk/pwned.md", _sha(OUTSIDE))
    mesh.commit(mesh.a, "A: a link and a record through it")
    mesh.push(mesh.a)
    assert mesh.pull(mesh.b).returncode == 0
    assert (mesh.b / INTO / "lnk").is_symlink()
    (source / ALPHA).write_text(_note("Alpha", "Alpha v2"), encoding="utf-8")
    before = _guarded(mesh)
    for on_conflict in ("keep", "theirs"):
        code, out, _ = _import(mesh.b, source, "--on-conflict", on_conflict)
        rows = {r["source_path"]: r for r in out["notes"]}
        assert code == 1 and rows[ALPHA]["action"] == "error", out
        assert "symbolic link" in rows[ALPHA]["detail"]
    assert _guarded(mesh) == before


def _endless(path: Path) -> None:
    path.unlink(missing_ok=True)
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript(ENDLESS_VIEW)


def _bounded(cwd: Path, argv: list[str], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``argv``; a hang guard (not a timing check): past ``timeout`` its whole process group
    (git and the merge driver it started) is killed and the test fails."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"{' '.join(argv)} still running after {timeout} s: it hangs")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _temps(machine: Path) -> list[str]:
    return sorted(p.relative_to(machine).as_posix() for p in machine.rglob(".shardpy-ledger-*"))


def test_pulled_endless_view_ledger_neither_hangs_the_merge_driver_nor_leaves_a_file(
    mesh: Mesh, tmp_path: Path
) -> None:
    """D: both machines imported (the ledger merges through the driver); A's is a recursive view."""
    code, out, _ = _import(mesh.a, _source(tmp_path / "one", ("Alpha", "Beta")))
    assert code == 0, out
    _endless(mesh.a / LEDGER)
    mesh.commit(mesh.a, "A: a ledger that is an endless view")
    mesh.push(mesh.a)
    code, out, _ = _import(mesh.b, _source(tmp_path / "two", ("Gamma",)))
    assert code == 0, out
    mesh.commit(mesh.b, "B: import")
    ours = (mesh.b / LEDGER).read_bytes()
    pulled = _bounded(mesh.b, ["git", "pull", "--no-edit", "origin", "main"])
    said = pulled.stdout + pulled.stderr
    assert "Traceback" not in said, said
    assert pulled.returncode != 0 and "import ledger not merged" in said, said
    assert "IMPORT_LEDGER_INVALID" in said and "view" in said, said
    assert LEDGER in mesh.unmerged(mesh.b)
    assert (mesh.b / LEDGER).read_bytes() == ours, "ours is what the work tree keeps"
    assert _temps(mesh.b) == []


def _trigger(path: Path) -> None:
    """Our table, plus a trigger planting a record aimed outside whenever the import records."""
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript(
            "CREATE TRIGGER plant AFTER INSERT ON records BEGIN INSERT OR REPLACE INTO records"
            f" SELECT format, into_dir, 'planted.md', kind, '../outside/pwned.md', '', source_hash,"
            f" render_key, base_sha, base, written_sha, written, run_id, updated_at FROM records"
            f" WHERE source_path = '{ALPHA}'; END;"
        )


def _link(path: Path) -> None:
    """The ledger a link to a database outside the vault (a copy of the real one)."""
    outside = path.parents[3] / "outside/victim.sqlite3"  # beside both machines
    outside.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(os.path.relpath(outside, path.parent))


@pytest.mark.parametrize("plant", [_endless, _trigger, _link], ids=["endless-view", "trigger", "link"])
def test_pulled_hostile_ledger_file_is_refused_by_the_importer(
    mesh: Mesh, tmp_path: Path, plant: Any
) -> None:
    """D, fast-forward: no driver runs; the importer refuses the pulled file at once, before its
    SQL runs (a view, a trigger) or anything is written through it (a link)."""
    source = _source(tmp_path / "src")
    _shared_import(mesh, source)
    (mesh.root / "outside").mkdir()
    plant(mesh.a / LEDGER)
    mesh.commit(mesh.a, "A: a hostile ledger file")
    mesh.push(mesh.a)
    assert mesh.pull(mesh.b).returncode == 0
    (source / ALPHA).write_text(_note("Alpha", "Alpha v2"), encoding="utf-8")
    before = _guarded(mesh)
    for extra in ((), ("--apply",)):
        argv = [*_argv(source), *extra]
        done = _bounded(mesh.b, argv)
        assert "Traceback" not in done.stderr, done.stderr
        answer = json.loads(done.stdout)
        assert answer.get("error", {}).get("code") == "IMPORT_LEDGER_INVALID", done.stdout
    assert _guarded(mesh) == before


def _argv(source: Path) -> list[str]:
    return shardpy_argv("import", "--from", "basic-memory", source, ".", "--json")


@pytest.mark.parametrize(
    "path", [".git/hooks/pre-commit", "sub/.GIT/config", ".shardmind/vault-id", ".Shardmind/state.json"]
)
def test_no_planned_write_lands_in_git_or_shardpys_records(tmp_path: Path, path: str) -> None:
    """17, the writer's own rule: whatever a plan was built from, a transaction or an import run
    whose write names .git/ or .shardmind/ (beyond the records' own API) is refused before anything
    is written."""
    vault = tmp_path / "vault"
    (vault / "notes").mkdir(parents=True)
    before = tree_snapshot(vault)
    with pytest.raises(ShardpyError) as refused:
        Transaction(vault, "test").run([Op.write("notes/ok.md", b"ok\n"), Op.write(path, b"pwned\n")])
    assert refused.value.code == "PATH_RESERVED"
    with pytest.raises(ShardpyError) as refused:
        Transaction(vault, "test").run([Op.delete(path)])
    assert refused.value.code == "PATH_RESERVED"
    assert tree_snapshot(vault) == before
    journal = Journal.create(vault, "20260101T000000Z-abcdef", {"format": "basic-memory", "into": "x"})
    step = Step(0, "create", "note", "a.md", path, None, _sha(b"pwned\n"), "h", "k", "b")
    with pytest.raises(ShardpyError) as refused:
        journal.add(step, b"pwned\n", None, None)
    assert refused.value.code == "PATH_RESERVED"
    journal.discard()
    written = vault / path  # .shardmind/vault-id exists: the run's own, written by Journal.create
    assert not written.is_file() or written.read_bytes() != b"pwned\n"


def test_shardpys_own_records_still_go_through_a_transaction(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    Transaction(vault, "test").run(
        [Op.write(".shardmind/state.json", b"{}\n"), Op.write(".shardmind/templates/a.md.njk", b"a\n")]
    )
    assert (vault / ".shardmind/state.json").read_bytes() == b"{}\n"


def test_an_empty_ledger_is_no_records_and_ours_is_accepted(tmp_path: Path) -> None:
    from shardpy.vault.ledger import Ledger, ledger_path

    vault = tmp_path / "vault"
    path = ledger_path(vault)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    assert Ledger.open_readonly(vault).targets() == set()
    path.unlink()
    with contextlib.closing(sqlite3.connect(path)) as conn:
        conn.executescript(SCHEMA)
    ledger = Ledger.open_readonly(vault)
    assert ledger.targets() == set()
    ledger.close()


@pytest.mark.parametrize("target", ["notes/.git/hooks/post-checkout", ".GIT/config", ".Shardmind/vault-id"])
def test_resumed_run_never_writes_into_a_nested_git_folder(tmp_path: Path, target: str) -> None:
    """17 for a planted run bound to this vault: its steps pass the same rule as every planned write
    (a nested .git/, any case), so --resume and --abandon refuse it and change nothing."""
    from tests.security.test_import_journal import plant_run

    vault = tmp_path / "vault"
    (vault / "notes/.git/hooks").mkdir(parents=True)
    plant_run(vault, target, vault_id="0" * 32)
    before = tree_snapshot(vault)
    for verb in ("--resume", "--abandon"):
        done = run_shardpy("import", verb, "--vault", vault, "--json", cwd=tmp_path)
        assert "Traceback" not in done.stderr, done.stderr
        assert json.loads(done.stdout).get("error", {}).get("code") == "IMPORT_RUN_JOURNAL_INVALID", (
            done.stdout
        )
    assert tree_snapshot(vault) == before


def test_pulled_transaction_journal_never_deletes_a_git_file(mesh: Mesh) -> None:
    """17 for the transaction's journal: the vault id is synced, so a pulled (force-added)
    .shardmind/journal.json is "bound" to this vault; its undo of .git/HEAD (whose bytes anyone can
    guess) is refused like any planned write in .git/, and `status` changes nothing there."""
    head = (mesh.b / ".git/HEAD").read_bytes()
    planted = {
        "version": 2,
        "vault_id": (mesh.a / ".shardmind/vault-id").read_text().strip(),
        "made_vault_id": False,
        "label": "update",
        "phase": "applying",
        "started_at": "2026-01-01T00:00:00+00:00",
        "pid": 1,
        "backup_dir": ".shardmind/backups/update-20260101T000000000000Z",
        "remove_sidecar_on_rollback": False,
        "touched": [{"path": ".git/HEAD", "existed": False, "written": [_sha(head)]}],
        "new_dirs": [],
    }
    (mesh.a / ".shardmind/journal.json").write_text(json.dumps(planted), encoding="utf-8")
    git(mesh.a, "add", "-f", ".shardmind/journal.json")
    mesh.commit(mesh.a, "A: a planted journal")
    mesh.push(mesh.a)
    assert mesh.pull(mesh.b).returncode == 0
    before = tree_snapshot(mesh.b / ".git")
    done = run_shardpy("status", "--json", cwd=mesh.b)
    assert "Traceback" not in done.stderr, done.stderr
    assert "TRANSACTION_JOURNAL_INVALID" in done.stdout + done.stderr, done.stdout
    assert (mesh.b / ".git/HEAD").read_bytes() == head
    assert tree_snapshot(mesh.b / ".git") == before


def test_a_hostile_record_merged_by_the_driver_is_refused_after_the_merge(mesh: Mesh, tmp_path: Path) -> None:
    """B: the record arrives through the driver's record-by-record merge (both machines imported),
    not a fast-forward; the merged ledger is read under the same rules."""
    one = _source(tmp_path / "one", ("Alpha", "Beta"))
    code, out, _ = _import(mesh.a, one)
    assert code == 0, out
    (mesh.root / "outside").mkdir()
    (mesh.root / "outside/pwned.md").write_bytes(OUTSIDE)
    _aim(mesh.a / LEDGER, "../outside/pwned.md", _sha(OUTSIDE))
    mesh.commit(mesh.a, "A: import, one record aimed outside")
    mesh.push(mesh.a)
    code, out, _ = _import(mesh.b, _source(tmp_path / "two", ("Gamma",)))
    assert code == 0, out
    mesh.commit(mesh.b, "B: import")
    pulled = mesh.pull(mesh.b)
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    (one / ALPHA).write_text(_note("Alpha", "Alpha v2"), encoding="utf-8")
    before = _guarded(mesh)
    for on_conflict in ("keep", "theirs"):
        code, out, err = _import(mesh.b, one, "--on-conflict", on_conflict)
        assert (code, err) == (1, "IMPORT_LEDGER_INVALID"), out
    assert _guarded(mesh) == before
