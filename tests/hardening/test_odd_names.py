"""File names a user's disk can hold and shardpy's readers must survive (real CLI children).

A name whose bytes are not UTF-8 cannot be stored in the index, a ledger or a plan, nor served or
printed: it made `search`, `index` and `import --apply` end in a traceback. Now the walkers skip
it with a reason shown under a printable name (U+FFFD for its bytes), and every other note —
a line break, a backslash or a tab in its name included — is searched and imported as any other.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.shardkit import child_env, run_shardpy, shardpy_argv

NOT_UTF8 = b"latin1-\xe9.md"
ODD = [b"new\nline.md", b"back\\slash.md", b"tab\there.md", "caf\u00e9.md".encode()]


def _notes(folder: Path, body: bytes) -> None:
    folder.mkdir(parents=True)
    for i, name in enumerate([NOT_UTF8, *ODD]):
        text = b"---\ntitle: Odd %d\ntype: note\npermalink: notes/odd-%d\n---\n\n# Odd %d\n\n" % (i, i, i)
        (folder / os.fsdecode(name)).write_bytes(text + body)


def test_search_and_index_skip_a_name_that_is_not_utf8_and_find_the_rest(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    _notes(vault / "notes", b"the quokka release plan\n")
    env = {"SHARDPY_CACHE_DIR": str(tmp_path / "cache")}
    done = run_shardpy("search", "quokka", "--json", cwd=vault, env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    answer = json.loads(done.stdout)
    assert sorted(hit["path"] for hit in answer["hits"]) == sorted(f"notes/{os.fsdecode(n)}" for n in ODD)
    assert any("1 files skipped" in n for n in answer["notices"]), answer
    listed = run_shardpy("index", cwd=vault, env=env)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert "notes/latin1-\ufffd.md: name is not UTF-8" in listed.stdout


def test_import_skips_a_source_name_that_is_not_utf8_and_imports_the_rest(tmp_path: Path) -> None:
    source, vault = tmp_path / "bm", tmp_path / "vault"
    _notes(source / "notes", b"- [fact] quokkas are marsupials\n")
    vault.mkdir()
    done = run_shardpy("import", "--from", "basic-memory", source, ".", "--apply", "--json", cwd=vault)
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr, done.stdout + done.stderr
    answer = json.loads(done.stdout)
    reason = "refused: the name is not UTF-8 (rename it)"
    refused = {"source_path": "notes/latin1-\ufffd.md", "reason": reason}
    assert refused in answer["skipped"] and answer["result"]["state"] == "complete", answer
    assert answer["summary"]["records"] == len(ODD)  # every other note is a record of the import


def test_a_vault_below_a_folder_not_named_in_utf8_runs_every_command(tmp_path: Path) -> None:
    """A vault inside a folder whose name is bytes another system wrote (Latin-1 on a NAS): the
    repository's top came back from git with U+FFFD (the vault "no longer existed"), the index
    could not store its own vault's path, and a strict UTF-8 stdout refused the path in JSON and
    text (a traceback each). Now every command answers; JSON shows the name with U+FFFD, and a
    service unit, which is UTF-8 text, refuses to name it."""
    from tests.gitsync.kit import git

    vault = Path(os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9 vault"))
    (vault / ".shardmind").mkdir(parents=True)
    state = '{"files": {}, "install_date": "2026-01-01T00:00:00Z", "modules": {}, "shard": "test", '
    (vault / ".shardmind/state.json").write_text(state + '"source": "local", "version": "1.0.0"}\n')
    (vault / "notes").mkdir()
    (vault / "notes/plan.md").write_text("---\ntitle: Plan\n---\n\nthe quokka release plan\n")
    git(vault, "init", "--quiet")
    env = {"SHARDPY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONIOENCODING": "utf-8:strict"}
    for argv, code in (
        (["sync", "--yes", "--json"], 0),
        (["status", "--json"], 0),
        (["search", "quokka", "--json"], 0),
        (["sync", "--print-unit", "systemd", "--json"], 1),
    ):
        done = run_shardpy(*argv, cwd=vault, env=env)
        assert done.returncode == code and "Traceback" not in done.stderr, (argv, done.stderr)
        answer = json.loads(done.stdout)
        if code:
            assert answer["error"]["code"] == "SYNC_UNIT_PATH", answer
        elif "vault" in answer:
            assert answer["vault"].endswith("caf\ufffd vault"), answer
    assert json.loads(run_shardpy("search", "quokka", "--json", cwd=vault, env=env).stdout)["hits"]
    for argv in (["status"], ["search", "quokka"], ["index"], ["sync"]):
        # Text output writes the name's own bytes back (as `ls` does): read as bytes here.
        raw = subprocess.run(shardpy_argv(*argv), cwd=vault, env=child_env(env), capture_output=True)
        assert raw.returncode == 0 and b"Traceback" not in raw.stderr, (argv, raw.stderr)
