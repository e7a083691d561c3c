"""`shardpy status`: read-only health, exit 0 always (CONTRACT §7)."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from tests.shardkit import (
    Cli,
    describe,
    interrupt_during_apply,
    make_shard,
    run_shardpy,
    tree_snapshot,
    write_tree,
)

SCHEMA: dict[str, Any] = {
    "values": {
        "user_name": {"type": "string", "default": "Ada"},
        "size": {"type": "number", "default": 3, "min": 1, "max": 10},
    },
    "modules": {
        "notes": {"label": "Notes", "paths": ["notes/"], "removable": False},
        "extra": {"label": "Extra", "paths": ["extra/"], "removable": True},
    },
    "frontmatter": {
        "global": ["date"],
        "person": {"required": ["date", "title"], "path_match": "people/*.md"},
        "project": {"required": ["status"], "path_match": "work/**.md"},
    },
}
FILES = {
    "Home.md.njk": "---\ndate: '{{ install_date }}'\n---\n# Home of {{ user_name }}\nline 2\nline 3\n",
    "notes/a.md": "---\ndate: 2024-01-01\n---\na\n",
    "notes/b.md": "---\ndate: 2024-01-01\n---\nb\n",
    "extra/x.md": "---\ndate: 2024-01-01\n---\nx\n",
    "Inbox.md.njk": "{# shardmind: volatile #}\n---\ndate: x\n---\n# Inbox\n",
    "vault-manifest.json": json.dumps({"user_content_roots": ["notes/"], "infrastructure": ["Home.md"]}),
}


@pytest.fixture
def vault(tmp_path: Path, cli: Cli) -> Path:
    shard = make_shard(tmp_path / "shard", files=FILES, schema=SCHEMA, manifest={"future_key": 1})
    dest = tmp_path / "vault"
    cli.install_json(shard, dest, "--defaults", "--exclude-module", "extra", cwd=tmp_path)
    return dest


def _status(cli: Cli, cwd: Path, *flags: str) -> dict[str, Any]:
    res = cli.run("status", "--json", *flags, cwd=cwd)
    assert res.exit_code == 0, res.output
    data = res.json()
    assert isinstance(data, dict)
    return data


def test_outside_a_vault(tmp_path: Path, cli: Cli) -> None:
    res = cli.run("status", cwd=tmp_path)
    assert res.exit_code == 0
    assert "Not inside a shardpy vault" in res.stdout and "shardpy install" in res.stdout
    assert _status(cli, tmp_path) == {"vault": None, "message": "not inside a shardpy vault"}
    bare = cli.run(cwd=tmp_path)  # `shardpy` with no command is status
    assert bare.exit_code == 0 and "Not inside a shardpy vault" in bare.stdout


def test_healthy_vault(vault: Path, cli: Cli) -> None:
    before = tree_snapshot(vault)
    data = _status(cli, vault)
    assert data["shard"] == "tests/fixture" and data["version"] == "1.0.0"
    assert data["counts"] == {"managed": 4, "modified": 0, "volatile": 1, "missing": 0}
    assert data["by_class"]["user_content"]["managed"] == 2
    assert data["values_valid"] is True and data["value_problems"] == []
    assert data["modules"] == {"extra": "excluded", "notes": "included"}
    assert "user_files" not in data
    assert tree_snapshot(vault) == before, "status is read-only"
    res = cli.run("status", cwd=vault / "notes")  # from a sub-folder
    assert res.exit_code == 0
    assert "tests/fixture 1.0.0" in res.stdout
    assert "files: 4 managed, 0 modified, 1 volatile, 0 missing" in res.stdout
    assert "values: valid" in res.stdout
    assert "modules: notes (excluded: extra)" in res.stdout


def test_drift_is_counted_and_detailed(vault: Path, cli: Cli) -> None:
    home = vault / "Home.md"
    home.write_text(home.read_text().replace("line 2\n", "line two\nnew a\nnew b\n"))
    (vault / "notes/b.md").unlink()
    (vault / "Inbox.md").write_text("mine now\n")
    write_tree(
        vault,
        {
            "people/Sam.md": "---\ndate: 2024-01-01\n---\nno title\n",
            "people/Kim.md": "no frontmatter\n",
            "work/p/deep.md": "---\ndate: 2024-01-01\nstatus: open\n---\n",
            "work/p/bad.md": "---\ndate: 2024-01-01\n---\n",
            "loose.txt": "x\n",
            ".obsidian/app.json": "{}",
        },
    )
    data = _status(cli, vault, "--verbose")
    assert data["counts"] == {"managed": 2, "modified": 1, "volatile": 1, "missing": 1}
    assert data["missing"] == ["notes/b.md"]
    assert data["modified"] == [{"path": "Home.md", "class": "infrastructure", "added": 3, "removed": 1}]
    assert data["user_files"] == 5, "files the shard did not produce (.obsidian/ is not counted)"
    violations = data["frontmatter_violations"]
    assert violations["person"] == [
        {"path": "people/Kim.md", "missing": ["date", "title"]},
        {"path": "people/Sam.md", "missing": ["title"]},
    ] or sorted(violations["person"], key=lambda v: v["path"]) == [
        {"path": "people/Kim.md", "missing": ["date", "title"]},
        {"path": "people/Sam.md", "missing": ["title"]},
    ]
    assert violations["project"] == [{"path": "work/p/bad.md", "missing": ["status"]}]
    assert set(data["environment"]) == {"python", "git", "node"}

    res = cli.run("status", "--verbose", cwd=vault)
    assert res.exit_code == 0
    assert "modified Home.md +3 −1" in res.stdout
    assert "user files: 5" in res.stdout
    assert "frontmatter (person): 2 note(s) missing required keys" in res.stdout
    assert "environment: python" in res.stdout
    assert "missing notes/b.md" in res.stdout


def test_unknown_manifest_keys_are_a_verbose_warning(vault: Path, cli: Cli) -> None:
    data = _status(cli, vault, "--verbose")
    assert any("future_key" in w for w in data["warnings"]), data["warnings"]
    assert not any("future_key" in w for w in _status(cli, vault)["warnings"])


@pytest.mark.parametrize(
    "text",
    ["{not json", '{"shard": "a/b"}', "[1, 2]", '{"shard": "a/b", "version": "1", "source": "x", '
     '"install_date": "d", "modules": {}, "files": {"a.md": {"bogus": 1}}}'],
)  # fmt: skip
def test_corrupt_state_is_reported_with_exit_0(vault: Path, cli: Cli, text: str) -> None:
    (vault / ".shardmind/state.json").write_text(text)
    data = _status(cli, vault)
    assert data["error"]["code"] == "STATE_CORRUPT", data
    res = cli.run("status", cwd=vault)
    assert res.exit_code == 0
    assert "STATE_CORRUPT" in res.stdout and "hint:" in res.stdout


def test_invalid_values_are_reported(vault: Path, cli: Cli) -> None:
    (vault / "shard-values.yaml").write_text("user_name: 3\nsize: 99\ncolour: red\n")
    data = _status(cli, vault)
    assert data["values_valid"] is False
    problems = " | ".join(data["value_problems"])
    assert "colour" in problems and "user_name" in problems and "size" in problems
    res = cli.run("status", cwd=vault)
    assert "values: invalid" in res.stdout

    (vault / "shard-values.yaml").write_text("user_name: [unclosed\n")
    assert _status(cli, vault)["values_valid"] is False
    (vault / "shard-values.yaml").unlink()
    assert _status(cli, vault)["values_valid"] is False


def test_pending_journal_is_recovered_and_reported(tmp_path: Path) -> None:
    shard = make_shard(
        tmp_path / "shard", files={f"n/{i}.md": f"{i}\n" for i in range(60)}, schema={"values": {}}
    )
    vault = tmp_path / "vault"
    killed = interrupt_during_apply(
        "install", shard, vault, "--defaults", cwd=tmp_path, vault=vault, sig=signal.SIGKILL, after=0.05
    )
    assert killed.journal_seen and killed.returncode == -signal.SIGKILL
    proc = run_shardpy("status", "--json", cwd=vault)
    assert proc.returncode == 0, describe(proc)
    data = json.loads(proc.stdout)
    assert data["recovered"]["action"] == "rolled-back" and data["recovered"]["label"] == "install"
    assert not (vault / ".shardmind/journal.json").exists()
    assert not (vault / "n").exists(), "the interrupted install's files were removed"
    again = run_shardpy("status", cwd=vault)
    assert again.returncode == 0 and "Not inside a shardpy vault" in again.stdout


def test_status_in_a_real_process(vault: Path, cli: Cli) -> None:
    proc = run_shardpy("status", cwd=vault)
    assert proc.returncode == 0, describe(proc)
    assert "4 managed" in proc.stdout
    assert "\x1b[" not in proc.stdout, "no colour when not a terminal"
    # the process answers plain status without Typer; both paths must agree
    for flags in ([], ["--json"], ["-v", "--json"]):
        fast = run_shardpy("status", *flags, cwd=vault)
        typer_path = cli.run("status", *flags, cwd=vault)
        assert fast.returncode == typer_path.exit_code == 0
        if "--json" in flags:
            a, b = json.loads(fast.stdout), typer_path.json()
            for report in (a, b):
                report.pop("environment", None)  # tool versions are probed live
            assert a == b
        else:
            assert fast.stdout == typer_path.stdout
    bare = run_shardpy(cwd=vault)
    assert bare.returncode == 0 and bare.stdout == proc.stdout
    helped = run_shardpy("status", "--help", cwd=vault)
    assert helped.returncode == 0 and "--verbose" in helped.stdout


def test_edited_values_are_checked_against_the_schema(vault: Path, cli: Cli) -> None:
    # plain status trusts values equal to those the engine validated; an edit is checked
    (vault / "shard-values.yaml").write_text("user_name: Bo\nsize: 4\n")
    assert _status(cli, vault)["values_valid"] is True
    (vault / "shard-values.yaml").write_text("user_name: Bo\nsize: 40\n")
    data = json.loads(run_shardpy("status", "--json", cwd=vault).stdout)
    assert data["values_valid"] is False and "size" in data["value_problems"][0]


def test_verbose_lists_violations_in_path_order_with_a_count_of_the_rest(vault: Path, cli: Cli) -> None:
    names = [f"p{i:02}" for i in range(25)]
    write_tree(vault, {f"people/{n}.md": "---\ndate: 2024-01-01\n---\n" for n in reversed(names)})
    data = _status(cli, vault, "--verbose")
    assert [v["path"] for v in data["frontmatter_violations"]["person"]] == [f"people/{n}.md" for n in names]
    first = cli.run("status", "--verbose", cwd=vault).stdout
    assert cli.run("status", "--verbose", cwd=vault).stdout == first  # the same every run
    lines = first.splitlines()
    at = lines.index("frontmatter (person): 25 note(s) missing required keys")
    assert lines[at + 1 : at + 12] == [f"    people/{n}.md: title" for n in names[:10]] + [
        "    … and 15 more (`shardpy status --verbose --json` lists all)"
    ]


def test_tool_versions_are_read_beside_the_work(tmp_path: Path) -> None:
    import os
    import sys
    import time

    from shardpy.flows.status import _tool_versions

    argvs = {
        "py": [sys.executable, "-c", "print(' v1.2 ')"],
        "none": [str(tmp_path / "no-such-tool"), "--version"],
        "silent": [sys.executable, "-c", "pass"],
    }
    with _tool_versions(argvs) as tools:
        assert tools() == {"py": "v1.2", "none": "not found", "silent": "unknown"}
    pid_file = tmp_path / "pid"
    hang = [
        sys.executable,
        "-c",
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)",
    ]
    with _tool_versions({"hang": hang}):
        while not pid_file.exists() or not pid_file.read_text():
            time.sleep(0.01)
    # Never read (the work failed, say): the tool does not outlive the command.
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)
