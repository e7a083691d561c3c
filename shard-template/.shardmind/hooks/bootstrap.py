"""bootstrap: make the new vault a git repository and, when asked for and
available, give it a QMD search index. Runs after install and adopt, and
again on update when shard.yaml's bootstrap fingerprint changes.

- git: `git init` when the vault is not a repository. Never commits — what
  goes into the first commit is the user's call. A vault inside another
  repository is left alone (no nested repository). Then `shardpy git setup`
  registers shardpy as the repository's merge driver (notes merged by
  frontmatter key, the vault's records entry by entry; docs/GIT.md): run
  with the Python that runs this hook when it can import shardpy, else the
  `shardpy` on PATH, else skipped with a hint. The vault ships the
  `.gitattributes` and `.gitignore` entries it would write, so it only
  changes git's own config.
- QMD: when `qmd_enabled` is true and `qmd` is on PATH, create the index
  named after the vault folder (or vault-manifest.json's `qmd_index`),
  copy `.obsidian/app.json` → userIgnoreFilters into the index's ignore
  list, and index the notes once. Otherwise print how to do it by hand.
- search (before QMD): build shardpy's own index (`shardpy index`), which
  `shardpy search` and the PostToolUse hook's one-note refresh use; it lives
  in the user cache folder.

It changes no file of the vault: git's own `.git/`, QMD's files under the
user's config and cache directories and shardpy's index under the user cache
folder are the only things it creates. Exit
status 1 means a step failed; the engine reports that as a warning.
"""

from __future__ import annotations

import sys

sys.dont_write_bytecode = True

import os  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _hooklib import (  # noqa: E402
    HookError,
    ignore_filters,
    load_context,
    qmd_ignore_globs,
    qmd_index,
    set_collection_ignore,
    values,
    vault_root,
)

GIT_TIMEOUT = 30
QMD_TIMEOUT = 90
SEARCH_TIMEOUT = 120


