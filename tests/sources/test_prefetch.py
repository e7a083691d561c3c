"""The early fetch (sources/prefetch.py): `install` and `update` resolve and fetch a
remote source in a forked child while the engine loads. Run as real processes
(the CLI in a child of the test, against the GitHub stub on 127.0.0.1): the
result must be exactly what the command gives without it, with no request
made twice and no process left running after the command returns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from shardpy.vault.lock import vault_lock
from tests.shardkit import child_env, shardpy_argv
from tests.sources.support import StubGitHub

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the early fetch forks: Linux only")


def _run(stub: StubGitHub, cache: Path, cwd: Path, *args: str, prefetch: bool) -> tuple[int, Any]:
    env = child_env(
        {
            "SHARDPY_GITHUB_API_BASE": stub.base,
            "SHARDPY_REGISTRY_INDEX_URL": f"{stub.base}/registry/index.json",
            "SHARDPY_CACHE_DIR": str(cache),
            "SHARDPY_PREFETCH": "1" if prefetch else "0",
        }
    )
    proc = subprocess.run(
        [*shardpy_argv(*args), "--json"], cwd=cwd, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, json.loads(proc.stdout)


def _requests(stub: StubGitHub, since: int) -> Counter[tuple[str, str]]:
    return Counter(
        (r.method, r.path) for r in stub.requests[since:]
    )  # method and path: (GET, /repos/o/r/...)


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".shardmind" not in p.parts
    }


def _without_times(doc: Any) -> Any:
    if isinstance(doc, dict):
        return {
            k: _without_times(v) for k, v in doc.items() if k not in ("installed_at", "updated_at", "dest")
        }
    if isinstance(doc, list):
        return [_without_times(v) for v in doc]
    return doc


@pytest.mark.parametrize("source", ["github:o/r@0.9.0", "acme/demo@0.9.0"])
def test_install_and_update_give_the_same_result_with_no_request_made_twice(
    github_stub: StubGitHub, tmp_path: Path, source: str
) -> None:
    github_stub.registry = {"schema_version": 1, "shards": {"acme/demo": {"repo": "o/r"}}}
    results: dict[bool, list[Any]] = {}
    requests: dict[bool, list[Counter[tuple[str, str]]]] = {}
    for prefetch in (False, True):
        cache, vault = tmp_path / f"cache-{prefetch}", tmp_path / f"v-{prefetch}"
        mark = len(github_stub.requests)
        inst = _run(
            github_stub,
            cache,
            tmp_path,
            "install",
            source,
            str(vault),
            "--defaults",
            prefetch=prefetch,
        )
        after_install = len(github_stub.requests)
        upd = _run(github_stub, cache, vault, "update", "--yes", prefetch=prefetch)
        docs = json.loads(json.dumps([inst[1], upd[1]]).replace(str(vault), "VAULT"))
        results[prefetch] = [inst[0], _without_times(docs[0]), upd[0], _without_times(docs[1]), _tree(vault)]
        requests[prefetch] = [
            _requests(github_stub, mark) - _requests(github_stub, after_install),
            _requests(github_stub, after_install),
        ]
    assert results[True][0] == 0 and results[True][2] == 0, results[True][:4]
    assert results[True][3]["to_version"] == "1.0.0"
    assert results[True] == results[False]
    # The parent took the child's resolution and found its download cached:
    # the same requests as one process doing everything itself, none twice.
    assert requests[True] == requests[False]


def test_an_error_in_the_child_is_reported_by_the_command_as_without_it(
    github_stub: StubGitHub, tmp_path: Path
) -> None:
    out = {
        prefetch: _run(
            github_stub,
            tmp_path / "cache",
            tmp_path,
            "install",
            "github:o/r@7.7.7",
            str(tmp_path / f"v{prefetch}"),
            "--defaults",
            prefetch=prefetch,
        )
        for prefetch in (False, True)
    }
    assert out[True][0] == 1
    assert out[True][1]["error"]["code"] == out[False][1]["error"]["code"] == "SOURCE_VERSION_NOT_FOUND"
    assert json.dumps(out[True][1]).replace("vTrue", "v") == json.dumps(out[False][1]).replace("vFalse", "v")


def _processes_in(folder: Path) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if Path(os.readlink(entry / "cwd")) == folder:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_command_that_fails_first_stops_its_child_before_it_returns(
    github_stub: StubGitHub, tmp_path: Path
) -> None:
    cache, vault = tmp_path / "cache", tmp_path / "v"
    code, _ = _run(
        github_stub, cache, tmp_path, "install", "github:o/r@0.9.0", str(vault), "--defaults", prefetch=True
    )
    assert code == 0
    github_stub.delay = 0.5  # the child is still waiting for GitHub when the command fails
    started = time.monotonic()
    with vault_lock(vault, command="test"):
        code, out = _run(github_stub, cache, vault, "update", "--yes", prefetch=True)
    assert code == 1 and out["error"]["code"] == "VAULT_LOCKED"
    assert time.monotonic() - started < 30
    assert _processes_in(vault.resolve()) == []  # the child was stopped, not left to run on
    assert list(cache.glob("trees/.extract-*")) == []  # its partial extraction removed


_SNIPPET = textwrap.dedent(
    """
    import json, os, sys
    from pathlib import Path
    from shardpy.sources import fetch, parse_source, prefetch, resolve

    asked, taken = (parse_source(s, cwd=Path("/")) for s in sys.argv[1:3])
    prefetch.start(asked, include_prerelease=False)
    child = prefetch._pending
    seen = []
    got = prefetch.take(taken, include_prerelease=False, progress=lambda *a: seen.append(a[0]))
    try:
        os.waitpid(child.pid, os.WNOHANG)
        reaped = False
    except ChildProcessError:
        reaped = True
    direct = resolve(taken)
    print(json.dumps({
        "started": child is not None,
        "got": None if got is None else [got.version, got.commit],
        "direct": [direct.version, direct.commit],
        "reaped": reaped,
        "progress": sorted(set(seen)),
    }))
    """
)


def _snippet(stub: StubGitHub, tmp_path: Path, asked: str, taken: str) -> Any:
    env = child_env({"SHARDPY_GITHUB_API_BASE": stub.base, "SHARDPY_CACHE_DIR": str(tmp_path / "cache")})
    proc = subprocess.run(
        [sys.executable, "-c", _SNIPPET, asked, taken], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_take_gives_the_childs_resolution_and_reaps_it(github_stub: StubGitHub, tmp_path: Path) -> None:
    out = _snippet(github_stub, tmp_path, "github:o/r@1.0.0", "github:o/r@1.0.0")
    assert out["started"] and out["reaped"]
    assert out["got"] == out["direct"] and out["got"][0] == "1.0.0"


def test_take_of_another_spec_stops_the_child_and_gives_nothing(
    github_stub: StubGitHub, tmp_path: Path
) -> None:
    out = _snippet(github_stub, tmp_path, "github:o/r@0.9.0", "github:o/r@1.0.0")
    assert out["started"] and out["reaped"]
    assert out["got"] is None  # the caller resolves itself
    assert out["direct"][0] == "1.0.0"


def test_the_childs_download_progress_is_replayed(github_stub: StubGitHub, tmp_path: Path) -> None:
    out = _snippet(github_stub, tmp_path, "github:o/r@1.0.0", "github:o/r@1.0.0")
    assert out["progress"] and all("o/r" in label for label in out["progress"])


def test_the_child_ends_when_its_parent_is_killed(github_stub: StubGitHub, tmp_path: Path) -> None:
    cache, vault = tmp_path / "cache", tmp_path / "v"
    code, _ = _run(
        github_stub, cache, tmp_path, "install", "github:o/r@0.9.0", str(vault), "--defaults", prefetch=True
    )
    assert code == 0
    github_stub.delay = 3.0  # the child waits on GitHub; the parent waits on the child
    env = child_env({"SHARDPY_GITHUB_API_BASE": github_stub.base, "SHARDPY_CACHE_DIR": str(cache)})
    proc = subprocess.Popen(shardpy_argv("update", "--yes"), cwd=vault, env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while len(_processes_in(vault.resolve())) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(_processes_in(vault.resolve())) == 2, "the command and its child"
    proc.kill()  # SIGKILL: no exit handler runs in the parent
    proc.wait()
    deadline = time.monotonic() + 2  # well inside the stub's 3 s: the child did not just finish
    while _processes_in(vault.resolve()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_in(vault.resolve()) == []
    assert list(cache.glob("trees/.extract-*")) == []


def test_an_unwritable_cache_leaves_the_work_to_the_parent_once(
    github_stub: StubGitHub, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("the cache cannot be made below a file\n")
    requests = {}
    for prefetch in (False, True):
        mark = len(github_stub.requests)
        code, out = _run(
            github_stub,
            blocker / "cache",
            tmp_path,
            "install",
            "github:o/r@1.0.0",
            str(tmp_path / f"v-{prefetch}"),
            "--defaults",
            prefetch=prefetch,
        )
        assert code == 0, out
        requests[prefetch] = _requests(github_stub, mark)
    # The child gave up before asking GitHub anything: no download made twice.
    assert requests[True] == requests[False]
