"""The flagship through the real engine: install, update and adopt, via the CLI.

The tests call the CLI the way a user does, in a child process whose socket
layer refuses every connection, so "takes no network" is proven rather than
assumed.

Expected CLI (CONTRACT §7):
  shardpy install [SOURCE] [DEST] [--defaults] [--values FILE] [--yes]
  shardpy update [--yes]                          (cwd = the vault)
  shardpy adopt SOURCE [--values FILE] [--mode M] [--from-version V] [--yes]
Deselecting a module at install is done with EXCLUDE_FLAG (repeatable).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.flagship.old_version import (
    CLAUDE_PARAGRAPH_1_0_0,
    USER_CLAUDE_SECTION,
    add_user_notes,
    edit_claude_md,
    make_flagship_0_9_0,
    make_flagship_history,
)
from tests.flagship.shardtools import (
    REPO_ROOT,
    SHARD_ROOT,
    claim,
    installable_files,
    lay_out_vault,
    schema,
    shipped_text,
    strip_njk,
)

EXCLUDE_FLAG = "--exclude-module"

# Runs shardpy with every socket connection and name lookup refused.
NO_NETWORK = """
import runpy, socket, sys
def _deny(*args, **kwargs):
    raise OSError("network access attempted by shardpy during a flagship test")
socket.socket.connect = _deny
socket.socket.connect_ex = _deny
socket.create_connection = _deny
socket.getaddrinfo = _deny
sys.argv = ["shardpy", *sys.argv[1:]]
runpy.run_module("shardpy", run_name="__main__", alter_sys=True)
"""


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    return {
        **os.environ,
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "SHARDPY_GITHUB_API_BASE": "http://127.0.0.1:9",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
    }


def shardpy(
    args: list[str], env: dict[str, str], cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-c", NO_NETWORK, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(cwd) if cwd else None,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert "network access attempted" not in done.stdout + done.stderr, done.stderr
    return done


def tree(root: Path, *, skip: tuple[str, ...] = (".shardmind/", ".git/")) -> dict[str, bytes]:
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(skip) and rel != "shard-values.yaml":
            out[rel] = p.read_bytes()
    return out


def write_values(path: Path, values: dict[str, Any]) -> Path:
    path.write_text("".join(f"{k}: {json.dumps(v)}\n" for k, v in values.items()), encoding="utf-8")
    return path


def state(vault: Path) -> dict[str, Any]:
    data = json.loads((vault / ".shardmind" / "state.json").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def assert_invariant_1(vault: Path, source_root: Path = REPO_ROOT, shard_root: Path = SHARD_ROOT) -> None:
    """install --defaults = the shard root minus exclusions, plus .shardmind/
    and shard-values.yaml. `.git/` is bootstrap's `git init` (Tier 1)."""
    files = installable_files(source_root, shard_root)
    installed = tree(vault)
    assert set(installed) == {strip_njk(f) for f in files}
    for rel in files:
        if not rel.endswith(".njk"):
            assert installed[rel] == (shard_root / rel).read_bytes(), rel
    assert (vault / ".shardmind" / "state.json").is_file()
    assert (vault / "shard-values.yaml").is_file()
    extras = (
        {p.name for p in vault.iterdir()} - {Path(f).parts[0] for f in installed} - {".shardmind", ".git"}
    )
    assert extras == {"shard-values.yaml"}, extras


# --- install ---------------------------------------------------------------------------------


