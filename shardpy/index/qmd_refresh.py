"""Keep a vault's QMD index fresh when QMD is used there: ``shardpy index`` starts ``qmd update``
then ``qmd embed`` in a detached child, each bounded in time (issue 29: QMD's vectors went stale
because nothing ever ran ``qmd embed``).

"QMD is used" is the flagship's own rule (``.claude/scripts/vaultlib/qmd.py``, which the bootstrap
hook repeats): ``qmd`` is on PATH and the vault's index exists, i.e. QMD keeps
``$XDG_CONFIG_HOME/qmd/<name>.yml``, where the name is ``vault-manifest.json``'s ``qmd_index``
when pinned, else the vault folder's name as a slug. The child holds a lock (one refresh per index
at a time: a burst of ``index`` runs starts one) and never writes a vault file; its output goes
nowhere. tests/index/test_qmd_refresh.py drives it with a stand-in ``qmd`` on PATH.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

from shardpy.cachedir import cache_dir

TIMEOUT_ENV = "SHARDPY_QMD_REFRESH_TIMEOUT"
TIMEOUT = 900.0  # seconds per step: a first `qmd embed` of a large vault takes minutes
MANIFEST_MAX = 1024 * 1024

# Run by the detached child: take the lock or leave; each step killed at its bound; nothing printed.
_CHILD = """
import fcntl, subprocess, sys
qmd, name, bound, lock, cwd = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4], sys.argv[5]
fh = open(lock, "a")
try:
    fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
except OSError:
    sys.exit(0)
for step in ("update", "embed"):
    try:
        done = subprocess.run([qmd, "--index", name, step], cwd=cwd, timeout=bound,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    except (subprocess.TimeoutExpired, OSError):
        break
    if done.returncode != 0:
        break
"""


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "vault"


def index_name(vault: Path) -> str:
    """The vault's QMD index name (the flagship's rule, tested equal in tests/index/test_qmd_refresh.py)."""
    from shardpy.vault.manifest import read_bounded

    data = read_bounded(vault / "vault-manifest.json", MANIFEST_MAX)
    try:
        manifest = json.loads(data.decode("utf-8")) if data is not None else {}
    except ValueError:
        manifest = {}
    pinned = manifest.get("qmd_index") if isinstance(manifest, dict) else None
    if isinstance(pinned, str) and pinned.strip():
        return _slug(pinned.strip())
    return _slug(Path(os.path.realpath(vault)).name)


def _configured(name: str) -> bool:
    base = os.environ.get("XDG_CONFIG_HOME")
    home = Path(base) if base else Path.home() / ".config"
    return (home / "qmd" / f"{name}.yml").is_file()


def _bound() -> float:
    try:
        return max(1.0, float(os.environ.get(TIMEOUT_ENV, "")))
    except ValueError:
        return TIMEOUT


def start(vault: Path) -> str | None:
    """Start the detached refresh when QMD is used for ``vault``; the index name when it started."""
    qmd = shutil.which("qmd")
    if qmd is None:
        return None
    name = index_name(vault)
    if not _configured(name):
        return None
    import subprocess  # here: the write hook's `shardpy index --only` without QMD never needs it

    lock = cache_dir() / "qmd" / f"{name}.lock"
    try:
        lock.parent.mkdir(parents=True, exist_ok=True)
        subprocess.Popen(
            [sys.executable, "-c", _CHILD, qmd, name, str(_bound()), str(lock), os.path.realpath(vault)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # detached: it outlives `shardpy index` and its terminal
            close_fds=True,
        )
    except OSError:
        return None
    return name
