"""session_start.py: the briefing each agent gets, held under the byte budget."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.flagship import payloads
from tests.flagship.conftest import run_script
from tests.flagship.shardtools import Layout, populate_heavy_vault

SCRIPT = "session_start.py"
METER_PREFIX = "[eager layer: "


def _budget(vault: Path) -> int:
    return int(json.loads((vault / "vault-manifest.json").read_text())["eager_layer_budget_bytes"])


def _set_manifest(vault: Path, **changes: Any) -> None:
    path = vault / "vault-manifest.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data, indent=2))


def _git(vault: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(vault), *args],
        check=True,
        capture_output=True,
        env={
            **os.environ,
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@e",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@e",
        },
    )


def _meter(text: str) -> str:
    last = text.rstrip("\n").splitlines()[-1]
    assert last.startswith(METER_PREFIX), last
    return last


def _used(meter: str) -> int:
    return int(meter[len(METER_PREFIX) :].split(" ", 1)[0].replace(",", ""))


@pytest.mark.parametrize("agent", ["claude", "codex", "gemini"])
def test_each_agent_gets_a_briefing_as_additional_context(
    agent: str, make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault(values={"user_name": "Ada Lovelace", "org_name": "Analytical Engines"})
    r = run_script(v.root, SCRIPT, payloads.session_start(agent, v.root))
    assert r.returncode == 0, r.stderr
    out = r.json()
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    text = out["hookSpecificOutput"]["additionalContext"]
    assert text.startswith(f"# Session briefing — {v.root.name}")
    assert "Owner: Ada Lovelace · Organisation: Analytical Engines · Purpose: engineering" in text
    assert "## North Star (brain/North Star.md)" in text and "### Current focus" in text
    assert "## Notes (" in text
    meter = _meter(text)
    assert meter.endswith("nothing dropped]")
    assert _used(meter) == len(text.encode("utf-8"))
    assert not list(v.root.rglob("__pycache__"))


def test_briefing_names_excluded_modules_and_plain_clones(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault(exclude=("perf", "gemini"))
    text = run_script(v.root, SCRIPT, payloads.session_start("claude", v.root)).context()
    assert "Modules not installed: gemini, perf" in text
    clone = make_vault(state=False)
    text = run_script(clone.root, SCRIPT, payloads.session_start("claude", clone.root)).context()
    assert "Modules: all (no .shardmind/state.json — a plain clone)" in text


def test_tasks_and_git_activity(make_vault: Callable[..., Layout], isolated_env: dict[str, str]) -> None:
    v = make_vault()
    (v.root / "work/active/Payments Migration.md").write_text(
        "---\ndate: 2026-11-01\n---\n# Payments Migration\n- [ ] cut over the EU region\n- [x] done thing\n"
        "```\n- [ ] not a task, an example\n```\n",
        encoding="utf-8",
    )
    (v.root / "Inbox.md").write_text("- [ ] call the bank\n", encoding="utf-8")
    (v.root / "work/archive/Old.md").write_text("- [ ] archived tasks are not open work\n", encoding="utf-8")
    _git(v.root, "init", "-q")
    _git(v.root, "add", "-A")
    _git(v.root, "commit", "-q", "-m", "Seed the vault")
    (v.root / "work/active/New.md").write_text("draft", encoding="utf-8")
    text = run_script(v.root, SCRIPT, payloads.session_start("claude", v.root)).context()
    assert "## Open tasks (2)" in text
    assert "- [ ] cut over the EU region — [[Payments Migration]]" in text
    assert "- [ ] call the bank — [[Inbox]]" in text
    assert "not a task" not in text and "archived tasks" not in text
    assert "## Recent git activity" in text and "Seed the vault" in text
    assert "Uncommitted: 1 untracked" in text


def test_five_thousand_notes_stay_under_budget_and_name_what_dropped(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    assert populate_heavy_vault(v.root, 5000) == 5000
    budget = _budget(v.root)
    r = run_script(v.root, SCRIPT, payloads.session_start("claude", v.root))
    assert r.returncode == 0, r.stderr
    text = r.context()
    size = len(text.encode("utf-8"))
    assert size <= budget
    meter = _meter(text)
    assert _used(meter) == size
    assert "dropped: listing" in meter
    # Identity and goals never drop; the listing has collapsed rather than vanished.
    assert text.startswith("# Session briefing")
    assert "## North Star" in text and "What are the one to three things" in text
    assert "## Open tasks (" in text
    assert "## Notes (" in text


def test_tight_budget_degrades_in_order_and_never_drops_identity(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    populate_heavy_vault(v.root, 700)
    _set_manifest(v.root, eager_layer_budget_bytes=3_800)
    text = run_script(v.root, SCRIPT, payloads.session_start("codex", v.root)).context()
    meter = _meter(text)
    assert len(text.encode("utf-8")) <= 3_800
    dropped = meter.split("dropped: ", 1)[1]
    # Cheapest first: the listing has gone all the way to a pointer before tasks shrink.
    assert dropped.startswith("listing (pointer)")
    assert "tasks" in dropped
    assert "## North Star" in text and text.startswith("# Session briefing")


def test_budget_below_identity_reports_over_budget_instead_of_dropping_goals(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    star = v.root / "brain/North Star.md"
    star.write_text(
        star.read_text() + "\n".join(f"- goal line {i} " + "x" * 80 for i in range(200)), encoding="utf-8"
    )
    _set_manifest(v.root, eager_layer_budget_bytes=100)  # clamped up to the 2,000-byte minimum
    text = run_script(v.root, SCRIPT, payloads.session_start("gemini", v.root)).context()
    meter = _meter(text)
    assert "over budget" in meter and "2,000 bytes" in meter
    assert "## North Star" in text and "goal line 0" in text
    assert "… excerpt ends here" in text  # the excerpt is capped, the goals are not dropped


def test_listing_collapses_big_folders_to_counts(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    threshold = json.loads((v.root / "vault-manifest.json").read_text())["listing_collapse_threshold"]
    for i in range(threshold + 1):
        (v.root / "reference" / f"Ref {i}.md").write_text("x", encoding="utf-8")
    text = run_script(v.root, SCRIPT, payloads.session_start("claude", v.root)).context()
    assert f"reference/ — {threshold + 1} notes" in text
    assert "brain/ Gotchas · Key Decisions" in text


@pytest.mark.parametrize("source", ["resume", "compact"])
def test_re_entry_skips_the_listing(
    source: str, make_vault: Callable[..., Layout], isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    text = run_script(v.root, SCRIPT, payloads.session_start("claude", v.root, source=source)).context()
    assert f"listing (re-entry: {source})" in _meter(text)
    assert "brain/ Gotchas" not in text


def test_broken_inputs_still_brief(make_vault: Callable[..., Layout], isolated_env: dict[str, str]) -> None:
    v = make_vault()
    (v.root / "vault-manifest.json").write_text("{not json", encoding="utf-8")
    (v.root / "brain/North Star.md").unlink()
    for raw in (b"", b"garbage", b"[1,2]", b"\xff\xfe"):
        r = run_script(v.root, SCRIPT, raw=raw)
        assert r.returncode == 0
        text = r.context()
        assert "brain/North Star.md is missing" in text
        assert _meter(text).startswith(METER_PREFIX)


def test_text_mode_for_humans(make_vault: Callable[..., Layout], isolated_env: dict[str, str]) -> None:
    v = make_vault()
    r = run_script(v.root, SCRIPT, args=("--text",))
    assert r.stdout.startswith("# Session briefing")
    _meter(r.stdout)


def test_starts_a_qmd_refresh_when_the_index_exists(
    make_vault: Callable[..., Layout], isolated_env: dict[str, str], fake_qmd: Path
) -> None:
    v = make_vault("My Vault")
    log = fake_qmd.parent / "qmd.log"
    run_script(v.root, SCRIPT, payloads.session_start("claude", v.root), env={"PATH": _path_with(fake_qmd)})
    assert not log.exists()  # no index configured yet: nothing to refresh
    cfg = Path(isolated_env["XDG_CONFIG_HOME"]) / "qmd" / "my-vault.yml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("collections:\n  my-vault:\n    path: x\n")
    run_script(v.root, SCRIPT, payloads.session_start("claude", v.root), env={"PATH": _path_with(fake_qmd)})
    assert _wait_for(log), "qmd was not started"
    assert log.read_text().splitlines()[0] == "--index my-vault update"


def _path_with(fake_qmd: Path) -> str:
    return str(fake_qmd.parent) + os.pathsep + os.environ.get("PATH", "")


def _wait_for(path: Path, seconds: float = 10.0) -> bool:
    import time

    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return True
        time.sleep(0.05)
    return False
