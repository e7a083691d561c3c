"""bootstrap / post_update, run the way the engine runs them:
`python <shard>/.shardmind/hooks/<script>` from the shard source, the vault
as working directory, the context JSON in SHARDPY_HOOK_CONTEXT and on stdin."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.flagship.shardtools import SHARD_ROOT, Layout, defaults, schema

HOOKS = SHARD_ROOT / ".shardmind" / "hooks"


def _context(layout: Layout, slot: str, **extra: Any) -> dict[str, Any]:
    sch = schema()
    return {
        "slot": slot,
        "vault_root": str(layout.root),
        "values": layout.values,
        "modules": layout.modules,
        "shard": {"namespace": "shardpy", "name": "agent-vault", "version": "1.0.0"},
        "values_are_defaults": layout.values == defaults(sch),
        **extra,
    }


def run_hook(
    script: str,
    layout: Layout,
    ctx: dict[str, Any],
    *,
    env: dict[str, str] | None = None,
    via: str = "both",
    tmp: Path,
) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("SHARDPY_HOOK", "SHARDMIND_HOOK"))}
    full_env.update({"SHARDPY_HOOK": "1", "SHARDPY_HOOK_PHASE": ctx["slot"]})
    if via in ("both", "file"):
        ctx_file = tmp / f"ctx-{ctx['slot']}.json"
        ctx_file.write_text(json.dumps(ctx), encoding="utf-8")
        full_env["SHARDPY_HOOK_CONTEXT"] = str(ctx_file)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, str(HOOKS / script)],
        input=json.dumps(ctx) if via in ("both", "stdin") else "",
        capture_output=True,
        text=True,
        cwd=str(layout.root),
        env=full_env,
        timeout=120,
    )


def snapshot(root: Path) -> dict[str, str]:
    """Hash of every file except git's own folder."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(".git/"):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _git_only_path(tmp: Path) -> str:
    bindir = tmp / "gitbin"
    bindir.mkdir(exist_ok=True)
    git = shutil.which("git")
    assert git
    if not (bindir / "git").exists():
        os.symlink(git, bindir / "git")
    return str(bindir)


# --- the personal templates: Home card, North Star heading ------------------------------
# The values reach notes only through Home.md.njk and brain/North Star.md.njk,
# which the engine renders at install and re-renders and merges on update
# (CRLF notes, a rewritten heading, the user's own lines kept: those are
# merge behaviours, covered end to end in tests/hardening/test_repersonalise.py).

HOME, NORTH_STAR = "Home.md", "brain/North Star.md"


def render_personal(rel: str, **vals: Any) -> str:
    """``rel``'s template rendered by the engine's own renderer."""
    from shardpy.shard.render import RenderContext, render_template

    sch = schema()
    ctx = RenderContext(
        {**defaults(sch), **vals},
        list(sch["modules"]),
        "agent-vault",
        "shardpy",
        "1.0.0",
        "2026-11-29T00:00:00Z",
    )
    source = (SHARD_ROOT / f"{rel}.njk").read_text(encoding="utf-8")
    [out] = render_template(source, rel, ctx, name=f"{rel}.njk")
    return out.text


def test_personal_templates_render_the_values() -> None:
    star = render_personal(NORTH_STAR, user_name="Ada Lovelace")
    home = render_personal(
        HOME, user_name="Ada Lovelace", org_name="Analytical Engines", vault_purpose="research"
    )
    assert "\n# North Star — Ada Lovelace\n\n" in star
    assert (
        "> **Owner:** Ada Lovelace\n> **Organisation:** Analytical Engines\n> **Purpose:** research\n" in home
    )


def test_personal_templates_on_defaults_are_the_plain_notes() -> None:
    """Defaults render the notes the shard shipped before they were templates
    (Invariant 1 holds byte for byte: no dash, no empty owner)."""
    star = render_personal(NORTH_STAR)
    home = render_personal(HOME)
    assert "\n# North Star\n\n> Every session starts by reading this note." in star
    assert "> **Owner:** (not set)\n> **Organisation:** Independent\n> **Purpose:** engineering\n" in home
    blank = render_personal(NORTH_STAR, user_name="  \n ")
    assert blank == star and render_personal(HOME, user_name=" ", org_name="\n") == home


