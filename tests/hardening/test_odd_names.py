"""File names a user's disk can hold and shardpy's readers must survive (real CLI children).

A name whose bytes are not UTF-8 cannot be stored in the index, a ledger or a plan, nor served or
printed: it made `search`, `index` and `import --apply` end in a traceback. Now the walkers skip
it with a reason shown under a printable name (U+FFFD for its bytes), and every other note —
a line break, a backslash or a tab in its name included — is searched and imported as any other.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.shardkit import run_shardpy

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
