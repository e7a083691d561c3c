"""Builders and oracles shared by the command tests (install, status, update,
adopt).

Everything here works on real files in a test's temporary directory:

- :func:`make_shard` writes a shard (manifest, schema, hooks, files) from
  Python data, so a test states only what it is about.
- :func:`write_tree` / :func:`tree_snapshot` write and fingerprint a
  directory (paths, bytes, links, empty folders), for "nothing was left
  behind" and "these bytes are unchanged" assertions.
- :func:`clone_expectation` is an *independent* oracle for Invariant 1: it
  asks ``git`` which files survive the `.shardmindignore` files (git's own
  gitignore engine, nested files and negation included) and applies the
  Tier-1 list from CONTRACT §3, without calling shardpy's walk.
- :class:`Cli` runs the Typer app in-process (``CliRunner``, cwd changed
  with ``monkeypatch.chdir``); :func:`run_shardpy` runs a real
  ``python -m shardpy`` child process.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent

DEFAULT_MANIFEST: dict[str, Any] = {
    "apiVersion": "v1",
    "name": "fixture",
    "namespace": "tests",
    "version": "1.0.0",
}
DEFAULT_SCHEMA: dict[str, Any] = {"schema_version": 1, "values": {}, "groups": [], "modules": {}}


@dataclass(frozen=True)
class Symlink:
    """A value for :func:`write_tree`: create a symbolic link to ``target``."""

    target: str


FileContent = str | bytes | Symlink
DIR = "<dir>"  # tree_snapshot's marker for a directory


def dump_yaml(data: Any) -> str:
    # JSON is YAML; readable enough for fixtures and needs no YAML writer.
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_tree(root: Path, files: Mapping[str, FileContent]) -> Path:
    """Write ``files`` (POSIX path → text, bytes or :class:`Symlink`) under
    ``root``. A path ending in ``/`` creates an (empty) directory."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = root / rel
        if rel.endswith("/"):
            target.mkdir(parents=True, exist_ok=True)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, Symlink):
            target.symlink_to(content.target)
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root


def make_shard(
    root: Path,
    *,
    files: Mapping[str, FileContent] | None = None,
    schema: Mapping[str, Any] | str | None = None,
    manifest: Mapping[str, Any] | str | None = None,
    ignore: str | None = None,
    hooks: Mapping[str, str | tuple[str, str]] | None = None,
) -> Path:
    """Write a shard whose root is ``root`` and return ``root``.

    - ``manifest`` / ``schema``: a mapping merged over minimal valid
      defaults (top-level keys replace), or raw YAML text written as is.
    - ``files``: installable content (see :func:`write_tree`).
    - ``ignore``: the text of the shard root's ``.shardmindignore``.
    - ``hooks``: slot → Python source (written to
      ``.shardmind/hooks/<slot>.py``) or slot → ``(file name, source)`` for
      other languages; the manifest's ``hooks`` gets the matching paths.
      A slot of ``bootstrap`` with a ``(name, source, fingerprint)`` triple
      is written in the ``{script, fingerprint}`` shape.
    """
    side = root / ".shardmind"
    side.mkdir(parents=True, exist_ok=True)
    hook_paths: dict[str, Any] = {}
    for slot, spec in (hooks or {}).items():
        if isinstance(spec, tuple):
            name, source, *fingerprint = spec
        else:
            name, source, fingerprint = f"{slot}.py", spec, []
        rel = f".shardmind/hooks/{name}"
        write_tree(root, {rel: source})
        hook_paths[slot] = {"script": rel, "fingerprint": fingerprint[0]} if fingerprint else rel
    if isinstance(manifest, str):
        (side / "shard.yaml").write_text(manifest, encoding="utf-8")
    else:
        data = {**DEFAULT_MANIFEST, **(manifest or {})}
        if hook_paths:
            data["hooks"] = {**hook_paths, **dict(data.get("hooks") or {})}
        (side / "shard.yaml").write_text(dump_yaml(data), encoding="utf-8")
    if isinstance(schema, str):
        (side / "shard-schema.yaml").write_text(schema, encoding="utf-8")
    else:
        (side / "shard-schema.yaml").write_text(
            dump_yaml({**DEFAULT_SCHEMA, **(schema or {})}), encoding="utf-8"
        )
    if ignore is not None:
        (root / ".shardmindignore").write_text(ignore, encoding="utf-8")
    write_tree(root, files or {})
    return root


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_snapshot(root: Path, *, skip: Iterable[str] = ()) -> dict[str, str]:
    """Every entry under ``root`` (links never followed): path → sha256 of a
    file's bytes, ``"link:<target>"`` for a link, :data:`DIR` for a folder,
    ``"special:<mode>"`` for a pipe or device (never opened).
    Paths in ``skip`` (and everything below them) are left out. A missing
    ``root`` gives ``{}``."""
    skipped = tuple(skip)
    out: dict[str, str] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in sorted(dirnames + filenames):
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            if any(rel == s or rel.startswith(s.rstrip("/") + "/") for s in skipped):
                if name in dirnames:
                    dirnames.remove(name)
                continue
            full = Path(dirpath, name)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = "link:" + os.readlink(full)
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = DIR
            elif stat.S_ISREG(st.st_mode):
                out[rel] = sha256(full.read_bytes())
            else:  # a pipe or device: never opened (reading a FIFO blocks)
                out[rel] = f"special:{stat.S_IFMT(st.st_mode):o}"
    return dict(sorted(out.items()))


def files_only(snapshot: Mapping[str, str]) -> dict[str, str]:
    """A :func:`tree_snapshot` without its directory entries."""
    return {p: h for p, h in snapshot.items() if h != DIR}


# --- Invariant 1 oracle ------------------------------------------------------

_TIER1_ROOT_DIRS = (".shardmind", ".git", ".github")
_TIER1_FILES = (".obsidian/workspace.json", ".obsidian/workspace-mobile.json", ".obsidian/graph.json")


def _tier1(rel: str) -> bool:
    """CONTRACT §3 Tier 1, case-insensitively: the root `.shardmind/`,
    `.git/` (at any depth), `.github/`, and three `.obsidian/` files."""
    low = rel.lower()
    parts = low.split("/")
    return parts[0] in _TIER1_ROOT_DIRS or ".git" in parts[:-1] or parts[-1] == ".git" or low in _TIER1_FILES


def git_surviving_files(source_root: Path, shard_root: Path) -> list[str]:
    """Shard-root-relative files that git's gitignore engine keeps when
    `.shardmindignore` files are read as per-directory ignore files from
    ``source_root`` down (nearer files win; negation as git does it)."""
    git_dir = source_root.parent / f".oracle-{source_root.name}.git"
    env = {**os.environ, "GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(source_root)}
    for key in ("GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"):
        env.pop(key, None)
    if not git_dir.exists():
        subprocess.run(["git", "init", "-q"], check=True, env=env, cwd=source_root)
    prefix = shard_root.relative_to(source_root).as_posix()
    args = ["git", "ls-files", "-z", "--others", "--exclude-per-directory=.shardmindignore"]
    if prefix != ".":
        args += ["--", prefix]
    out = subprocess.run(args, check=True, env=env, capture_output=True, cwd=source_root).stdout
    paths = [p for p in out.decode("utf-8").split("\0") if p]
    if prefix != ".":
        paths = [p[len(prefix) + 1 :] for p in paths]
    return sorted(paths)


def clone_expectation(source_root: Path, shard_root: Path | None = None) -> dict[str, str | None]:
    """What ``install --defaults`` must produce (Invariant 1), computed
    without shardpy: output path → sha256 of the source bytes for a static
    file, ``None`` ("must exist") for a `.njk` template at its stripped
    path. Directories named in a path are not listed."""
    shard = shard_root or source_root
    out: dict[str, str | None] = {}
    for rel in git_surviving_files(source_root, shard):
        if _tier1(rel):
            continue
        if rel.endswith(".njk"):
            out[rel[: -len(".njk")]] = None
        else:
            out[rel] = sha256((shard / rel).read_bytes())
    return dict(sorted(out.items()))


def assert_equals_clone(vault: Path, expected: Mapping[str, str | None]) -> None:
    """Invariant 1: the vault holds exactly ``expected`` plus `.shardmind/`
    and `shard-values.yaml` — no missing path, no extra path, no byte
    difference in a static file."""
    actual = files_only(tree_snapshot(vault, skip=[".shardmind", "shard-values.yaml"]))
    missing = sorted(set(expected) - set(actual))
    extra = sorted(set(actual) - set(expected))
    changed = sorted(p for p, h in expected.items() if h is not None and p in actual and actual[p] != h)
    assert not (missing or extra or changed), f"missing={missing} extra={extra} changed={changed}"
    assert (vault / ".shardmind" / "state.json").is_file()
    assert (vault / "shard-values.yaml").is_file()
    top = {p.name for p in vault.iterdir()}
    expected_top = {p.split("/", 1)[0] for p in expected} | {".shardmind", "shard-values.yaml"}
    assert top == expected_top, f"unexpected top-level entries: {sorted(top - expected_top)}"


# --- running the CLI ---------------------------------------------------------


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str
    exception: BaseException | None = None

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def json(self) -> Any:
        """The command's ``--json`` document (stdout)."""
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:  # pragma: no cover - diagnostic
            raise AssertionError(f"not JSON (exit {self.exit_code}):\n{self.output}") from exc

    def error_code(self) -> str | None:
        """The typed error code: from ``{"error": {"code"}}`` on stdout when
        the command ran with ``--json``, else from ``error [CODE]`` on stderr."""
        try:
            data = json.loads(self.stdout)
        except json.JSONDecodeError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            return str(data["error"]["code"])
        match = re.search(r"error \[([A-Z0-9_]+)\]", self.stderr)
        return match.group(1) if match else None


class Cli:
    """Run ``shardpy`` in-process as a user would: ``cli.run("install", src,
    dest, "--defaults", cwd=dir)`` changes into ``cwd`` (``monkeypatch.chdir``)
    and returns a :class:`CliResult`. Unexpected exceptions are re-raised so a
    traceback is never mistaken for a typed error."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, *, env: Mapping[str, str] | None = None) -> None:
        self.monkeypatch = monkeypatch
        self.env = {"NO_COLOR": "1", "COLUMNS": "200", **(env or {})}

    def run(
        self, *args: str | Path, cwd: Path | None = None, input: str | None = None, raises: bool = True
    ) -> CliResult:
        from typer.testing import CliRunner

        from shardpy.cli.commands import app

        if cwd is not None:
            self.monkeypatch.chdir(cwd)
        result = CliRunner().invoke(app, [str(a) for a in args], input=input, env=self.env)
        exc = result.exception
        if raises and exc is not None and not isinstance(exc, SystemExit):
            raise exc
        return CliResult(result.exit_code, result.stdout, result.stderr, exc)

    def install_json(self, *args: str | Path, cwd: Path | None = None) -> dict[str, Any]:
        """``install ARGS --json`` that must succeed; its JSON document."""
        res = self.run("install", *args, "--json", cwd=cwd)
        assert res.exit_code == 0, res.output
        data = res.json()
        assert isinstance(data, dict)
        return data


def shardpy_argv(*args: str | Path) -> list[str]:
    return [sys.executable, "-m", "shardpy", *map(str, args)]


def child_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SHARDPY_", "SHARDMIND_"))}
    env.update(NO_COLOR="1", COLUMNS="200", PYTHONPATH=str(REPO_ROOT))
    env.update(extra or {})
    return env


def run_shardpy(
    *args: str | Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """A real ``python -m shardpy ARGS`` child process (no TTY)."""
    return subprocess.run(
        shardpy_argv(*args),
        cwd=cwd,
        env=child_env(env),
        input=input if input is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@dataclass
class Interrupted:
    returncode: int
    stdout: str
    stderr: str
    journal_seen: bool  # the signal arrived while a transaction was applying


def interrupt_during_apply(
    *args: str | Path,
    cwd: Path,
    vault: Path,
    sig: int,
    after: float,
    wait_for_journal: bool = True,
    op_delay: float = 0.005,
    env: Mapping[str, str] | None = None,
) -> Interrupted:
    """Run ``shardpy ARGS`` in a child that sleeps ``op_delay`` between
    transaction operations (SHARDPY_TEST_APPLY_DELAY) and send it ``sig``:
    ``after`` seconds after ``vault/.shardmind/journal.json`` appears (or
    after start, with ``wait_for_journal=False``)."""
    import signal as _signal
    import time

    journal = vault / ".shardmind" / "journal.json"
    proc = subprocess.Popen(
        shardpy_argv(*args),
        cwd=cwd,
        env=child_env({"SHARDPY_TEST_APPLY_DELAY": str(op_delay), **(env or {})}),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        if wait_for_journal:
            while not journal.exists() and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.002)
        time.sleep(after)
        seen = journal.exists()
        if proc.poll() is None:
            proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.send_signal(_signal.SIGKILL)
            proc.wait()
    return Interrupted(proc.returncode, out, err, seen)


def leftovers(vault: Path) -> list[str]:
    """Engine debris that must never survive a finished command: temp files,
    a transaction journal."""
    snap = tree_snapshot(vault)
    return sorted(p for p in snap if ".shardpy-tmp-" in p or p == ".shardmind/journal.json")


def describe(proc: subprocess.CompletedProcess[str]) -> str:
    return f"$ {shlex.join(map(str, proc.args))}\nexit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def values_yaml(values: Mapping[str, Any]) -> str:
    """A `--values` file body (JSON is valid YAML)."""
    return dump_yaml(dict(values))


def lines_of(text: str) -> list[str]:
    return [line.rstrip() for line in text.splitlines()]


__all__ = [
    "DEFAULT_MANIFEST",
    "DEFAULT_SCHEMA",
    "DIR",
    "REPO_ROOT",
    "Cli",
    "CliResult",
    "Interrupted",
    "Symlink",
    "assert_equals_clone",
    "child_env",
    "clone_expectation",
    "describe",
    "files_only",
    "git_surviving_files",
    "interrupt_during_apply",
    "leftovers",
    "lines_of",
    "make_shard",
    "read_json",
    "run_shardpy",
    "sha256",
    "shardpy_argv",
    "tree_snapshot",
    "values_yaml",
    "write_tree",
]
