"""Bad input: each case fails with its typed error code, and nothing is left
behind — the whole temporary tree (source, destination, anything outside
it) hashes the same before and after, and a destination that did not
exist is not created."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.shardkit import (
    Cli,
    Symlink,
    child_env,
    describe,
    make_shard,
    read_json,
    run_shardpy,
    shardpy_argv,
    tree_snapshot,
    values_yaml,
    write_tree,
)

SCHEMA: dict[str, Any] = {
    "values": {
        "user_name": {"type": "string", "default": "", "message": "Name"},
        "size": {"type": "number", "default": 3, "min": 1, "max": 10},
        "purpose": {"type": "select", "default": "a", "options": [{"value": "a"}, {"value": "b"}]},
    },
    "modules": {
        "core": {"label": "Core", "paths": ["core/"], "removable": False},
        "extra": {"label": "Extra", "paths": ["extra/"], "removable": True},
    },
}
FILES = {"Home.md.njk": "# {{ user_name }}\n", "core/a.md": "a\n", "extra/b.md": "b\n", "notes/n.md": "n\n"}


@dataclass
class Case:
    """A bad input: ``build`` writes what it needs under the temp dir and
    returns the install arguments (source, dest and flags)."""

    code: str
    build: Callable[[Path], list[str]]
    path: str | None = None
    line: int | None = None
    message: list[str] = field(default_factory=list)  # each in message or hint
    hinted: bool = True  # False only where the placeholder sources package answers


def good_shard(tmp: Path, **overrides: Any) -> Path:
    kwargs: dict[str, Any] = {"files": FILES, "schema": SCHEMA}
    kwargs.update(overrides)
    return make_shard(tmp / "shard", **kwargs)


def _values_file(tmp: Path, values: dict[str, Any] | str) -> str:
    path = tmp / "answers.yaml"
    path.write_text(values if isinstance(values, str) else values_yaml(values))
    return str(path)


def _std(tmp: Path, *flags: str, shard: Path | None = None) -> list[str]:
    return [str(shard or good_shard(tmp)), str(tmp / "vault"), *flags]


CASES: dict[str, Case] = {
    "missing-manifest-subdir": Case(
        "SHARD_MANIFEST_MISSING",
        lambda t: [
            f"{write_tree(t / 'src', {'empty/README.md': 'x'})}//empty",
            str(t / "vault"),
            "--defaults",
        ],
    ),
    "missing-manifest-root": Case(
        "SHARD_MANIFEST_MISSING",
        lambda t: [str(write_tree(t / "src", {"README.md": "x"})), str(t / "vault"), "--defaults"],
        hinted=False,  # answered by shardpy.sources.layout (another branch)
    ),
    "manifest-invalid-yaml": Case(
        "SHARD_MANIFEST_INVALID",
        lambda t: _std(
            t, "--defaults", shard=good_shard(t, manifest="apiVersion: v1\nname: x\nversion: [1.0\n")
        ),
        path=".shardmind/shard.yaml",
        line=4,
    ),
    "schema-invalid-yaml": Case(
        "SHARD_SCHEMA_INVALID",
        lambda t: _std(
            t,
            "--defaults",
            shard=good_shard(t, schema="schema_version: 1\nvalues:\n  a:\n    type: string\n   default: x\n"),
        ),
        path=".shardmind/shard-schema.yaml",
        line=5,
    ),
    "value-without-default": Case(
        "SHARD_SCHEMA_DEFAULT_MISSING",
        lambda t: _std(
            t,
            "--defaults",
            shard=good_shard(
                t,
                schema="schema_version: 1\nvalues:\n  ok: {type: string, default: ''}\n"
                "  name:\n    type: string\n",
            ),
        ),
        path=".shardmind/shard-schema.yaml",
        line=4,
        message=["values.name"],
    ),
    "bad-option-default": Case(
        "SHARD_SCHEMA_INVALID",
        lambda t: _std(
            t,
            "--defaults",
            shard=good_shard(
                t,
                schema="schema_version: 1\nvalues:\n  mode:\n    type: select\n"
                "    options: [{value: a}, {value: b}]\n    default: c\n",
            ),
        ),
        path=".shardmind/shard-schema.yaml",
        line=3,
        message=["values.mode", "'c'"],
    ),
    "reserved-name": Case(
        "SHARD_SCHEMA_RESERVED_NAME",
        lambda t: _std(
            t,
            "--defaults",
            shard=good_shard(t, schema="schema_version: 1\nvalues:\n  year: {type: number, default: 1}\n"),
        ),
        line=3,
        message=["year"],
    ),
    "symlink-in-source": Case(
        "SHARD_SYMLINK",
        lambda t: _std(
            t, "--defaults", shard=good_shard(t, files={**FILES, "notes/link.md": Symlink("/etc/passwd")})
        ),
        path="notes/link.md",
    ),
    "symlinked-dir-in-source": Case(
        "SHARD_SYMLINK",
        lambda t: _std(t, "--defaults", shard=good_shard(t, files={**FILES, "outside": Symlink(str(t))})),
        path="outside",
    ),
    "symlink-with-a-tier1-name": Case(
        "SHARD_SYMLINK",
        lambda t: _std(t, "--defaults", shard=good_shard(t, files={**FILES, ".github": Symlink(str(t))})),
        path=".github",
    ),
    "symlink-in-an-ignored-folder": Case(
        "SHARD_SYMLINK",
        lambda t: _std(
            t,
            "--defaults",
            shard=good_shard(t, files={**FILES, "drafts/x": Symlink("/etc/passwd")}, ignore="drafts/x\n"),
        ),
        path="drafts/x",
    ),
    "fifo-in-source": Case(
        "SHARD_SPECIAL_FILE",
        lambda t: _std(t, "--defaults", shard=_with_fifo(good_shard(t), "notes/pipe")),
        path="notes/pipe",
    ),
    "unknown-values-key": Case(
        "VALUES_UNKNOWN_KEY",
        lambda t: _std(t, "--defaults", "--values", _values_file(t, {"user_name": "a", "colour": "red"})),
        message=["colour"],
    ),
    "invalid-value-type": Case(
        "VALUES_INVALID",
        lambda t: _std(t, "--defaults", "--values", _values_file(t, {"size": "three"})),
        message=["size"],
    ),
    "value-out-of-range": Case(
        "VALUES_INVALID",
        lambda t: _std(t, "--defaults", "--values", _values_file(t, {"size": 11})),
        message=["size", "maximum"],
    ),
    "value-not-an-option": Case(
        "VALUES_INVALID",
        lambda t: _std(t, "--defaults", "--values", _values_file(t, {"purpose": "z"})),
        message=["purpose"],
    ),
    "values-file-missing": Case(
        "VALUES_FILE_MISSING", lambda t: _std(t, "--defaults", "--values", str(t / "nope.yaml"))
    ),
    "values-file-invalid-yaml": Case(
        "VALUES_FILE_INVALID",
        lambda t: _std(t, "--defaults", "--values", _values_file(t, "user_name: [a\n")),
    ),
    "render-error": Case(
        "RENDER_TEMPLATE_ERROR",
        lambda t: _std(
            t,
            "--defaults",
            shard=good_shard(t, files={**FILES, "notes/bad.md.njk": "ok\nok\n{{ user_name( }}\n"}),
        ),
        path="notes/bad.md.njk",
        line=3,
    ),
    "render-runtime-error": Case(
        "RENDER_TEMPLATE_ERROR",
        lambda t: _std(
            t, "--defaults", shard=good_shard(t, files={**FILES, "notes/bad.md.njk": "a\n{{ size / 0 }}\n"})
        ),
        path="notes/bad.md.njk",
        line=2,
    ),
    "template-not-utf8": Case(
        "RENDER_NOT_TEXT",
        lambda t: _std(
            t, "--defaults", shard=good_shard(t, files={**FILES, "img.png.njk": b"\x89PNG\xff\xfe"})
        ),
        path="img.png.njk",
    ),
    "two-sources-one-output": Case(
        "SHARD_OUTPUT_CLASH",
        lambda t: _std(t, "--defaults", shard=good_shard(t, files={**FILES, "Home.md": "static\n"})),
        path="Home.md",
    ),
    "engine-range-unmet": Case(
        "SHARD_ENGINE_UNSUPPORTED",
        lambda t: _std(
            t, "--defaults", shard=good_shard(t, manifest={"requires": {"shardmind": ">=99.0.0"}})
        ),
        message=["shardmind", ">=99.0.0"],
    ),
    "shardpy-range-unmet": Case(
        "SHARD_ENGINE_UNSUPPORTED",
        lambda t: _std(t, "--defaults", shard=good_shard(t, manifest={"requires": {"shardpy": "<0.0.1"}})),
    ),
    "requires-not-a-range": Case(
        "SHARD_MANIFEST_INVALID",
        lambda t: _std(t, "--defaults", shard=good_shard(t, manifest={"requires": {"node": "banana"}})),
        message=["requires"],
    ),
    "hook-outside-shard": Case(
        "SHARD_MANIFEST_INVALID",
        lambda t: _std(t, "--defaults", shard=good_shard(t, manifest={"hooks": {"personalize": "../x.py"}})),
        message=["hooks.personalize"],
    ),
    "exclude-unknown-module": Case(
        "MODULE_UNKNOWN", lambda t: _std(t, "--defaults", "--exclude-module", "nope"), message=["nope"]
    ),
    "exclude-non-removable-module": Case(
        "MODULE_NOT_REMOVABLE", lambda t: _std(t, "--defaults", "--exclude-module", "core"), message=["core"]
    ),
    "no-tty-no-defaults": Case("VALUES_MISSING", lambda t: _std(t)),
    "no-tty-partial-values-file": Case(
        "VALUES_MISSING",
        lambda t: _std(t, "--values", _values_file(t, {"user_name": "Ada"})),
        message=["size", "purpose"],
    ),
    "dest-is-a-file": Case(
        "INSTALL_DEST_NOT_DIRECTORY",
        lambda t: [str(good_shard(t)), str(write_tree(t, {"vault": "a file"}) / "vault"), "--defaults"],
    ),
    "already-installed": Case(
        "VAULT_ALREADY_INSTALLED",
        lambda t: [
            str(good_shard(t)),
            str(write_tree(t, {"vault/.shardmind/state.json": "{}", "vault/Home.md": "mine"}) / "vault"),
            "--defaults",
        ],
        message=["update"],
    ),
}


def _without_schema(shard: Path) -> Path:
    (shard / ".shardmind/shard-schema.yaml").unlink()
    return shard


def _with_fifo(shard: Path, rel: str) -> Path:
    os.mkfifo(shard / rel)
    return shard


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("dest_exists", [False, True], ids=["new-dest", "dest-with-user-files"])
def test_bad_input_is_typed_and_leaves_nothing(
    tmp_path: Path, cli: Cli, name: str, dest_exists: bool
) -> None:
    case = CASES[name]
    args = case.build(tmp_path)
    dest = Path(args[1])
    if dest_exists and not dest.exists():
        write_tree(dest, {"my-note.md": "mine\n", "notes/n.md": "my own n\n"})
    before = tree_snapshot(tmp_path)

    res = cli.run("install", *args, "--json", cwd=tmp_path)

    assert res.exit_code == 1, res.output
    err = res.json()["error"]
    assert err["code"] == case.code, err
    assert err["message"], err
    assert err["hint"] or not case.hinted, err
    if case.path is not None:
        assert err.get("path") == case.path, err
    if case.line is not None:
        assert err.get("line") == case.line, err
    for needle in case.message:
        assert needle in err["message"] + err["hint"], err
    assert tree_snapshot(tmp_path) == before


def test_human_error_output_names_code_file_and_line(tmp_path: Path, cli: Cli) -> None:
    args = CASES["render-error"].build(tmp_path)
    res = cli.run("install", *args, cwd=tmp_path)
    assert res.exit_code == 1
    assert "error [RENDER_TEMPLATE_ERROR]: notes/bad.md.njk:3:" in res.stderr
    assert "hint:" in res.stderr
    assert res.stdout == ""


def test_collision_without_consent_then_backup(tmp_path: Path, cli: Cli) -> None:
    shard = good_shard(tmp_path)
    vault = write_tree(tmp_path / "vault", {"core/a.md": "my own a\n", "notes/n.md": "n\n", "mine.md": "x\n"})
    before = tree_snapshot(tmp_path)
    for flags in (["--defaults"], ["--yes"], ["--defaults", "--yes"]):
        res = cli.run("install", shard, vault, *flags, "--json", cwd=tmp_path)
        assert res.exit_code == 1, res.output
        err = res.json()["error"]
        assert err["code"] == "INSTALL_COLLISION"
        assert err["details"]["paths"] == ["core/a.md"], "identical bytes are not a collision"
        assert "--backup" in err["hint"]
        assert tree_snapshot(tmp_path) == before

    data = cli.install_json(shard, vault, "--defaults", "--backup", cwd=tmp_path)
    backup = data["backups"]["core/a.md"]
    assert backup.startswith("core/a.md.shardpy-backup-")
    assert (vault / backup).read_text() == "my own a\n"
    assert (vault / "core/a.md").read_text() == "a\n"
    assert (vault / "mine.md").read_text() == "x\n"
    state = read_json(vault / ".shardmind/state.json")
    assert backup not in state["files"], "a backup is the user's file, not shard output"
    assert {f["path"]: f["action"] for f in data["files"]}["notes/n.md"] == "identical"


def test_collision_with_a_folder_is_refused(tmp_path: Path, cli: Cli) -> None:
    shard = good_shard(tmp_path)
    vault = write_tree(tmp_path / "vault", {"Home.md/inside.md": "a folder where a file goes\n"})
    before = tree_snapshot(tmp_path)
    res = cli.run("install", shard, vault, "--defaults", "--backup", "--json", cwd=tmp_path)
    assert res.error_code() == "INSTALL_COLLISION"
    assert tree_snapshot(tmp_path) == before


@pytest.mark.parametrize(
    ("link", "target_kind"),
    [
        ("notes", "dir"),  # a parent folder of produced files is a link
        ("Home.md", "file"),  # a produced file is a link
        ("shard-values.yaml", "file"),
        (".shardmind", "dir"),
        (".shardmind/templates", "dir"),
    ],
)
def test_symlink_inside_dest_is_never_written_through(
    tmp_path: Path, cli: Cli, link: str, target_kind: str
) -> None:
    shard = good_shard(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("outside\n")
    target = outside if target_kind == "dir" else outside / "keep.txt"
    vault = tmp_path / "vault"
    write_tree(vault, {"mine.md": "x\n", link: Symlink(str(target))})
    before = tree_snapshot(tmp_path)

    res = cli.run("install", shard, vault, "--defaults", "--backup", "--json", cwd=tmp_path)

    assert res.exit_code == 1, res.output
    assert res.error_code() == "PATH_SYMLINK"
    assert tree_snapshot(tmp_path) == before


def test_no_tty_never_hangs_in_a_real_process(tmp_path: Path) -> None:
    shard = good_shard(tmp_path)
    # stdin is an open pipe that never sends anything: a prompt would hang.
    proc = subprocess.Popen(
        shardpy_argv("install", shard, tmp_path / "vault"),
        cwd=tmp_path,
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 1, out + err
    assert "VALUES_MISSING" in err
    assert not (tmp_path / "vault").exists()


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    proc = run_shardpy("install", "--no-such-flag", cwd=tmp_path)
    assert proc.returncode == 2, describe(proc)


def test_a_shard_without_a_schema_installs(tmp_path: Path, cli: Cli) -> None:
    """No values and no modules: the schema file may be left out."""
    # Its templates print no value: with no schema there is none (printing one fails the render).
    files = {**FILES, "Home.md.njk": "# {{ shard.name }}\n"}
    shard = _without_schema(good_shard(tmp_path, files=files))
    data = cli.install_json(shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    assert data["values"] == {} and data["modules"] == {}
    assert (tmp_path / "vault/.shardmind/shard-schema.yaml").read_text() == "schema_version: 1\n"


def test_a_file_where_the_shard_needs_a_folder(tmp_path: Path, cli: Cli) -> None:
    shard = good_shard(tmp_path)
    vault = write_tree(tmp_path / "vault", {"core": "a file named like the shard's folder\n"})
    before = tree_snapshot(tmp_path)
    res = cli.run("install", shard, vault, "--defaults", "--json", cwd=tmp_path)
    assert res.error_code() == "INSTALL_COLLISION"
    assert res.json()["error"]["details"]["paths"] == ["core"]
    assert tree_snapshot(tmp_path) == before

    data = cli.install_json(shard, vault, "--defaults", "--backup", cwd=tmp_path)
    assert (vault / data["backups"]["core"]).read_text() == "a file named like the shard's folder\n"
    assert (vault / "core/a.md").read_text() == "a\n"


def test_backup_never_overwrites_an_earlier_backup(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shardpy.flows.install

    monkeypatch.setattr(shardpy.flows.install, "now_iso", lambda: "2024-01-02T03:04:05Z")
    shard = good_shard(tmp_path)
    earlier = "core/a.md.shardpy-backup-20240102T030405Z"
    vault = write_tree(tmp_path / "vault", {"core/a.md": "mine\n", earlier: "an older backup\n"})
    data = cli.install_json(shard, vault, "--defaults", "--backup", cwd=tmp_path)
    assert data["backups"]["core/a.md"] == earlier + "-2"
    assert (vault / earlier).read_text() == "an older backup\n"
    assert (vault / (earlier + "-2")).read_text() == "mine\n"
