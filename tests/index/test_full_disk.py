"""Search on a cache disk that really is full (the index is a cache: it must not stop a search).

The vault stays on the ordinary disk; the index (``SHARDPY_CACHE_DIR``) is on a small tmpfs in a
private mount namespace (tests/hardening/faults.py). With an index built, the vault grows, the
tmpfs is filled, and real ``python -m shardpy`` children run: `search` answers from the index as
it is, saying it could not be refreshed; `index` and a search with no index yet are DISK_FULL
(exit 1, JSON on stdout); never a traceback. Once there is space, the next search is fresh.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.hardening.faults import skip_without_a_mount_namespace
from tests.shardkit import child_env, shardpy_argv

# $1 mount point, $2 the vault, $3 the notes that arrive later, $4 where to report; $5... shardpy.
ON_A_FULL_CACHE = r"""
set -u
mnt=$1; vault=$2; later=$3; out=$4; shift 4
mount -t tmpfs -o size=16m tmpfs "$mnt" || exit 1
export SHARDPY_CACHE_DIR="$mnt/cache"
cd "$vault"
run() { name=$1; shift; "$@" > "$out/$name.out" 2> "$out/$name.err"; echo $? > "$out/$name.rc"; }
run built "$@" search release --json
cp "$later"/*.md "$vault"/
avail=$(df --output=avail -k "$mnt" | tail -n 1)
head -c $(( avail * 1024 )) /dev/zero > "$mnt/filler" 2>/dev/null
run stale "$@" search release --json
run stale-new "$@" search zeppelin --json
run index "$@" index --json
SHARDPY_CACHE_DIR="$mnt/other" run none "$@" search release --json
rm -f "$mnt/filler"
run fresh "$@" search zeppelin --json
exit 0
"""
RUNS = ("built", "stale", "stale-new", "index", "none", "fresh")


def _notes(folder: Path, word: str, count: int) -> None:
    folder.mkdir(parents=True)
    for i in range(count):
        body = f"The {word} plan number {i}: who owns it, what ships and how we roll it back.\n"
        (folder / f"{word}-{i}.md").write_text(
            f"---\ntitle: {word.title()} {i}\n---\n\n{body}", encoding="utf-8"
        )


def _answers(tmp: Path) -> dict[str, tuple[int, dict[str, Any]]]:
    skip_without_a_mount_namespace(tmp / "probe")
    vault, later, mnt, out = tmp / "vault", tmp / "later", tmp / "mnt", tmp / "out"
    _notes(vault, "release", 30)
    _notes(later, "zeppelin", 5)
    mnt.mkdir()
    out.mkdir()
    argv = ["unshare", "-m", "sh", "-c", ON_A_FULL_CACHE, "sh", mnt, vault, later, out, *shardpy_argv()]
    done = subprocess.run(argv, env=child_env(), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    answers = {}
    for run in RUNS:
        text = (out / f"{run}.out").read_text(encoding="utf-8")
        said = text + (out / f"{run}.err").read_text(encoding="utf-8")
        assert "Traceback" not in said, (run, said)
        answers[run] = (int((out / f"{run}.rc").read_text()), json.loads(text))
    return answers


def _paths(answer: dict[str, Any]) -> set[str]:
    return {hit["path"] for hit in answer["hits"]}


def test_search_on_a_full_cache_disk_answers_from_the_index_it_has(tmp_path: Path) -> None:
    answers = _answers(tmp_path)
    code, built = answers["built"]
    assert code == 0 and len(_paths(built)) == 10

    code, stale = answers["stale"]
    assert code == 0 and _paths(stale) == _paths(built), stale
    assert any("could not be refreshed" in n and "disk is full" in n for n in stale["notices"]), stale
    code, stale_new = answers["stale-new"]
    # The notes the index does not hold yet are not found (by meaning, the nearest old ones are).
    assert code == 0 and not any(p.startswith("zeppelin") for p in _paths(stale_new)), stale_new

    for run in ("index", "none"):  # nothing to answer from: the typed error
        code, answer = answers[run]
        assert code == 1 and answer["error"]["code"] == "DISK_FULL", (run, answer)
        assert "SHARDPY_CACHE_DIR" in answer["error"]["hint"]

    code, fresh = answers["fresh"]
    first = {hit["path"] for hit in fresh["hits"][:5]}
    assert code == 0 and first == {f"zeppelin-{i}.md" for i in range(5)}, fresh
    assert not any("could not be refreshed" in n for n in fresh["notices"]), fresh