def test_personal_templates_keep_values_on_one_line() -> None:
    star = render_personal(NORTH_STAR, user_name=" Ada\nKing\r\nLovelace ")
    home = render_personal(HOME, user_name="Ada\nLovelace", org_name="Analytical\r\nEngines")
    plain_star, plain_home = render_personal(NORTH_STAR), render_personal(HOME)
    assert len(star.splitlines()) == len(plain_star.splitlines())
    assert len(home.splitlines()) == len(plain_home.splitlines())
    heading = next(line for line in star.splitlines() if line.startswith("# North Star"))
    assert heading.startswith("# North Star — Ada King") and heading.endswith("Lovelace")
    assert "\r" not in star + home
    assert "> **Owner:** Ada Lovelace\n" in home


# --- post-update ------------------------------------------------------------------------


def test_post_update_touches_only_new_files(make_vault: Callable[..., Layout], tmp_path: Path) -> None:
    v = make_vault(values={"user_name": "Ada", "org_name": "Acme"})
    before = snapshot(v.root)
    ctx = _context(
        v,
        "post-update",
        previous_version="0.9.0",
        new_files=[".claude/commands/daily-standup.md", "bases/Memories.base"],
        removed_files=[".claude/commands/standup.md"],
    )
    r = run_hook("post_update.py", v, ctx, tmp=tmp_path)
    assert r.returncode == 0, r.stderr
    assert snapshot(v.root) == before  # Home and North Star were not added: untouched
    assert "agent-vault 0.9.0 -> 1.0.0: 2 files added, 1 removed." in r.stdout
    assert "new commands: /daily-standup" in r.stdout


def test_post_update_writes_no_file_even_for_a_recreated_note(
    make_vault: Callable[..., Layout], tmp_path: Path
) -> None:
    """A re-created Home or North Star is rendered by the engine with the
    current values; the hook writes nothing (Invariant 3 allows it new files only)."""
    for values in ({}, {"user_name": "Ada", "org_name": "Acme"}):
        v = make_vault(values=values)
        before = snapshot(v.root)
        ctx = _context(v, "post-update", previous_version="0.9.0", new_files=[NORTH_STAR, HOME])
        r = run_hook("post_update.py", v, ctx, tmp=tmp_path)
        assert r.returncode == 0, r.stderr
        assert snapshot(v.root) == before


# --- bootstrap --------------------------------------------------------------------------


def test_bootstrap_inits_git_never_commits_and_touches_no_file(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str]
) -> None:
    v = make_vault("Work Notes")
    before = snapshot(v.root)
    r = run_hook(
        "bootstrap.py",
        v,
        _context(v, "bootstrap", fingerprint="x"),
        env={"PATH": _git_only_path(tmp_path)},
        tmp=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    assert (v.root / ".git").is_dir()
    head = subprocess.run(["git", "-C", str(v.root), "rev-parse", "--verify", "HEAD"], capture_output=True)
    assert head.returncode != 0  # no commit
    assert snapshot(v.root) == before
    assert "qmd: not installed" in r.stdout
    assert "qmd --index work-notes collection add . --name work-notes" in r.stdout
    assert not (Path(isolated_env["XDG_CONFIG_HOME"]) / "qmd").exists()
    # Running again (a changed fingerprint on update) is harmless.
    r2 = run_hook(
        "bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": _git_only_path(tmp_path)}, tmp=tmp_path
    )
    assert r2.returncode == 0 and "already a repository" in r2.stdout
    assert snapshot(v.root) == before


def test_bootstrap_does_not_nest_repositories(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    subprocess.run(["git", "init", "-q", str(v.root.parent)], check=True)
    r = run_hook(
        "bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": _git_only_path(tmp_path)}, tmp=tmp_path
    )
    assert r.returncode == 0 and "not creating a nested one" in r.stdout
    assert not (v.root / ".git").exists()


