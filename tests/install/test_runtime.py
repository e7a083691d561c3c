"""shardpy.runtime, exercised from a real hook script and directly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from shardpy import runtime
from shardpy.errors import ShardpyError
from tests.shardkit import Cli, child_env, make_shard, read_json, values_yaml

SCHEMA: dict[str, Any] = {
    "values": {"user_name": {"type": "string", "default": ""}, "size": {"type": "number", "default": 2}},
    "modules": {
        "people": {"label": "People", "paths": ["people/"], "removable": True},
        "perf": {"label": "Perf", "paths": ["perf/"], "removable": True},
    },
    "signals": [
        {"id": "DECISION", "description": "d", "routes_to": "work/", "core": True},
        {"id": "PERSON", "description": "p", "routes_to": "people/", "module": "people"},
        {"id": "WIN", "description": "w", "routes_to": "perf/", "module": "perf"},
    ],
    "frontmatter": {
        "global": ["date"],
        "person": {"required": ["date", "title"], "path_match": "people/**.md"},
    },
}

HOOK = """\
import json, os, pathlib, sys
from shardpy import runtime

out = {}
out["light_import"] = "pydantic" not in sys.modules
ctx = runtime.hook_context()
out["ctx_slot"] = ctx["slot"]
out["root"] = str(runtime.find_vault_root())
out["values"] = runtime.load_values()
state = runtime.load_state()
out["state_shard"] = state["shard"]
out["state_files"] = sorted(state["files"])
out["schema_values"] = list(runtime.load_schema().values)
out["schema_cached"] = runtime.load_schema() is runtime.load_schema()
out["included"] = runtime.included_modules()
out["signals"] = [s["id"] for s in runtime.active_signals()]
pathlib.Path("people").mkdir(exist_ok=True)
pathlib.Path("people/Sam.md").write_text("---\\ndate: 2024-01-01\\n---\\nbody\\n")
out["sam"] = runtime.validate_frontmatter("people/Sam.md")
out["sam_abs"] = runtime.validate_frontmatter(pathlib.Path.cwd() / "people/Sam.md")
out["nowhere"] = runtime.validate_frontmatter("notes/none.md")
out["home"] = runtime.validate_frontmatter("Home.md")
out["ctx_file"] = os.environ["SHARDPY_HOOK_CONTEXT"]
# without the env variable the context comes from stdin
for name in ("SHARDPY_HOOK_CONTEXT", "SHARDMIND_HOOK_CONTEXT"):
    os.environ.pop(name)
out["stdin_ctx_equal"] = runtime.hook_context() == ctx
pathlib.Path("runtime-out.json").write_text(json.dumps(out))
"""


@pytest.fixture
def vault(tmp_path: Path, cli: Cli) -> Path:
    shard = make_shard(
        tmp_path / "shard",
        schema=SCHEMA,
        files={"Home.md": "---\ndate: 2024-01-01\n---\n# Home\n", "people/p.md": "p\n", "perf/b.md": "b\n"},
        hooks={"personalize": HOOK},
    )
    answers = tmp_path / "answers.yaml"
    answers.write_text(values_yaml({"user_name": "Ada", "size": 5}))
    dest = tmp_path / "vault"
    data = cli.install_json(shard, dest, "--values", answers, "--exclude-module", "perf", cwd=tmp_path)
    assert [h["status"] for h in data["hooks"]] == ["ok"], data["hooks"]
    return dest


def test_runtime_from_a_real_hook(vault: Path) -> None:
    out = read_json(vault / "runtime-out.json")
    assert out["light_import"], "importing shardpy.runtime must not pull in pydantic"
    assert out["ctx_slot"] == "personalize"
    assert out["root"] == str(vault)
    assert out["values"] == {"user_name": "Ada", "size": 5}
    assert out["state_shard"] == "tests/fixture"
    assert out["state_files"] == ["Home.md", "people/p.md"]
    assert out["schema_values"] == ["user_name", "size"]
    assert out["schema_cached"] is True
    assert out["included"] == ["people"]
    assert out["signals"] == ["DECISION", "PERSON"]
    assert out["sam"] == ["title"] and out["sam_abs"] == ["title"]
    assert out["nowhere"] == ["date"]
    assert out["home"] == []
    assert out["stdin_ctx_equal"] is True


def test_runtime_outside_a_hook(vault: Path, tmp_path: Path) -> None:
    assert runtime.find_vault_root(vault / "people") == vault
    assert runtime.find_vault_root(tmp_path) is None
    assert runtime.load_values(vault / "people") == {"user_name": "Ada", "size": 5}
    assert runtime.included_modules(vault) == ["people"]
    assert runtime.validate_frontmatter(vault / "people/Sam.md", vault) == ["title"]
    with pytest.raises(ShardpyError) as info:
        runtime.load_values(tmp_path / "shard")
    assert info.value.code == "VAULT_NOT_FOUND"
    with pytest.raises(ShardpyError) as info:
        runtime.validate_frontmatter(tmp_path / "elsewhere.md", vault)
    assert info.value.code == "RUNTIME_PATH_OUTSIDE_VAULT"
    (vault / ".shardmind/state.json").write_text("{oops")
    with pytest.raises(ShardpyError) as info:
        runtime.load_state(vault)
    assert info.value.code == "STATE_CORRUPT"


@pytest.mark.parametrize(
    ("env", "stdin", "expected"),
    [
        ({}, "", "HOOK_CONTEXT_MISSING"),
        ({}, "not json", "HOOK_CONTEXT_INVALID"),
        ({"SHARDPY_HOOK_CONTEXT": "/nonexistent/ctx.json"}, "", "HOOK_CONTEXT_INVALID"),
        ({"SHARDPY_HOOK_CONTEXT": '{"slot": "inline"}'}, "", "inline"),
        ({}, '{"slot": "piped"}', "piped"),
    ],
)
def test_hook_context_sources(tmp_path: Path, env: dict[str, str], stdin: str, expected: str) -> None:
    script = (
        "from shardpy import runtime\nfrom shardpy.errors import ShardpyError\n"
        "try:\n    print(runtime.hook_context()['slot'])\n"
        "except ShardpyError as exc:\n    print(exc.code)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        input=stdin,
        env=child_env(env),
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert proc.stdout.strip() == expected, proc.stderr


def test_the_context_file_is_removed_after_the_hook(vault: Path) -> None:
    ctx_file = Path(read_json(vault / "runtime-out.json")["ctx_file"])
    assert ctx_file.name == "context.json"
    assert not ctx_file.exists(), "the runner's temporary context file is cleaned up"