def run(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=str(cwd),
        capture_output=True,
        text=True,
        encoding="utf-8",
        errors="replace",
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def setup_git(root: Path) -> bool:
    git = shutil.which("git")
    if git is None:
        print("git: not found on PATH — install git, then run `git init` in the vault to keep its history.")
        return True
    probe = run([git, "rev-parse", "--show-toplevel"], root, GIT_TIMEOUT)
    if probe.returncode == 0:
        top = Path(probe.stdout.strip())
        try:
            same = top.resolve() == root.resolve()
        except OSError:
            same = False
        if same:
            print("git: the vault is already a repository.")
        else:
            print(f"git: the vault is inside the repository at {top}; not creating a nested one.")
        return setup_driver(root)
    done = run([git, "init", "--quiet"], root, GIT_TIMEOUT)
    if done.returncode != 0:
        print(f"git: `git init` failed: {done.stderr.strip() or done.stdout.strip()}")
        return False
    print("git: initialised a repository (nothing committed — review and make the first commit yourself).")
    return setup_driver(root)


def shardpy_command() -> list[str] | None:
    """How to run shardpy from here: this Python if it has shardpy, else PATH's."""
    import importlib.util

    if importlib.util.find_spec("shardpy") is not None:
        return [sys.executable, "-m", "shardpy"]
    found = shutil.which("shardpy")
    return [found] if found else None


def setup_driver(root: Path) -> bool:
    """`shardpy git setup`: git merges notes and vault records with shardpy (never fatal)."""
    command = shardpy_command()
    if command is None:
        print(
            "git: shardpy is not on PATH; run `shardpy git setup` in the vault to merge notes with shardpy."
        )
        return True
    done = run([*command, "git", "setup", str(root), "--json"], root, GIT_TIMEOUT)
    try:
        import json

        report = json.loads(done.stdout)
    except ValueError:
        report = None
    if done.returncode != 0 or not isinstance(report, dict) or "error" in report:
        error = report.get("error", {}) if isinstance(report, dict) else {}
        why = error.get("message") if isinstance(error, dict) else None
        reason = why or done.stderr.strip() or "no output"
        print(f"git: `shardpy git setup` did not run ({reason}); run it by hand.")
        return True
    if report.get("changed"):
        print("git: shardpy registered as the merge driver (`shardpy git setup`; see docs/GIT.md).")
    else:
        print("git: shardpy's merge driver is already set up.")
    return True


def manual_qmd_steps(index: str) -> str:
    return (
        f"  qmd --index {index} collection add . --name {index} --mask '**/*.md'\n"
        f"  qmd --index {index} update\n"
        f"  qmd --index {index} embed        # builds the vectors; downloads models on first run"
    )


def qmd_config_file(index: str) -> Path:
    base = os.environ.get("XDG_CONFIG_HOME")
    return (Path(base) if base else Path.home() / ".config") / "qmd" / f"{index}.yml"


ENABLE_LATER = "  (then set qmd_enabled: true in shard-values.yaml and run `shardpy update`)\n"


def setup_qmd(root: Path, vals: dict[str, Any]) -> bool:
    index = qmd_index(root)
    enabled = vals.get("qmd_enabled", True)
    off = enabled is False or str(enabled).lower() == "false"
    qmd = shutil.which("qmd")
    if qmd is not None and off:
        print(
            "qmd: disabled (qmd_enabled: false). To enable later, set qmd_enabled: true in "
            "shard-values.yaml, run `shardpy update`, then:\n" + manual_qmd_steps(index)
        )
        return True
    if qmd is None:  # qmd_enabled's default is false here: the install found no qmd (issue 29)
        print(
            "qmd: not installed; `shardpy search` finds notes by words and by meaning. For QMD's "
            "re-ranked search too:\n"
            "  npm install -g @tobilu/qmd\n" + (ENABLE_LATER if off else "") + manual_qmd_steps(index)
        )
        return True
    ok = True
    added = run(
        [qmd, "--index", index, "collection", "add", ".", "--name", index, "--mask", "**/*.md"],
        root,
        QMD_TIMEOUT,
    )
    output = added.stdout + added.stderr
    if added.returncode != 0 and "already exists" not in output.lower():
        print(f"qmd: creating the index failed: {output.strip()}")
        return False
    globs = qmd_ignore_globs(ignore_filters(root))
    config = qmd_config_file(index)
    if globs:
        try:
            text = config.read_text(encoding="utf-8")
        except OSError:
            text = None
        updated = set_collection_ignore(text, index, globs) if text is not None else None
        if updated is None:
            print(
                f"qmd: could not find collection {index!r} in {config}; "
                f"add these to its ignore list by hand: {', '.join(globs)}"
            )
            ok = False
        elif updated != text:
            config.write_text(updated, encoding="utf-8")
            print(f"qmd: ignore list synced from .obsidian/app.json ({len(globs)} patterns).")
    context = _manifest_context(root)
    if context:
        run([qmd, "--index", index, "context", "add", f"qmd://{index}", context], root, QMD_TIMEOUT)
    updated_index = run([qmd, "--index", index, "update"], root, QMD_TIMEOUT)
    if updated_index.returncode != 0:
        print(f"qmd: indexing failed: {(updated_index.stderr or updated_index.stdout).strip()}")
        return False
    print(
        f"qmd: index {index!r} ready for keyword search. Run `qmd --index {index} embed` once for "
        "semantic search (downloads the models on first run)."
    )
    return ok


def setup_search(root: Path) -> bool:
    """Build shardpy's full-text index of the vault (kept in the user cache folder, not the vault)."""
    shardpy = shardpy_command()
    if shardpy is None:
        print("search: shardpy not found; run `shardpy index` in the vault to enable `shardpy search`.")
        return True
    done = run([*shardpy, "index", str(root), "--json"], root, SEARCH_TIMEOUT)
    if done.returncode != 0:
        print(f"search: indexing failed: {(done.stdout or done.stderr).strip()[:500]}")
        return False
    try:
        import json

        report = json.loads(done.stdout)
        summary = f"{report['total_notes']} notes, {report['total_chunks']} sections"
    except (ValueError, KeyError, TypeError):
        summary = "done"
    print(f'search: full-text index built ({summary}); try `shardpy search "terms"`.')
    return True


def _manifest_context(root: Path) -> str:
    import json

    try:
        data = json.loads((root / "vault-manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    value = data.get("qmd_context") if isinstance(data, dict) else None
    return value.strip() if isinstance(value, str) else ""


def main() -> int:
    try:
        ctx = load_context()
        root = vault_root(ctx)
    except HookError as exc:
        print(f"bootstrap: {exc}", file=sys.stderr)
        return 1
    ok = True
    steps: list[Callable[[], bool]] = [
        lambda: setup_git(root),
        # shardpy's index before QMD's: built while no QMD index is configured, it starts no
        # detached `qmd update` / `qmd embed` of its own (setup_qmd runs the update; embed
        # downloads QMD's models and stays the user's call, as setup_qmd says).
        lambda: setup_search(root),
        lambda: setup_qmd(root, values(ctx)),
    ]
    for step in steps:
        try:
            ok = step() and ok
        except (OSError, subprocess.SubprocessError) as exc:
            print(f"bootstrap: a step failed: {exc}", file=sys.stderr)
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