def test_bootstrap_without_git(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str]
) -> None:
    v = make_vault()
    empty = tmp_path / "nobin"
    empty.mkdir()
    r = run_hook("bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": str(empty)}, tmp=tmp_path)
    assert r.returncode == 0 and "git: not found" in r.stdout
    assert not (v.root / ".git").exists()


def test_bootstrap_sets_up_the_qmd_index(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str], fake_qmd: Path
) -> None:
    v = make_vault("Work Notes")
    before = snapshot(v.root)
    path = _git_only_path(tmp_path) + os.pathsep + str(fake_qmd.parent)
    r = run_hook("bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": path}, tmp=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    calls = (fake_qmd.parent / "qmd.log").read_text().splitlines()
    assert calls[0] == "--index work-notes collection add . --name work-notes --mask **/*.md"
    assert calls[1].startswith("--index work-notes context add qmd://work-notes Personal work vault")
    assert calls[2] == "--index work-notes update"
    assert len(calls) == 3
    cfg = (Path(isolated_env["XDG_CONFIG_HOME"]) / "qmd" / "work-notes.yml").read_text()
    assert (
        '    ignore:\n      - "templates/**"\n      - "thinking/session-logs/**"\n'
        '      - "CHANGELOG.md"\n      - "LICENSE"\n' in cfg
    )
    assert "ignore list synced" in r.stdout and "embed" in r.stdout
    assert snapshot(v.root) == before
    # Re-run: the existing collection is fine, the ignore list is replaced, not repeated.
    r2 = run_hook("bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": path}, tmp=tmp_path)
    assert r2.returncode == 0, r2.stdout
    cfg2 = (Path(isolated_env["XDG_CONFIG_HOME"]) / "qmd" / "work-notes.yml").read_text()
    assert cfg2 == cfg


def test_bootstrap_respects_qmd_disabled_and_a_pinned_index(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str], fake_qmd: Path
) -> None:
    v = make_vault(values={"qmd_enabled": False})
    path = _git_only_path(tmp_path) + os.pathsep + str(fake_qmd.parent)
    r = run_hook("bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": path}, tmp=tmp_path)
    assert r.returncode == 0 and "qmd: disabled" in r.stdout
    assert not (fake_qmd.parent / "qmd.log").exists()
    manifest = v.root / "vault-manifest.json"
    data = json.loads(manifest.read_text())
    data["qmd_index"] = "Team Notes"
    manifest.write_text(json.dumps(data))
    v.values["qmd_enabled"] = True
    run_hook("bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": path}, tmp=tmp_path)
    assert (fake_qmd.parent / "qmd.log").read_text().startswith("--index team-notes collection add")


def test_bootstrap_reports_a_failing_qmd(
    make_vault: Callable[..., Layout], tmp_path: Path, isolated_env: dict[str, str], fake_qmd: Path
) -> None:
    v = make_vault()
    path = _git_only_path(tmp_path) + os.pathsep + str(fake_qmd.parent)
    r = run_hook(
        "bootstrap.py", v, _context(v, "bootstrap"), env={"PATH": path, "FAKE_QMD_EXIT": "3"}, tmp=tmp_path
    )
    assert r.returncode == 1 and "qmd: creating the index failed" in r.stdout
    assert (v.root / ".git").is_dir()  # git still happened


@pytest.mark.parametrize("script", ["bootstrap.py", "post_update.py"])
def test_bad_context_file_is_a_warning_not_a_crash(
    script: str, make_vault: Callable[..., Layout], tmp_path: Path
) -> None:
    v = make_vault()
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    r = run_hook(
        script, v, _context(v, "x"), env={"SHARDPY_HOOK_CONTEXT": str(bad)}, via="file", tmp=tmp_path
    )
    assert r.returncode == 1 and "cannot read hook context" in r.stderr
    assert "Traceback" not in r.stderr
