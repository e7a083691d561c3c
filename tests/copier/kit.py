"""Copier templates as git repositories with tags, and copier itself as the
reference (its Python API, in-process)."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.shardkit import files_only, tree_snapshot
from tests.sources.support import GIT_ENV

ANSWERS_TEMPLATE = "{{ _copier_conf.answers_file }}.jinja"
ANSWERS_BODY = "# Changes here will be overwritten by Copier\n{{ _copier_answers|to_nice_yaml -}}\n"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    done = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


@dataclass(frozen=True)
class Link:
    """A symbolic link in a template version (its link text)."""

    target: str


@dataclass(frozen=True)
class Executable:
    """A file written with the executable bit."""

    text: str


Entry = str | Link | Executable | None


def build_template(root: Path, versions: Mapping[str, Mapping[str, Entry]]) -> Path:
    """A git repository with one commit and tag per version; each version's
    mapping adds (str, :class:`Link`, :class:`Executable`) or removes (None)
    files on top of the previous one."""
    root.mkdir(parents=True)
    git(root, "init", "--quiet", "-b", "main")
    for tag, files in versions.items():
        for rel, text in files.items():
            path = root / rel
            if text is None or path.is_symlink() or (isinstance(text, Link) and path.exists()):
                path.unlink()
            if text is None:
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(text, Link):
                path.symlink_to(text.target)
            elif isinstance(text, Executable):
                path.write_text(text.text)
                path.chmod(0o755)
            else:
                path.write_text(text)
        git(root, "add", "-A")
        git(root, "commit", "--quiet", "--allow-empty", "-m", f"release {tag}")
        git(root, "tag", tag)
    return root


def copier_copy(src: Path, dst: Path, tag: str, data: Mapping[str, Any] | None = None, **kw: Any) -> None:
    from copier import run_copy

    run_copy(str(src), dst, vcs_ref=tag, data=dict(data or {}), defaults=True, quiet=True, **kw)


def copier_update(dst: Path, tag: str, **kw: Any) -> None:
    from copier import run_update

    run_update(dst, vcs_ref=tag, defaults=True, overwrite=True, quiet=True, skip_answered=True, **kw)


def snapshot(root: Path) -> dict[str, str]:
    """path -> sha256 of every file, shardpy's and git's own folders left out."""
    return files_only(tree_snapshot(root, skip=(".shardmind", ".git")))


def git_project(root: Path) -> None:
    """Make ``root`` a committed git repository (what copier update needs)."""
    git(root, "init", "--quiet", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "--quiet", "-m", "project")


def copy_tree(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst
