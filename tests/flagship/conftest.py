from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.flagship.shardtools import Layout, lay_out_vault

SCRIPTS = ".claude/scripts"


@dataclass
class Run:
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    def context(self) -> str:
        data = self.json()
        return str(data.get("hookSpecificOutput", {}).get("additionalContext", ""))


def run_script(
    vault: Path,
    script: str,
    payload: Any = None,
    *,
    raw: bytes | None = None,
    args: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """Run a vault hook script the way an agent does: a fresh interpreter,
    the agent's JSON on stdin, the vault (or `cwd`) as working directory."""
    data = raw if raw is not None else (b"" if payload is None else json.dumps(payload).encode())
    full_env = {**os.environ, **(env or {})}
    done = subprocess.run(
        [sys.executable, str(vault / SCRIPTS / script), *args],
        input=data,
        capture_output=True,
        cwd=str(cwd or vault),
        env=full_env,
        timeout=120,
    )
    return Run(done.returncode, done.stdout.decode("utf-8"), done.stderr.decode("utf-8"))


@pytest.fixture
def isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """HOME, XDG config and TMPDIR inside the test, PATH without qmd."""
    home = tmp_path / "home"
    (home / ".config").mkdir(parents=True)
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    env = {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "TMPDIR": str(tmp)}
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return env


@pytest.fixture
def make_vault(tmp_path: Path) -> Callable[..., Layout]:
    counter = {"n": 0}

    def make(name: str = "vault", **kwargs: Any) -> Layout:
        counter["n"] += 1
        return lay_out_vault(tmp_path / f"{counter['n']}" / name, **kwargs)

    return make


FAKE_QMD = '''#!{python}
"""A stand-in for the qmd CLI: records its arguments, and on `collection add`
writes the per-index YAML the way qmd keeps it, so callers can be tested."""
import os, sys
from pathlib import Path
here = Path(__file__).resolve().parent
with open(here / "qmd.log", "a", encoding="utf-8") as fh:
    fh.write(" ".join(sys.argv[1:]) + "\\n")
args = sys.argv[1:]
index = args[args.index("--index") + 1] if "--index" in args else "index"
if "collection" in args and "add" in args:
    name = args[args.index("--name") + 1]
    cfg = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "qmd" / f"{{index}}.yml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    if cfg.exists() and name in cfg.read_text():
        print(f"Collection '{{name}}' already exists", file=sys.stderr)
        sys.exit(1)
    cfg.write_text(f"collections:\\n  {{name}}:\\n    path: {{os.getcwd()}}\\n    pattern: \\"**/*.md\\"\\n")
sys.exit(int(os.environ.get("FAKE_QMD_EXIT", "0")))
'''


@pytest.fixture
def fake_qmd(tmp_path: Path) -> Path:
    bindir = tmp_path / "fakebin"
    bindir.mkdir()
    qmd = bindir / "qmd"
    qmd.write_text(FAKE_QMD.format(python=sys.executable), encoding="utf-8")
    qmd.chmod(0o755)
    return qmd
