"""status keeps its checks of the shard files between runs (shardpy/flows/statuschecks.py, issue 25):
a kept verdict is the one the files give, and a run that reuses it loads no schema model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shardpy.flows import statuschecks
from shardpy.vault import layout
from tests.install.test_status import FILES, SCHEMA
from tests.shardkit import Cli, child_env, describe, make_shard, write_tree

# One child run of verbose status in-process: its report (less the machine's tool versions)
# and whether the schema's models (pydantic) were loaded to give it.
CHILD = """
import json, sys
from pathlib import Path
from shardpy.flows.status import status
report = status(Path(sys.argv[1]), verbose=True).to_json()
report.pop("environment")
print(json.dumps({"report": report, "pydantic": "pydantic" in sys.modules}))
"""


@pytest.fixture
def vault(tmp_path: Path, cli: Cli) -> Path:
    """test_status.py's vault: frontmatter rules, a manifest key shardpy does not know."""
    shard = make_shard(tmp_path / "shard", files=FILES, schema=SCHEMA, manifest={"future_key": 1})
    cli.install_json(shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    return tmp_path / "vault"


def _child(root: Path, cache: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, str(root)],
        env=child_env({"SHARDPY_CACHE_DIR": str(cache)}),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, describe(proc)
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def test_a_kept_verdict_loads_no_schema_model(vault: Path, tmp_path: Path) -> None:
    write_tree(vault, {"people/Sam.md": "---\ndate: 2024-01-01\n---\nno title\n"})
    cache = tmp_path / "cache"
    first = _child(vault, cache)
    assert first["pydantic"], "the first run reads the files with the schema's models"
    again = _child(vault, cache)
    # Before: every verbose run built the schema's and manifest's models (pydantic alone
    # cost more than a whole plain status on 20,000 notes).
    assert not again["pydantic"]
    assert again["report"] == first["report"]
    assert first["report"]["frontmatter_violations"] == {
        "person": [{"path": "people/Sam.md", "missing": ["title"]}]
    }
    assert any("future_key" in w for w in again["report"]["warnings"])


def _edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, (rel, text)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_each_change_to_a_shard_file_is_checked_again(vault: Path) -> None:
    """Every input changed in turn: the kept answer is always the files' own (compute())."""
    edits = [
        (layout.VALUES_FILE, "size: 3", "size: 99"),  # a value out of range
        (layout.VALUES_FILE, "size: 99", "size: 3\nstray: 1"),  # an unknown value
        (layout.CACHED_SCHEMA, '"global": [\n      "date"', '"global": [\n      "title"'),  # its key
        (layout.CACHED_SCHEMA, '"people/*.md"', '"people/**"'),  # a rule's glob
        (layout.CACHED_SCHEMA, '"schema_version": 1', '"schema_version": 7'),  # unreadable schema
        (layout.CACHED_SCHEMA, '"schema_version": 7', '"schema_version": 1'),
        (layout.CACHED_MANIFEST, '"future_key": 1', '"future_key": 1, "other_key": 2'),
    ]
    answers = []
    for rel, old, new in edits:
        _edit(vault, rel, old, new)
        kept = statuschecks.checks(vault)
        assert kept == statuschecks.compute(vault), (rel, new)
        assert statuschecks.checks(vault) == kept  # now from the kept file
        answers.append(kept)
    assert any("above the maximum" in p for p in answers[0].problems), answers[0]
    assert answers[1].problems == ["unknown value 'stray'"]
    assert answers[2].rules is not None and ("global", ["title"], None) in answers[2].rules
    assert answers[3].rules is not None and ("person", ["date", "title"], "people/**") in answers[3].rules
    assert any(p.startswith("cached schema unreadable") for p in answers[4].problems)
    assert answers[4].rules is None
    assert any("other_key" in w for w in answers[6].warnings)
    (vault / layout.VALUES_FILE).unlink()
    assert statuschecks.checks(vault) == statuschecks.compute(vault)
    assert any(layout.VALUES_FILE in p for p in statuschecks.checks(vault).problems)


def test_a_broken_cache_file_is_ignored_and_rewritten(vault: Path) -> None:
    right = statuschecks.compute(vault)
    path = statuschecks.cache_file(vault)
    assert statuschecks.checks(vault) == right and path.is_file()
    key = json.loads(path.read_bytes())["key"]
    broken: list[Any] = [
        b"not json",
        b"[]",
        {"v": statuschecks.VERSION, "key": key, "checks": {"problems": [1], "warnings": [], "rules": None}},
        {"v": statuschecks.VERSION, "key": key, "checks": {"problems": [], "warnings": [], "rules": [["x"]]}},
        {"v": statuschecks.VERSION, "key": key, "checks": {"problems": [], "warnings": []}},
        {"v": 0, "key": key, "checks": {"problems": ["lie"], "warnings": [], "rules": None}},
    ]
    for blob in broken:
        path.write_bytes(blob if isinstance(blob, bytes) else json.dumps(blob).encode())
        assert statuschecks.checks(vault) == right, blob
        assert json.loads(path.read_bytes())["key"] == key, "rewritten"


def test_a_cache_folder_that_cannot_be_written_is_no_error(
    vault: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be\n")
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(blocked))
    assert statuschecks.checks(vault) == statuschecks.compute(vault)
