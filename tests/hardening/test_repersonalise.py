"""Issue 26, item 2: editing shard-values.yaml and running `update`
re-personalises the vault. The flagship's Home card and North Star heading
are templates, so update re-renders them with the new values and merges the
user's own edits (it used to say "101 unchanged": a hook had written the
values at install, and update never runs it again). A shard that still
writes values only through an install-time hook cannot be re-rendered:
update says so instead of a silent "unchanged" (docs/UPDATE.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.shardkit import Cli, make_shard, run_shardpy, tree_snapshot

HOME, NORTH_STAR = "Home.md", "brain/North Star.md"
NEW_VALUES = {"user_name": "Ada Lovelace", "org_name": "Analytical Engines", "vault_purpose": "research"}


@pytest.fixture
def home_env(tmp_path: Path) -> dict[str, str]:
    """HOME and XDG folders inside the test: the bootstrap hook writes there."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "SHARDPY_GITHUB_API_BASE": "http://127.0.0.1:9",
    }


def shardpy(*args: str | Path, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = run_shardpy(*args, cwd=cwd, env=env, timeout=300)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def install_flagship(tmp_path: Path, env: dict[str, str]) -> Path:
    vault = tmp_path / "vault"
    done = shardpy("install", "--defaults", vault, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return vault


def edit_values(vault: Path, values: dict[str, str]) -> None:
    """Edit shard-values.yaml by hand, as the user does (comments stay)."""
    path = vault / "shard-values.yaml"
    text = path.read_text(encoding="utf-8")
    for key, value in values.items():
        text, n = re.subn(rf"(?m)^{key}:.*$", f"{key}: {value}", text)
        assert n == 1, key
    path.write_text(text, encoding="utf-8")


def append(path: Path, line: str) -> None:
    path.write_bytes(path.read_bytes() + line.encode("utf-8"))


def test_update_re_renders_the_flagship_and_keeps_the_user_edits(
    tmp_path: Path, home_env: dict[str, str]
) -> None:
    vault = install_flagship(tmp_path, home_env)
    append(vault / HOME, "- my own link list\n")
    append(vault / NORTH_STAR, "- ship the analytical engine\n")
    edit_values(vault, NEW_VALUES)

    done = shardpy("update", "--yes", cwd=vault, env=home_env)
    assert done.returncode == 0, done.stdout + done.stderr
    home = (vault / HOME).read_text(encoding="utf-8")
    star = (vault / NORTH_STAR).read_text(encoding="utf-8")
    card = "> **Owner:** Ada Lovelace\n> **Organisation:** Analytical Engines\n> **Purpose:** research\n"
    assert card in home
    assert home.endswith("- my own link list\n")
    assert "\n# North Star — Ada Lovelace\n" in star
    assert star.endswith("- ship the analytical engine\n")
    assert re.search(r"(?m)^merge\s+Home\.md\s", done.stdout), done.stdout
    assert re.search(r"(?m)^merge\s+brain/North Star\.md\s", done.stdout), done.stdout

    # A second update has nothing left to do.
    before = tree_snapshot(vault, skip=(".git/", ".shardmind/"))
    again = shardpy("update", "--yes", cwd=vault, env=home_env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "Up to date" in again.stdout
    assert tree_snapshot(vault, skip=(".git/", ".shardmind/")) == before


def test_a_rewritten_heading_and_crlf_lines_survive_the_re_render(
    tmp_path: Path, home_env: dict[str, str]
) -> None:
    vault = install_flagship(tmp_path, home_env)
    star_path, home_path = vault / NORTH_STAR, vault / HOME
    mine = star_path.read_text(encoding="utf-8").replace("\n# North Star\n", "\n# Where I am going\n")
    star_path.write_text(mine, encoding="utf-8")
    home_path.write_bytes(home_path.read_bytes().replace(b"\n", b"\r\n"))
    edit_values(vault, {"user_name": "Ada Lovelace"})

    # Even --on-conflict theirs: a user-content note the user changed is never overwritten (§5).
    done = shardpy("update", "--yes", "--on-conflict", "theirs", cwd=vault, env=home_env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert star_path.read_text(encoding="utf-8") == mine  # the user's heading wins; nothing else changed
    assert re.search(r"(?m)^keep\s+brain/North Star\.md\s.*kept yours", done.stdout), done.stdout
    home = home_path.read_bytes()
    assert b"> **Owner:** Ada Lovelace\r\n" in home
    assert b"\n" not in home.replace(b"\r\n", b"")  # still CRLF throughout


HOOK = """
import json, os, pathlib
ctx = json.loads(pathlib.Path(os.environ["SHARDPY_HOOK_CONTEXT"]).read_text())
p = pathlib.Path("Card.md")
p.write_text(p.read_text().replace("Owner: nobody", "Owner: " + ctx["values"]["who"]))
"""


@pytest.mark.parametrize("slot", ["personalize", "post-install"])
def test_a_shard_that_personalises_through_a_hook_says_update_cannot(
    tmp_path: Path, cli: Cli, slot: str
) -> None:
    shard = make_shard(
        tmp_path / "src",
        files={"Card.md": "Owner: nobody\n", "Page.md.njk": "By {{ who }}\n"},
        schema={"values": {"who": {"type": "string", "default": "", "message": "Who"}}},
        hooks={slot: HOOK},
    )
    vault = tmp_path / "vault"
    assert cli.run("install", shard, vault, "--defaults", "--data", "who=Ada").exit_code == 0
    assert (vault / "Card.md").read_text() == "Owner: Ada\n"
    edit_values(vault, {"who": "Grace"})

    res = cli.run("update", "--yes", "--json", cwd=vault)
    assert res.exit_code == 0, res.output
    data = res.json()
    assert data["values"]["changed"]["who"]
    [warning] = [w for w in data["warnings"] if "who" in w]
    assert slot in warning and "keep the old values" in warning
    assert (vault / "Page.md").read_text() == "By Grace\n"  # the template was re-rendered
    assert (vault / "Card.md").read_text() == "Owner: Ada\n"  # the hook's note was not

    plain = cli.run("update", "--yes", cwd=vault)  # up to date now: no warning repeated
    assert plain.exit_code == 0 and "keep the old values" not in plain.output
