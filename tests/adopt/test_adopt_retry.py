"""A command killed in the vault after adopt planned: adopt asks for a retry (as install does)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.adopt.test_adopt import _env, clone, edit, repo, run, tree  # noqa: F401 (fixtures)
from tests.shardkit import Cli


def test_a_journal_appearing_after_planning_asks_for_a_retry(
    repo: Path,  # noqa: F811
    tmp_path: Path,
    cli: Cli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ADOPT_RETRY: the session's recovery found a journal another process left after this adopt
    planned, so the plan may be stale; nothing is adopted, and the same adopt then succeeds. (Before,
    adopt went on with its plan.)"""
    import shardpy.flows.adopt as flow
    from shardpy.apply.journalcheck import ensure_vault_id

    vault = clone(repo, tmp_path / "vault", "1.0.0")
    edit(vault, "A")
    before = {k: v for k, v in tree(vault).items() if k != ".shardmind/vault-id"}
    real = flow.apply_adopt

    def crash_elsewhere(*args: Any, **kwargs: Any) -> None:
        # another shardpy process dies mid-transaction right after this one planned
        journal = {
            "version": 2,
            "vault_id": ensure_vault_id(vault)[0],  # a journal shardpy wrote in this vault
            "label": "update",
            "phase": "applying",
            "touched": [],
            "new_dirs": [],
            "backup_dir": ".shardmind/backups/update-20260101T000000000000Z",
        }
        (vault / ".shardmind/journal.json").write_text(json.dumps(journal))
        real(*args, **kwargs)

    monkeypatch.setattr(flow, "apply_adopt", crash_elsewhere)
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "keep-mine", "--yes")
    assert code == 1 and out["error"]["code"] == "ADOPT_RETRY", out
    assert not (vault / ".shardmind/journal.json").exists()
    assert not (vault / ".shardmind/state.json").exists()
    assert {k: v for k, v in tree(vault).items() if k != ".shardmind/vault-id"} == before
    monkeypatch.undo()
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "keep-mine", "--yes")
    assert code == 0, out
