"""Items 7 and 8: two-part release tags (``v5.1``) are releases like any
other, ``--from-version`` takes every spelling ``@version`` takes, and a
local git checkout named without ``@``/``#`` is a git source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shardpy.sources.releases import find_pinned, make_release
from shardpy.versions import version_from_tag
from tests.shardkit import Cli
from tests.sources.support import GIT_ENV, git

TAGS = ("v5.1", "v6.0", "v6.2", "v6.2.1", "v8.3.5")
MANIFEST = "apiVersion: v1\nnamespace: acme\nname: mind\nversion: {version}\n"


def _version(tag: str) -> str:
    parsed = version_from_tag(tag)
    assert parsed is not None
    return str(parsed)


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))


def build_repo(path: Path, tags: tuple[str, ...] = TAGS) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "--template=", "-b", "main")
    for tag in tags:
        version = _version(tag)
        (path / ".shardmind").mkdir(exist_ok=True)
        (path / ".shardmind/shard.yaml").write_text(MANIFEST.format(version=version))
        (path / "Home.md").write_text(f"# Home {version}\n")
        for i in range(4):
            (path / f"brain/n{i}.md").parent.mkdir(exist_ok=True)
            (path / f"brain/n{i}.md").write_text(f"note {i} of {version}\n")
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", tag)
        git(path, "tag", tag)
    return path


def test_two_part_tags_are_versions_and_every_spelling_pins_them() -> None:
    releases = [make_release(t, commit=t) for t in TAGS]
    assert [r.version for r in releases] == ["5.1.0", "6.0.0", "6.2.0", "6.2.1", "8.3.5"]
    for spelling in ("5.1", "v5.1", "5.1.0", "v5.1.0"):
        found = find_pinned(releases, spelling)
        assert found is not None and found.tag == "v5.1", spelling
    assert find_pinned(releases, "7.0") is None


@pytest.mark.parametrize("spelling", ["5.1", "v5.1", "5.1.0"])
def test_adopt_detects_and_accepts_a_two_part_release(tmp_path: Path, cli: Cli, spelling: str) -> None:
    repo = build_repo(tmp_path / "repo")
    vault = tmp_path / "vault"
    git(tmp_path, "clone", "-q", str(repo), str(vault))
    git(vault, "checkout", "-q", "v5.1")
    res = cli.run("adopt", f"git+{repo}@8.3.5", "--mode", "merge", "--yes", "--dry-run", "--json", cwd=vault)
    assert res.exit_code == 0, res.output
    assert res.json()["detected_version"] == "5.1.0"
    res = cli.run(
        "adopt", f"git+{repo}@8.3.5", "--from-version", spelling, "--yes", "--dry-run", "--json", cwd=vault
    )
    assert res.exit_code == 0, res.output
    assert res.json()["detected_version"] == "5.1.0"


def test_from_version_v6_0_and_a_missing_one(tmp_path: Path, cli: Cli) -> None:
    repo = build_repo(tmp_path / "repo")
    vault = tmp_path / "vault"
    git(tmp_path, "clone", "-q", str(repo), str(vault))
    git(vault, "checkout", "-q", "v6.0")
    res = cli.run(
        "adopt", f"git+{repo}@8.3.5", "--from-version", "v6.0", "--yes", "--dry-run", "--json", cwd=vault
    )
    assert res.exit_code == 0, res.output
    assert res.json()["detected_version"] == "6.0.0"
    res = cli.run("adopt", f"git+{repo}@8.3.5", "--from-version", "7.0", "--yes", "--json", cwd=vault)
    err = res.json()["error"]
    assert err["code"] == "ADOPT_VERSION_NOT_FOUND"
    assert "5.1.0" in err["hint"]


def test_install_at_a_two_part_tag(tmp_path: Path, cli: Cli) -> None:
    repo = build_repo(tmp_path / "repo")
    out = cli.install_json(f"git+{repo}@6.0", tmp_path / "vault", "--defaults")
    assert out["version"] == "6.0.0"


def _state(vault: Path) -> dict[str, object]:
    data = json.loads((vault / ".shardmind/state.json").read_text())
    assert isinstance(data, dict)
    return data


def test_a_checkout_without_suffix_is_a_git_source_at_its_tag(tmp_path: Path, cli: Cli) -> None:
    repo = build_repo(tmp_path / "repo", ("v1.0.0", "v1.1.0"))
    checkout = tmp_path / "myshard-co"
    git(tmp_path, "clone", "-q", str(repo), str(checkout))
    git(checkout, "checkout", "-q", "v1.0.0")
    vault = tmp_path / "vault"
    cli.install_json(checkout, vault, "--defaults")
    state = _state(vault)
    assert state["source_kind"] == "git"
    assert state["resolved_commit"] == git(checkout, "rev-parse", "HEAD")
    assert state["version"] == "1.0.0"
    res = cli.run("update", "--dry-run", "--json", cwd=vault)
    assert res.exit_code == 0, res.output
    assert res.json()["to_version"] == "1.1.0"
    res = cli.run("update", "--release", "1.1.0", "--yes", "--json", cwd=vault)
    assert res.exit_code == 0, res.output
    assert (vault / "Home.md").read_text() == "# Home 1.1.0\n"


def test_a_checkout_on_an_untagged_branch_tracks_the_branch(tmp_path: Path, cli: Cli) -> None:
    repo = build_repo(tmp_path / "repo", ("v1.0.0",))
    (repo / "Home.md").write_text("# tip\n")
    git(repo, "commit", "-q", "-am", "tip")
    vault = tmp_path / "vault"
    cli.install_json(repo, vault, "--defaults")
    state = _state(vault)
    assert (state["source_kind"], state["ref"]) == ("git", "main")
    assert state["resolved_commit"] == git(repo, "rev-parse", "HEAD")


def test_a_folder_with_a_stray_git_folder_is_still_a_folder(tmp_path: Path, cli: Cli) -> None:
    from tests.shardkit import make_shard

    shard = make_shard(tmp_path / "shard", files={"a.md": "a\n", ".git/HEAD": "ref: refs/heads/main\n"})
    cli.install_json(shard, tmp_path / "vault", "--defaults")
    assert _state(tmp_path / "vault")["source_kind"] == "local"
