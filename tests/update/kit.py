"""A shard that changes between versions, and a vault installed from it.

`Scenario` keeps one source directory (rewritten for each shard version)
and one vault; commands run through the real CLI, in-process.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.shardkit import Cli, dump_yaml

DEFAULT_VALUES: dict[str, Any] = {
    "user_name": {"type": "string", "default": "", "message": "Your name", "group": "setup"},
    "purpose": {
        "type": "select",
        "default": "eng",
        "options": [{"value": "eng", "label": "Engineering"}, {"value": "res", "label": "Research"}],
        "group": "setup",
    },
}
DEFAULT_MODULES: dict[str, Any] = {
    "brain": {"label": "Brain", "paths": ["brain/"], "removable": False},
    "extra": {"label": "Extra", "paths": ["extra/"], "removable": True},
}


@contextmanager
def chdir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


class Scenario:
    def __init__(self, root: Path, cli: Cli) -> None:
        self.root = root
        self.src = root / "src"
        self.vault = root / "vault"
        self._cli = cli

    def shard(
        self,
        version: str,
        files: dict[str, str | bytes],
        *,
        values: dict[str, Any] | None = None,
        modules: dict[str, Any] | None = None,
        hooks: dict[str, Any] | None = None,
        migrations: list[dict[str, Any]] | None = None,
        file_migrations: dict[str, str] | None = None,
        name: str = "demo",
    ) -> None:
        """(Re)write the source directory as shard ``version``."""
        if self.src.exists():
            shutil.rmtree(self.src)
        (self.src / ".shardmind").mkdir(parents=True)
        manifest: dict[str, Any] = {"apiVersion": "v1", "name": name, "namespace": "acme", "version": version}
        if hooks:
            manifest["hooks"] = hooks
        schema: dict[str, Any] = {
            "schema_version": 1,
            "values": DEFAULT_VALUES if values is None else values,
            "groups": [{"id": "setup", "label": "Setup"}],
            "modules": DEFAULT_MODULES if modules is None else modules,
            "migrations": migrations or [],
        }
        (self.src / ".shardmind/shard.yaml").write_text(dump_yaml(manifest))
        (self.src / ".shardmind/shard-schema.yaml").write_text(dump_yaml(schema))
        for path, content in files.items():
            target = self.src / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8", newline="")
        if file_migrations:
            for fname, text in file_migrations.items():
                target = self.src / "migrations" / fname
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)

    def cli(self, *args: str, cwd: Path | None = None) -> Run:
        result = self._cli.run(*args, cwd=cwd or self.vault)
        return Run(result.exit_code, result.stdout, result.stderr)

    def install(self, *args: str) -> Run:
        run = self.cli("install", str(self.src), str(self.vault), *args, cwd=self.root)
        assert run.code == 0, run.out + run.err
        return run

    def update(self, *args: str, ok: bool = True) -> Run:
        run = self.cli("update", *args)
        if ok:  # 3: finished, with conflicts left for the user
            assert run.code in (0, 3), run.out + run.err
        return run

    def update_json(self, *args: str) -> Any:
        run = self.update("--json", *args)
        return run.json()

    def read(self, path: str) -> str:
        return (self.vault / path).read_text(encoding="utf-8")

    def read_bytes(self, path: str) -> bytes:
        return (self.vault / path).read_bytes()

    def write(self, path: str, text: str | bytes) -> None:
        target = self.vault / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(text, bytes):
            target.write_bytes(text)
        else:
            target.write_text(text, encoding="utf-8", newline="")

    def state(self) -> Any:
        return json.loads((self.vault / ".shardmind/state.json").read_text())

    def ownership(self, path: str) -> str:
        st = self.cli("status", "--json").json()
        for item in st["modified"]:
            if item["path"] == path:
                return "modified"
        if path in st["missing"]:
            return "missing"
        rec = self.state()["files"].get(path)
        if rec is None:
            return "user"
        return "volatile" if rec.get("volatile") else "managed"

    def action(self, report: Any, path: str) -> dict[str, Any] | None:
        for item in report["files"]:
            if item["path"] == path:
                return item  # type: ignore[no-any-return]
        return None
