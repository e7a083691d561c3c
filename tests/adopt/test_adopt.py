"""`shardpy adopt` through the CLI, on clones of a git shard with history."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.shardkit import Cli
from tests.sources.support import GIT_ENV, git

MANIFEST = "apiVersion: v1\nnamespace: acme\nname: vault\nversion: {version}\n"
SCHEMA = (
    "schema_version: 1\nvalues:\n  user_name: {type: string, default: '', group: g}\n"
    "groups: [{id: g, label: G}]\nmodules:\n  extra: {label: Extra, paths: [extra/], removable: true}\n"
)
LETTERS = "ABCDE"


def note(letter: str, version: str) -> str:
    top = f"top line of {letter}" + ("" if version == "1.0.0" else f" (v{version})")
    second = f"second line of {letter}" + (" (v1.2.0)" if version == "1.2.0" else "")
    return f"# {letter}\n\n{top}\n\n{second}\n\n## Middle\nmiddle of {letter}\n\n## End\nend of {letter}\n"


def files_for(version: str) -> dict[str, str]:
    files = {f"brain/{x}.md": note(x, version) for x in LETTERS}
    files["Home.md"] = f"# Home {version}\n"
    files["brain/F.md"] = f"F {version}\n"
    files["brain/Deleted.md"] = "deleted by the user\n"
    files["extra/x.md"] = "x\n"
    if version != "1.0.0":
        files["brain/New.md"] = "new since 1.0.0\n"
    return files


def commit_release(path: Path, files: dict[str, str], version: str) -> None:
    """Commit ``files`` and the shard's manifest at ``version`` in the shard repository ``path``,
    tagged v``version``."""
    for rel, text in files.items():
        target = path / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    (path / ".shardmind").mkdir(exist_ok=True)
    (path / ".shardmind/shard.yaml").write_text(MANIFEST.format(version=version))
    (path / ".shardmind/shard-schema.yaml").write_text(SCHEMA)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", version)
    git(path, "tag", f"v{version}")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("repo") / "shard"
    path.mkdir()
    old = {k: os.environ.get(k) for k in GIT_ENV}
    os.environ.update(GIT_ENV)
    try:
        git(path, "init", "-q", "--template=", "-b", "main")
        for version in ("1.0.0", "1.1.0", "1.2.0"):
            commit_release(path, files_for(version), version)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return path


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SHARDPY_CACHE_DIR", str(tmp_path / "cache"))


def run(cli: Cli, where: Path, *args: str) -> tuple[int, Any]:
    res = cli.run(*args, "--json", cwd=where)
    return res.exit_code, res.json()


def clone(repo: Path, dest: Path, version: str) -> Path:
    git(dest.parent, "clone", "-q", str(repo), str(dest))
    git(dest, "checkout", "-q", f"v{version}")
    return dest


def tree(root: Path) -> dict[str, str]:
    """path → sha256 of every file outside .git/."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if p.is_file() and not rel.startswith(".git/"):
            out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def edit(vault: Path, letter: str) -> None:
    path = vault / f"brain/{letter}.md"
    path.write_text(path.read_text().replace(f"middle of {letter}", f"middle of {letter}, edited by me"))


def test_merge_mode_detects_old_version_and_next_update_merges(repo: Path, tmp_path: Path, cli: Cli) -> None:
    vault = clone(repo, tmp_path / "vault", "1.0.0")
    for letter in LETTERS:
        edit(vault, letter)
    (vault / "brain/Deleted.md").unlink()
    notes = vault / "notes"
    notes.mkdir()
    for i in range(200):
        (notes / f"n{i}.md").write_text(f"my note {i}\n")
    before_notes = tree(notes)
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "merge", "--yes")
    assert code == 0, out
    assert out["detected_version"] == "1.0.0"
    assert out["detected_matched"] >= 3
    for letter in LETTERS:
        text = (vault / f"brain/{letter}.md").read_text()
        assert text == note(letter, "1.1.0").replace(
            f"middle of {letter}", f"middle of {letter}, edited by me"
        )
        assert "<<<<<<<" not in text
    assert not (vault / "brain/Deleted.md").exists()
    assert (vault / "brain/New.md").read_text() == "new since 1.0.0\n"
    assert (vault / "Home.md").read_text() == "# Home 1.1.0\n"
    assert tree(notes) == before_notes
    summary = out["summary"]
    assert summary["merged"] == 5 and summary["missing"] == 1 and summary["conflicted"] == 0
    code, status = run(cli, vault, "status")
    assert status["counts"]["modified"] == 5 and status["missing"] == ["brain/Deleted.md"]
    code, up = run(cli, vault, "update", "--yes")
    assert code == 0, up
    assert up["to_version"] == "1.2.0"
    for letter in LETTERS:
        text = (vault / f"brain/{letter}.md").read_text()
        assert text == note(letter, "1.2.0").replace(
            f"middle of {letter}", f"middle of {letter}, edited by me"
        )
    assert not (vault / "brain/Deleted.md").exists()
    assert tree(notes) == before_notes


