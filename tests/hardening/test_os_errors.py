"""Item 3: no traceback for any OSError in any writing command. Each of
install, update, adopt and import --apply runs against a read-only vault,
a full disk and a vault file replaced by a folder; each ends in a typed
error (JSON on stdout with --json), never an exception."""

from __future__ import annotations

import errno
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hardening.faults import refuse_writes
from tests.shardkit import Cli, make_shard, run_shardpy

FILES = {"Home.md": "# Home\n", "brain/a.md": "a\n", "brain/b.md": "b\n"}


def shard(root: Path, version: str) -> Path:
    if root.exists():
        shutil.rmtree(root)
    files = {**FILES, "Home.md": f"# Home {version}\n", f"brain/new-{version}.md": "new\n"}
    return make_shard(root, files=files, manifest={"version": version})


def notes(root: Path) -> Path:
    root.mkdir()
    (root / "a.md").write_text("---\ntitle: Alpha\n---\n\n- [x] first\n", encoding="utf-8")
    (root / "b.md").write_text("---\ntitle: Beta\n---\n\n- links_to [[Alpha]]\n", encoding="utf-8")
    return root


Setup = Callable[[Path, Cli], tuple[Path, list[str]]]  # → (vault, argv)


def _install(tmp: Path, cli: Cli) -> tuple[Path, list[str]]:
    src = shard(tmp / "src", "1.0.0")
    vault = tmp / "vault"
    vault.mkdir()
    (vault / "brain").mkdir()
    return vault, ["install", str(src), str(vault), "--defaults"]


def _installed(tmp: Path, cli: Cli) -> Path:
    src = shard(tmp / "src", "1.0.0")
    cli.install_json(src, tmp / "vault", "--defaults")
    return tmp / "vault"


def _update(tmp: Path, cli: Cli) -> tuple[Path, list[str]]:
    vault = _installed(tmp, cli)
    shard(tmp / "src", "2.0.0")
    return vault, ["update", "--yes"]


def _adopt(tmp: Path, cli: Cli) -> tuple[Path, list[str]]:
    src = shard(tmp / "src", "1.0.0")
    vault = tmp / "vault"
    shutil.copytree(src, vault, ignore=shutil.ignore_patterns(".shardmind"))
    (vault / "brain/a.md").write_text("a, edited\n")
    return vault, ["adopt", str(src), "--yes", "--defaults"]


def _import(tmp: Path, cli: Cli) -> tuple[Path, list[str]]:
    vault = _installed(tmp, cli)
    return vault, ["import", "--from", "basic-memory", str(notes(tmp / "bm")), str(vault), "--apply"]


COMMANDS: dict[str, Setup] = {"install": _install, "update": _update, "adopt": _adopt, "import": _import}
FAULTS = {"read-only": (errno.EROFS, "IO_ERROR"), "disk-full": (errno.ENOSPC, "DISK_FULL")}


@pytest.mark.parametrize("fault", sorted(FAULTS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_refused_write_is_a_typed_error(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch, command: str, fault: str
) -> None:
    vault, argv = COMMANDS[command](tmp_path, cli)
    err, code = FAULTS[fault]
    refuse_writes(monkeypatch, vault, err)
    for as_json in (False, True):
        res = cli.run(*argv, *(["--json"] if as_json else []), cwd=vault)  # raises on a traceback
        assert res.exit_code == 1, res.output
        assert res.error_code() == code, res.output
        if as_json:
            assert res.json()["error"]["code"] == code
        else:
            assert "Traceback" not in res.output


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_vault_file_replaced_by_a_folder(tmp_path: Path, cli: Cli, command: str) -> None:
    vault, argv = COMMANDS[command](tmp_path, cli)
    target = vault / ("brain/a.md" if command in ("adopt", "update") else "Home.md")
    if command == "import":
        target = vault / ".shardmind/imports"
        shutil.rmtree(target, ignore_errors=True)
    elif target.exists():
        target.unlink()
    target.mkdir(parents=True, exist_ok=True)
    (target / "inside.md").write_text("x\n")
    res = cli.run(*argv, "--json", cwd=vault)  # raises on a traceback
    if res.exit_code != 0:
        assert res.json()["error"]["code"], res.output
    assert (target / "inside.md").read_text() == "x\n"


def test_plain_import_into_a_vault_whose_records_folder_is_a_file(tmp_path: Path, cli: Cli) -> None:
    """The plain (Typer-less) import path in a real process: an ENOTDIR from
    the records folder is IO_ERROR naming it, not a traceback."""
    vault = _installed(tmp_path, cli)
    (vault / ".shardmind/imports").write_text("not a folder\n")
    src = notes(tmp_path / "bm")
    done = run_shardpy("import", "--from", "basic-memory", src, vault, "--apply", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "error [" in done.stderr
    done = run_shardpy("import", "--from", "basic-memory", src, vault, "--apply", "--json", cwd=tmp_path)
    assert done.returncode == 1
    assert '"code"' in done.stdout and "Traceback" not in done.stderr
