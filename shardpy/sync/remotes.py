"""``sync add-remote``, ``remove-remote`` and ``init-seed``: the machines a vault syncs with.

Remotes are plain git remotes (``git remote -v`` shows them); a seed is a bare
repository every machine pushes to and fetches from (docs/GIT.md).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from shardpy.errors import ShardpyError
from shardpy.gitsync.repo import git, open_repo
from shardpy.sync.plan import configured_remotes

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def _check_name(name: str) -> None:
    if not _NAME.fullmatch(name) or name.endswith((".", ".lock")):
        raise ShardpyError(
            "SYNC_REMOTE_NAME",
            f"{name!r} is not a usable remote name",
            "Use letters, digits, '.', '_' or '-' (up to 64), starting with a letter or digit.",
        )


def add_remote(vault: Path, name: str, url: str) -> dict[str, Any]:
    repo = open_repo(vault)
    _check_name(name)
    if url.startswith("-"):
        raise ShardpyError("SYNC_REMOTE_URL", f"{url!r} is not a repository URL", "Give a path or a git URL.")
    if name in configured_remotes(repo):
        current = git(["remote", "get-url", name], repo.top).stdout.strip()
        if current == url:
            return {"remote": name, "url": url, "changed": False}
        raise ShardpyError(
            "SYNC_REMOTE_EXISTS",
            f"The remote {name!r} already points at {current}",
            f"Remove it first (`shardpy sync remove-remote {name}`) or pick another name.",
        )
    git(["remote", "add", "--", name, url], repo.top)
    return {"remote": name, "url": url, "changed": True}


def remove_remote(vault: Path, name: str) -> dict[str, Any]:
    from shardpy.sync.records import SECTION

    repo = open_repo(vault)
    if name not in configured_remotes(repo):
        raise ShardpyError(
            "SYNC_REMOTE_UNKNOWN",
            f"No remote named {name!r} in the vault's repository",
            "See `git remote -v`.",
        )
    git(["remote", "remove", "--", name], repo.top)
    git(["config", "--local", "--remove-section", f"{SECTION}.{name}"], repo.top, check=False)
    return {"remote": name, "changed": True}


def _is_bare(path: Path) -> bool:
    done = git(["rev-parse", "--is-bare-repository"], path, check=False)
    return done.returncode == 0 and done.stdout.strip() == "true"


def init_seed(path: Path, *, branch: str = "main", object_format: str = "sha1") -> dict[str, Any]:
    """A bare repository every machine can push to (idempotent: an existing seed is kept)."""
    path = path.expanduser().resolve()
    if path.exists() and _is_bare(path) and (path / "HEAD").is_file():
        return {"seed": str(path), "changed": False}
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ShardpyError(
            "SYNC_SEED_PATH",
            f"{path} exists and is not an empty folder or a bare repository",
            "Pick a new folder for the seed.",
            path=str(path),
        )
    made = ["--quiet", "--bare", f"--initial-branch={branch}", f"--object-format={object_format}"]
    git(["init", *made, str(path)], path.parent if path.parent.is_dir() else Path.cwd())
    # History is never rewritten on the seed: no machine can force a push or delete the branch.
    for key, value in (("receive.denyNonFastForwards", "true"), ("receive.denyDeletes", "true")):
        git(["config", key, value], path)
    return {"seed": str(path), "changed": True}
