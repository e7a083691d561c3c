"""Lifecycle hooks at install (CONTRACT §8): context, environment, node,
failures and timeouts as warnings, capture limits, process-group kill,
--no-hooks, consent for remote sources, re-hash after a hook."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import shardpy.hooks.runner
from tests.shardkit import Cli, make_shard, read_json, run_shardpy, values_yaml

SCHEMA = {
    "values": {"user_name": {"type": "string", "default": ""}},
    "modules": {"extra": {"label": "Extra", "paths": ["extra/"], "removable": True}},
}
FILES = {"Home.md.njk": "# {{ user_name }}\n", "extra/x.md": "x\n"}

DUMP_CONTEXT = """\
import json, os, sys, pathlib
ctx_file = json.load(open(os.environ["SHARDPY_HOOK_CONTEXT"]))
from_stdin = json.loads(sys.stdin.read())
env = {k: v for k, v in os.environ.items() if k.startswith(("SHARDPY_HOOK", "SHARDMIND_HOOK"))}
for name in ("SHARDPY_HOOK_CONTEXT", "SHARDMIND_HOOK_CONTEXT", "SHARDPY_HOOK_CONTEXT_JS"):
    env.pop(name, None)
out = {"ctx": ctx_file, "stdin_equal": ctx_file == from_stdin, "env": env, "cwd": os.getcwd()}
pathlib.Path(f"hook-{ctx_file['slot']}.json").write_text(json.dumps(out))
"""


def _shard(tmp_path: Path, hooks: dict[str, Any], manifest: dict[str, Any] | None = None) -> Path:
    return make_shard(tmp_path / "shard", files=FILES, schema=SCHEMA, hooks=hooks, manifest=manifest)


def _answers(tmp_path: Path, **values: Any) -> str:
    path = tmp_path / "answers.yaml"
    path.write_text(values_yaml(values))
    return str(path)


def test_hook_context_env_and_order(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(
        tmp_path,
        {
            "bootstrap": ("bootstrap.py", DUMP_CONTEXT, "idx-v2"),
            "personalize": DUMP_CONTEXT,
            "post-install": DUMP_CONTEXT,
        },
    )
    vault = tmp_path / "vault"
    data = cli.install_json(
        shard,
        vault,
        "--values",
        _answers(tmp_path, user_name="Ada"),
        "--exclude-module",
        "extra",
        cwd=tmp_path,
    )
    assert [h["slot"] for h in data["hooks"]] == ["bootstrap", "personalize", "post-install"]
    assert all(h["status"] == "ok" for h in data["hooks"]), data["hooks"]
    for slot in ("bootstrap", "personalize", "post-install"):
        got = read_json(vault / f"hook-{slot}.json")
        ctx = got["ctx"]
        assert {"vault_root", "values", "modules", "shard", "slot"} <= set(ctx), ctx
        assert ctx["slot"] == slot
        assert ctx["vault_root"] == str(vault)
        assert ctx["values"] == {"user_name": "Ada"}
        assert ctx["modules"] == {"extra": "excluded"}
        assert ctx["shard"]["name"] == "fixture" and ctx["shard"]["version"] == "1.0.0"
        assert got["stdin_equal"], "the context also arrives on stdin"
        assert Path(got["cwd"]) == vault
        assert got["env"] == {
            "SHARDPY_HOOK": "1",
            "SHARDPY_HOOK_PHASE": slot,
            "SHARDMIND_HOOK": "1",
            "SHARDMIND_HOOK_PHASE": slot,
        }
    assert read_json(vault / "hook-bootstrap.json")["ctx"]["fingerprint"] == "idx-v2"
    assert read_json(vault / "hook-post-install.json")["ctx"]["values_are_defaults"] is False
    state = read_json(vault / ".shardmind/state.json")
    assert state["hooks"] == {"bootstrap_fingerprint": "idx-v2"}
    for slot in ("bootstrap", "personalize", "post-install"):
        assert f"hook-{slot}.json" not in state["files"], "files a hook creates are the user's"


def test_failure_is_a_warning_with_its_stderr(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(
        tmp_path,
        {"post-install": "import sys\nprint('partial work')\nsys.stderr.write('it broke\\n')\nsys.exit(3)\n"},
    )
    vault = tmp_path / "vault"
    res = cli.run("install", shard, vault, "--defaults", cwd=tmp_path)
    assert res.exit_code == 0, res.output
    assert "failed" in res.stdout and "exited with code 3" in res.stdout
    assert "it broke" in res.stdout, "a failing hook's stderr is shown in the summary"
    assert (vault / ".shardmind/state.json").is_file(), "a hook failure never rolls back"

    other = tmp_path / "vault2"
    data = cli.install_json(shard, other, "--defaults", cwd=tmp_path)
    [hook] = data["hooks"]
    assert (hook["status"], hook["exit_code"]) == ("failed", 3)
    assert hook["stdout"] == "partial work\n" and hook["stderr"] == "it broke\n"


GRANDCHILD = """\
import os, signal, subprocess, sys, time, pathlib
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(120)"])
pathlib.Path("pids.txt").write_text(f"{os.getpid()} {child.pid}")
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie has exited; it only waits for its parent to reap it
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_timeout_kills_the_whole_process_group(
    tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shardpy.hooks.runner, "GRACE_SECONDS", 0.3)
    shard = _shard(tmp_path, {"post-install": GRANDCHILD}, manifest={"hooks": {"timeout_ms": 1000}})
    vault = tmp_path / "vault"
    started = time.monotonic()
    data = cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    assert time.monotonic() - started < 30
    [hook] = data["hooks"]
    assert hook["status"] == "timeout" and "1000 ms" in hook["message"]
    pids = [int(p) for p in (vault / "pids.txt").read_text().split()]
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(p) for p in pids), "the hook and its child must both be killed"