def test_keep_mine_and_use_shard(repo: Path, tmp_path: Path, cli: Cli) -> None:
    mine = clone(repo, tmp_path / "mine", "1.0.0")
    edit(mine, "A")
    code, out = run(cli, mine, "adopt", f"git+{repo}@1.1.0", "--mode", "keep-mine", "--yes")
    assert code == 0, out
    assert "edited by me" in (mine / "brain/A.md").read_text()
    assert (mine / "brain/B.md").read_text() == note("B", "1.0.0")  # kept: differs from 1.1.0
    st = json.loads((mine / ".shardmind/state.json").read_text())
    assert st["files"]["brain/A.md"]["ownership"] == "modified"

    shard = clone(repo, tmp_path / "shard", "1.0.0")
    edit(shard, "A")
    mine_a = (shard / "brain/A.md").read_bytes()
    code, out = run(cli, shard, "adopt", f"git+{repo}@1.1.0", "--mode", "use-shard", "--yes")
    assert code == 0, out
    assert (shard / "brain/A.md").read_text() == note("A", "1.1.0")
    st = json.loads((shard / ".shardmind/state.json").read_text())
    assert st["files"]["brain/A.md"]["ownership"] == "managed"
    backups = list((shard / ".shardmind/backups").glob("adopt-*/brain/A.md"))
    assert backups and backups[0].read_bytes() == mine_a


def test_use_shard_rolls_back_on_failure(repo: Path, tmp_path: Path, cli: Cli) -> None:
    vault = clone(repo, tmp_path / "vault", "1.0.0")
    edit(vault, "A")
    (vault / "brain/E.md").chmod(0o444)
    before = tree(vault)
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "use-shard", "--yes")
    assert code == 1 and out["error"]["code"] == "PATH_READ_ONLY"
    assert tree(vault) == before


def test_refusals_and_dry_run_write_nothing(repo: Path, tmp_path: Path, cli: Cli) -> None:
    vault = clone(repo, tmp_path / "vault", "1.0.0")
    edit(vault, "A")
    before = tree(vault)
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--mode", "merge", "--dry-run", "--yes")
    assert code == 0 and out["dry_run"] is True and out["detected_version"] == "1.0.0", out
    assert tree(vault) == before
    (vault / "shard-values.yaml").write_text("user_name: x\n")
    before = tree(vault)
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--yes")
    assert code == 1 and out["error"]["code"] == "ADOPT_STRAY_VALUES"
    assert tree(vault) == before
    (vault / "shard-values.yaml").unlink()
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--yes")
    assert code == 0
    before = tree(vault)
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--yes")
    assert code == 1 and out["error"]["code"] == "ADOPT_ALREADY_MANAGED"
    assert tree(vault) == before


def test_pristine_clone_adopts_to_install_state(repo: Path, tmp_path: Path, cli: Cli) -> None:
    vault = clone(repo, tmp_path / "vault", "1.1.0")
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--defaults")
    assert code == 0, out
    fresh = tmp_path / "fresh"
    code, out = run(cli, tmp_path, "install", f"git+{repo}@1.1.0", str(fresh), "--defaults")
    assert code == 0, out

    def comparable(path: Path) -> dict[str, Any]:
        st = json.loads((path / ".shardmind/state.json").read_text())
        for key in ("installed_at", "updated_at", "install_date"):
            st.pop(key)
        return st

    assert comparable(vault) == comparable(fresh)


def test_from_version_and_unknown(repo: Path, tmp_path: Path, cli: Cli) -> None:
    vault = clone(repo, tmp_path / "vault", "1.0.0")
    code, out = run(cli, vault, "adopt", f"git+{repo}@1.1.0", "--from-version", "9.9.9", "--yes")
    assert code == 1 and out["error"]["code"] == "ADOPT_VERSION_NOT_FOUND"
    edit(vault, "B")
    code, out = run(
        cli, vault, "adopt", f"git+{repo}@1.2.0", "--mode", "merge", "--from-version", "1.0.0", "--yes"
    )
    assert code == 0 and out["detected_version"] == "1.0.0"
    assert (vault / "brain/B.md").read_text() == note("B", "1.2.0").replace(
        "middle of B", "middle of B, edited by me"
    )
