"""pre_compact.py (transcript backup) and stop_checklist.py (always one JSON object)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.flagship import payloads
from tests.flagship.conftest import run_script
from tests.flagship.shardtools import Layout

TRANSCRIPT = (
    b'{"type":"user","message":{"content":"hello"}}\n{"type":"assistant","message":{"content":"hi"}}\n'
)


@pytest.mark.parametrize(("agent", "suffix"), [("claude", ".jsonl"), ("gemini", ".json")])
def test_transcript_is_copied_into_session_logs(
    agent: str, suffix: str, make_vault: Callable[..., Layout], tmp_path: Path
) -> None:
    v = make_vault()
    transcript = tmp_path / f"session{suffix}"
    transcript.write_bytes(TRANSCRIPT)
    r = run_script(v.root, "pre_compact.py", payloads.compact(agent, v.root, transcript))
    assert r.returncode == 0, r.stderr
    logs = sorted(p for p in (v.root / "thinking/session-logs").iterdir() if p.name != ".gitkeep")
    assert len(logs) == 1
    assert logs[0].read_bytes() == TRANSCRIPT
    assert logs[0].name.endswith(f"-4f1c2b9e-auto{suffix}")
    assert r.json() == {"systemMessage": f"Transcript backed up to thinking/session-logs/{logs[0].name}"}
    # A second compaction in the same second never overwrites the first copy.
    run_script(v.root, "pre_compact.py", payloads.compact(agent, v.root, transcript))
    assert len([p for p in (v.root / "thinking/session-logs").iterdir() if p.name != ".gitkeep"]) == 2


def test_session_logs_are_git_ignored(make_vault: Callable[..., Layout], tmp_path: Path) -> None:
    v = make_vault()
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(TRANSCRIPT)
    run_script(v.root, "pre_compact.py", payloads.compact("claude", v.root, transcript))
    subprocess.run(["git", "init", "-q", str(v.root)], check=True)
    status = subprocess.run(
        ["git", "-C", str(v.root), "status", "--porcelain", "--untracked-files=all", "thinking/"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "session-logs/.gitkeep" in status
    assert ".jsonl" not in status


def test_missing_transcript_and_odd_input_are_no_ops(
    make_vault: Callable[..., Layout], tmp_path: Path
) -> None:
    v = make_vault()
    for payload in (payloads.compact("claude", v.root, tmp_path / "missing.jsonl"), {}, None):
        r = run_script(v.root, "pre_compact.py", payload)
        assert r.returncode == 0 and r.json() == {}
    r = run_script(v.root, "pre_compact.py", raw=b"\x00not json")
    assert r.returncode == 0 and r.json() == {}
    assert [p.name for p in (v.root / "thinking/session-logs").iterdir()] == [".gitkeep"]


def test_never_writes_through_a_link(make_vault: Callable[..., Layout], tmp_path: Path) -> None:
    v = make_vault()
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(v.root / "thinking/session-logs")
    os.symlink(outside, v.root / "thinking/session-logs")
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(TRANSCRIPT)
    r = run_script(v.root, "pre_compact.py", payloads.compact("claude", v.root, transcript))
    assert r.returncode == 0 and r.json() == {}
    assert list(outside.iterdir()) == []
    assert "is a link" in r.stderr


def test_creates_the_log_folder_when_the_user_removed_it(
    make_vault: Callable[..., Layout], tmp_path: Path
) -> None:
    v = make_vault()
    shutil.rmtree(v.root / "thinking")
    transcript = tmp_path / "t.jsonl"
    transcript.write_bytes(TRANSCRIPT)
    run_script(v.root, "pre_compact.py", payloads.compact("claude", v.root, transcript))
    assert len(list((v.root / "thinking/session-logs").iterdir())) == 1


# --- stop checklist -------------------------------------------------------------------


def _message(stdout: str) -> str:
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout  # exactly one JSON object, nothing else
    data = json.loads(lines[0])
    assert list(data) == ["systemMessage"]
    assert isinstance(data["systemMessage"], str) and data["systemMessage"].startswith("Wrap-up checklist:")
    return str(data["systemMessage"])


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_checklist_for_each_agent(agent: str, make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    r = run_script(v.root, "stop_checklist.py", payloads.stop(agent, v.root))
    assert r.returncode == 0
    msg = _message(r.stdout)
    assert "org/People & Context.md" in msg and "perf/Brag Doc.md" in msg
    assert "/wrap-up" in msg


def test_checklist_follows_installed_modules(make_vault: Callable[..., Layout]) -> None:
    v = make_vault(exclude=("org", "perf"))
    msg = _message(run_script(v.root, "stop_checklist.py", payloads.stop("claude", v.root)).stdout)
    assert "People & Context" not in msg and "Brag Doc" not in msg


def test_checklist_names_unlinked_notes_changed_in_the_tree(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    subprocess.run(["git", "init", "-q", str(v.root)], check=True)
    (v.root / "work/active/Orphan.md").write_text("---\ndate: 2026-11-29\n---\nno links here\n")
    (v.root / "work/active/Linked.md").write_text("see [[Index]]\n")
    (v.root / "CLAUDE.md").write_text("infrastructure, not checked\n")
    msg = _message(run_script(v.root, "stop_checklist.py", payloads.stop("codex", v.root)).stdout)
    assert "Changed notes that link to nothing: work/active/Orphan.md" in msg
    assert "Linked.md" not in msg and "CLAUDE.md" not in msg.split("link to nothing:")[1]


@pytest.mark.parametrize(
    "raw", [b"", b"not json", b"[1]", b"\xff\xfe\x00", b'{"stop_hook_active": "yes"}', b"null"]
)
def test_valid_json_on_bad_stdin(raw: bytes, make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    r = run_script(v.root, "stop_checklist.py", raw=raw)
    assert r.returncode == 0
    _message(r.stdout)


def test_valid_json_when_vault_files_are_missing(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    for rel in ("vault-manifest.json", ".shardmind", "brain", "work"):
        p = v.root / rel
        shutil.rmtree(p) if p.is_dir() else p.unlink()
    r = run_script(v.root, "stop_checklist.py", payloads.stop("gemini", v.root))
    assert r.returncode == 0
    _message(r.stdout)


def test_valid_json_when_the_library_is_gone(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    shutil.rmtree(v.root / ".claude/scripts/vaultlib")
    r = run_script(v.root, "stop_checklist.py", payloads.stop("claude", v.root))
    assert r.returncode == 0
    assert "Archive finished projects" in _message(r.stdout)
    assert "checklist degraded" in r.stderr


def test_valid_json_when_git_is_missing(make_vault: Callable[..., Layout], tmp_path: Path) -> None:
    v = make_vault()
    empty = tmp_path / "emptybin"
    empty.mkdir()
    r = run_script(v.root, "stop_checklist.py", payloads.stop("claude", v.root), env={"PATH": str(empty)})
    assert r.returncode == 0
    _message(r.stdout)


def test_repeat_stop_is_short(make_vault: Callable[..., Layout]) -> None:
    v = make_vault()
    msg = _message(
        run_script(v.root, "stop_checklist.py", payloads.stop("claude", v.root, active=True)).stdout
    )
    assert msg.splitlines() == ["Wrap-up checklist:", "- /wrap-up runs the full review"]