def test_output_is_capped_per_stream(tmp_path: Path, cli: Cli) -> None:
    hook = "import sys\nsys.stdout.write('o' * (1024 * 1024))\nsys.stderr.write('e' * (300 * 1024))\n"
    shard = _shard(tmp_path, {"post-install": hook})
    data = cli.install_json(shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    [result] = data["hooks"]
    assert result["status"] == "ok"
    assert len(result["stdout"]) == 256 * 1024 and len(result["stderr"]) == 256 * 1024
    assert result["truncated"] is True


MJS_HOOK = """\
import { writeFileSync } from 'node:fs';
export default async function (ctx) {
  const phase = process.env.SHARDMIND_HOOK_PHASE;
  writeFileSync('mjs-ctx.json', JSON.stringify({ ctx, phase, cwd: process.cwd() }));
}
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_mjs_hook_runs_under_node_with_camel_case_context(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(tmp_path, {"personalize": ("personalize.mjs", MJS_HOOK)})
    vault = tmp_path / "vault"
    data = cli.install_json(shard, vault, "--values", _answers(tmp_path, user_name="Ada"), cwd=tmp_path)
    assert [h["status"] for h in data["hooks"]] == ["ok"], data["hooks"]
    got = read_json(vault / "mjs-ctx.json")
    ctx = got["ctx"]
    assert ctx["vaultRoot"] == str(vault)
    assert ctx["valuesAreDefaults"] is False
    assert ctx["values"] == {"user_name": "Ada"}, "only the top-level keys are camelCased"
    assert ctx["shard"]["name"] == "fixture" and ctx["slot"] == "personalize"
    assert got["phase"] == "personalize" and Path(got["cwd"]) == vault


def _node_major_minor() -> tuple[int, int] | None:
    import subprocess

    node = shutil.which("node")
    if node is None:
        return None
    out = subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
    major, minor, *_ = out.split(".")
    return int(major), int(minor)


@pytest.mark.skipif(
    (_node_major_minor() or (99, 0)) >= (22, 6), reason="needs a node older than 22.6 (or none) on PATH"
)
def test_ts_hook_is_skipped_with_a_warning_on_old_node(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(tmp_path, {"post-install": ("post-install.ts", "export default () => {};\n")})
    res = cli.run("install", shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    assert res.exit_code == 0
    assert "skipped" in res.stdout and "22.6" in res.stdout
    data = cli.install_json(shard, tmp_path / "vault2", "--defaults", cwd=tmp_path)
    [hook] = data["hooks"]
    assert hook["status"] == "skipped" and "22.6" in hook["message"]


def test_node_hook_without_node_is_skipped(tmp_path: Path, cli: Cli, monkeypatch: pytest.MonkeyPatch) -> None:
    bare = tmp_path / "bin"
    bare.mkdir()
    monkeypatch.setenv("PATH", str(bare))
    shard = _shard(tmp_path, {"post-install": ("post-install.mjs", "export default () => {};\n")})
    data = cli.install_json(shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    [hook] = data["hooks"]
    assert hook["status"] == "skipped" and "node" in hook["message"].lower()


def test_missing_hook_script_is_skipped(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(tmp_path, {}, manifest={"hooks": {"post-install": ".shardmind/hooks/gone.py"}})
    data = cli.install_json(shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    [hook] = data["hooks"]
    assert hook["status"] == "skipped" and "missing" in hook["message"]


def test_no_hooks_runs_nothing(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(tmp_path, {"personalize": DUMP_CONTEXT, "post-install": DUMP_CONTEXT})
    vault = tmp_path / "vault"
    data = cli.install_json(
        shard, vault, "--values", _answers(tmp_path, user_name="Ada"), "--no-hooks", cwd=tmp_path
    )
    assert data["hooks"] == [] and data["hooks_planned"] == []
    assert not list(vault.glob("hook-*.json"))


def test_dry_run_lists_hooks_and_writes_nothing(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(tmp_path, {"personalize": DUMP_CONTEXT, "post-install": DUMP_CONTEXT})
    vault = tmp_path / "vault"
    res = cli.run(
        "install", shard, vault, "--values", _answers(tmp_path, user_name="Ada"), "--dry-run", cwd=tmp_path
    )
    assert res.exit_code == 0, res.output
    assert "Hooks that would run: personalize, post-install" in res.stdout
    assert "Dry run" in res.stdout
    assert not vault.exists()
    data = cli.run("install", shard, vault, "--defaults", "--dry-run", "--json", cwd=tmp_path).json()
    assert data["dry_run"] is True and data["hooks_planned"] == ["post-install"]
    assert {f["path"]: f["rendered"] for f in data["files"]} == {"Home.md": True, "extra/x.md": False}
    assert not vault.exists()


def test_rehash_after_a_hook_keeps_the_file_managed(tmp_path: Path, cli: Cli) -> None:
    edit = "import pathlib\np = pathlib.Path('Home.md')\n"
    edit += "p.write_text(p.read_text() + 'edited\\n')\nraise SystemExit(1)\n"
    shard = _shard(tmp_path, {"personalize": edit})
    vault = tmp_path / "vault"
    data = cli.install_json(shard, vault, "--values", _answers(tmp_path, user_name="Ada"), cwd=tmp_path)
    assert data["hooks"][0]["status"] == "failed", "re-hashed even when the hook fails"
    assert (vault / "Home.md").read_text() == "# Ada\nedited\n"
    status = run_shardpy("status", "--json", cwd=vault)
    report = json.loads(status.stdout)
    assert report["counts"] == {"managed": 2, "modified": 0, "volatile": 0, "missing": 0}
    (vault / "Home.md").write_text("user edit\n")
    report = json.loads(run_shardpy("status", "--json", cwd=vault).stdout)
    assert report["counts"]["modified"] == 1


@pytest.fixture
def remote(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pretend the (local) source was fetched over the network."""
    from shardpy.flows.source import Prepared

    monkeypatch.setattr(Prepared, "remote", property(lambda self: True))


@pytest.mark.usefixtures("remote")
def test_remote_hooks_need_consent(tmp_path: Path, cli: Cli) -> None:
    shard = _shard(tmp_path, {"post-install": DUMP_CONTEXT})
    vault = tmp_path / "vault"
    data = cli.install_json(shard, vault, "--defaults", cwd=tmp_path)
    assert data["hooks"] == []
    assert any("--trust" in w for w in data["warnings"]), data["warnings"]
    assert not (vault / "hook-post-install.json").exists()

    trusted = tmp_path / "vault2"
    data = cli.install_json(shard, trusted, "--defaults", "--trust", cwd=tmp_path)
    assert [h["status"] for h in data["hooks"]] == ["ok"]
    assert (trusted / "hook-post-install.json").exists()


def test_python_hook_uses_shardpys_interpreter(tmp_path: Path, cli: Cli) -> None:
    hook = "import sys, pathlib\npathlib.Path('exe.txt').write_text(sys.executable)\n"
    shard = _shard(tmp_path, {"post-install": hook})
    cli.install_json(shard, tmp_path / "vault", "--defaults", cwd=tmp_path)
    assert (tmp_path / "vault/exe.txt").read_text() == sys.executable


SLOW_HOOK = """\
import pathlib, time
pathlib.Path("hook-started").write_text("x")
time.sleep(60)
"""


def test_ctrl_c_during_a_hook_keeps_the_install(tmp_path: Path) -> None:
    import signal
    import subprocess

    from tests.shardkit import child_env, shardpy_argv

    shard = _shard(tmp_path, {"post-install": SLOW_HOOK})
    vault = tmp_path / "vault"
    proc = subprocess.Popen(
        shardpy_argv("install", shard, vault, "--defaults"),
        cwd=tmp_path,
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (vault / "hook-started").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "install itself is complete" in err and "rolled back" not in err
    assert (vault / ".shardmind/state.json").is_file()
    report = json.loads(run_shardpy("status", "--json", cwd=vault).stdout)
    assert report["counts"]["missing"] == 0 and report["counts"]["modified"] == 0


ENV_PROBE = (
    "import json, os, pathlib\n"
    "pathlib.Path('probe.json').write_text(json.dumps(os.environ.get('PYDANTIC_DISABLE_PLUGINS')))\n"
)


@pytest.mark.parametrize("user_value", [None, "logfire"])
def test_a_hook_gets_the_users_pydantic_plugin_setting(
    tmp_path: Path, user_value: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # shardpy turns pydantic's plugin scan off for its own start-up only. (An in-process
    # command earlier in this test process may have set it here, so the user's value is set
    # or cleared explicitly.)
    shard = _shard(tmp_path, {"post-install": ENV_PROBE})
    vault = tmp_path / "vault"
    if user_value is None:
        monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    else:
        monkeypatch.setenv("PYDANTIC_DISABLE_PLUGINS", user_value)
    done = run_shardpy("install", shard, vault, "--defaults", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert read_json(vault / "probe.json") == user_value