def test_bundled_install_defaults_is_the_shard_without_network(tmp_path: Path, env: dict[str, str]) -> None:
    dest = tmp_path / "agent-vault"
    done = shardpy(["install", "--defaults", str(dest)], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_invariant_1(dest)
    st = state(dest)
    assert st["version"] == "1.0.0"
    assert set(st["modules"].values()) == {"included"}
    # Defaults render the personal templates as the plain notes.
    for rel in ("brain/North Star.md", "Home.md"):
        assert (dest / rel).read_text(encoding="utf-8") == shipped_text(rel)
    assert "\n# North Star\n" in (dest / "brain/North Star.md").read_text(encoding="utf-8")
    # The one template rendered as its defaults say: QMD's server only where qmd is installed (issue 29).
    has_qmd = shutil.which("qmd", path=env.get("PATH")) is not None
    assert ("qmd" in json.loads((dest / ".mcp.json").read_text())["mcpServers"]) is has_qmd
    # bootstrap ran: a repository without commits.
    assert (dest / ".git").is_dir()
    head = subprocess.run(["git", "-C", str(dest), "rev-parse", "--verify", "HEAD"], capture_output=True)
    assert head.returncode != 0


def test_install_from_the_repository_source_root(tmp_path: Path, env: dict[str, str]) -> None:
    dest = tmp_path / "v"
    done = shardpy(["install", str(REPO_ROOT), str(dest), "--defaults", "--yes"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_invariant_1(dest)
    assert not (dest / "CONTRIBUTING.md").exists()  # the repository's .shardmindignore applied


def test_install_with_values_personalises(tmp_path: Path, env: dict[str, str]) -> None:
    dest = tmp_path / "v"
    values = write_values(
        tmp_path / "values.yaml",
        {
            "user_name": "Ada Lovelace",
            "org_name": "Analytical Engines",
            "vault_purpose": "research",
            "qmd_enabled": False,
        },
    )
    done = shardpy(["install", str(REPO_ROOT), str(dest), "--values", str(values), "--yes"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\n# North Star — Ada Lovelace\n" in (dest / "brain/North Star.md").read_text()
    home = (dest / "Home.md").read_text()
    assert "> **Owner:** Ada Lovelace\n" in home and "> **Organisation:** Analytical Engines\n" in home
    # Without qmd only the vault's own MCP server (shardpy serve) is registered.
    assert json.loads((dest / ".mcp.json").read_text()) == {
        "mcpServers": {"vault": {"command": "shardpy", "args": ["serve", "."]}}
    }
    # Personalised files are managed at their new hashes, not reported as user edits.
    files = state(dest)["files"]
    assert files["Home.md"]["ownership"] == "managed"


@pytest.mark.parametrize("module", ["org", "perf", "incidents", "one_on_ones", "codex", "gemini"])
def test_deselected_module_leaves_none_of_its_files(module: str, tmp_path: Path, env: dict[str, str]) -> None:
    dest = tmp_path / "v"
    done = shardpy(["install", str(REPO_ROOT), str(dest), "--defaults", "--yes", EXCLUDE_FLAG, module], env)
    assert done.returncode == 0, done.stdout + done.stderr
    modules = schema()["modules"]
    mine = [strip_njk(f) for f in installable_files() if claim(f, modules) == module]
    assert mine
    for rel in mine:
        assert not (dest / rel).exists(), rel
    if module == "codex":
        assert not (dest / "AGENTS.md").exists() and not (dest / ".codex").exists()
    if module == "gemini":
        assert not (dest / "GEMINI.md").exists() and not (dest / ".gemini").exists()
    others = [strip_njk(f) for f in installable_files() if claim(f, modules) != module]
    for rel in others:
        assert (dest / rel).exists(), rel
    assert state(dest)["modules"][module] == "excluded"


# --- update: 0.9.0 → 1.0.0 -------------------------------------------------------------------


def _expected_after_rename(text: str) -> str:
    return text.replace("[[Decisions Log", "[[Key Decisions")


def _check_updated_vault(vault: Path, notes: dict[Path, str], untouched: dict[Path, bytes]) -> None:
    assert state(vault)["version"] == "1.0.0"
    claude = (vault / "CLAUDE.md").read_text()
    assert claude.endswith(USER_CLAUDE_SECTION)  # the user's edit survived the merge
    assert CLAUDE_PARAGRAPH_1_0_0 in claude  # and upstream's paragraph arrived
    assert "`/daily-standup` (plan the day)" in claude and "`brain/Key Decisions.md`" in claude
    assert "<<<<<<<" not in claude
    cmd = vault / ".claude/commands/daily-standup.md"
    assert cmd.is_file() and not (vault / ".claude/commands/standup.md").exists()
    assert cmd.read_text().endswith("\nAlso list yesterday's merged PRs.\n")  # moved with the user's edit
    assert (vault / "brain/Key Decisions.md").is_file() and not (vault / "brain/Decisions Log.md").exists()
    for path, before in notes.items():
        assert path.read_text() == _expected_after_rename(before), path  # links rewritten, nothing else
    for path, data in untouched.items():
        assert path.read_bytes() == data, path
    assert "qmd_enabled" in (vault / "shard-values.yaml").read_text()  # the added value, defaulted


def _user_side(vault: Path) -> tuple[dict[Path, str], dict[Path, bytes]]:
    edit_claude_md(vault)
    cmd = vault / ".claude/commands/standup.md"
    cmd.write_text(cmd.read_text() + "\nAlso list yesterday's merged PRs.\n")
    notes = {p: p.read_text() for p in add_user_notes(vault, 50)}
    plain = {}
    for i in range(10):
        p = vault / "thinking" / f"Unlinked Draft {i}.md"
        p.write_bytes(f"# Draft {i}\r\nNo links to renamed notes; [[North Star]] only.\r\n".encode())
        plain[p] = p.read_bytes()
    return notes, plain


def test_update_0_9_0_to_1_0_0_merges_moves_and_rewrites(tmp_path: Path, env: dict[str, str]) -> None:
    repo = make_flagship_history(tmp_path / "agent-vault-repo")
    vault = tmp_path / "vault"
    done = shardpy(["install", f"{repo}@0.9.0", str(vault), "--defaults", "--yes"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert state(vault)["version"] == "0.9.0"
    notes, plain = _user_side(vault)
    done = shardpy(["update", "--yes"], env, cwd=vault)
    assert done.returncode == 0, done.stdout + done.stderr
    _check_updated_vault(vault, notes, plain)
    # The value 1.0.0 added is computed on the updating machine, as at install (issue 29): QMD's
    # server is registered only where qmd is installed (the migration's literal true did before).
    has_qmd = shutil.which("qmd", path=env.get("PATH")) is not None
    assert ("qmd" in json.loads((vault / ".mcp.json").read_text())["mcpServers"]) is has_qmd
    # A second update is a no-op.
    before = tree(vault)
    again = shardpy(["update", "--yes"], env, cwd=vault)
    assert again.returncode == 0 and tree(vault) == before


def test_install_of_the_derived_0_9_0_directory_satisfies_invariant_1(
    tmp_path: Path, env: dict[str, str]
) -> None:
    source = make_flagship_0_9_0(tmp_path / "old")
    vault = tmp_path / "vault"
    done = shardpy(["install", str(source), str(vault), "--defaults", "--yes"], env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_invariant_1(vault, source, source / "shard-template")


# --- adopt a 0.9.0 clone ---------------------------------------------------------------------


def test_adopt_a_0_9_0_clone_with_history(tmp_path: Path, env: dict[str, str]) -> None:
    repo = make_flagship_history(tmp_path / "agent-vault-repo")
    old = make_flagship_0_9_0(tmp_path / "old-source")
    clone = lay_out_vault(
        tmp_path / "clone", state=False, source_root=old, shard_root=old / "shard-template"
    ).root
    notes, plain = _user_side(clone)
    values = write_values(
        tmp_path / "values.yaml",
        {"user_name": "", "org_name": "Independent", "vault_purpose": "engineering", "qmd_enabled": True},
    )
    # CONTRACT §7 gives adopt no --yes; pass it only if the engine has one.
    yes = ["--yes"] if "--yes" in shardpy(["adopt", "--help"], env).stdout else []
    done = shardpy(
        ["adopt", str(repo), "--values", str(values), "--mode", "merge", "--from-version", "0.9.0", *yes],
        env,
        cwd=clone,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    _check_updated_vault(clone, notes, plain)


def test_hooks_leave_no_bytecode_in_the_shard_source() -> None:
    """Hooks run from the shard source; they must never write into it."""
    assert not list(SHARD_ROOT.rglob("__pycache__"))
