"""Time `git pull` with shardpy's merge driver against git's built-in text merge.

Run: python bench/gitsync_bench.py [--notes 500] [--runs 3] [--cases builtin,shardpy,sync]

Builds a repository of N notes (frontmatter + body), then two diverging
commits that both touch every note in different places (one edits the first
body lines, the other the last ones; a third of the notes also get a
frontmatter change on one side), so the merge needs a three-way file merge
for every note. The same `git pull` (a real merge, from a bare repository)
is timed in two clones of the same history:

* ``builtin``: no attributes, git's own text merge (the reference);
* ``shardpy``: after ``shardpy git setup``: git runs the driver once per note;
* ``sync``: the same vault set up the same way, pulled with
  ``shardpy sync --no-push`` (fetch, then git's merge with every note merged
  by the driver's rules inside the sync process, then the commit).

``--cases`` picks which (``builtin,sync`` skips the slow per-file driver).

Both merges must be clean and give the same notes where git's merge is
clean (checked). Besides the medians, each case's CPU beside the reference's run
by run and the median of those per-run ratios (the figure a loaded machine moves
least: the reference alone varies by half between runs). Also printed: one
``shardpy merge-file`` call against one ``git merge-file`` call and an empty
``python -c pass`` (the start-up floor the driver pays per file).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.childenv import child_env

PY = sys.executable


def git(cwd: Path, *args: str, env: dict[str, str]) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"git {' '.join(args)} failed: {done.stdout}{done.stderr}")
    return done.stdout


def note(i: int) -> list[str]:
    head = ["---\n", f"title: Note {i}\n", "status: draft\n", f"tags: [t{i % 7}, bench]\n", "---\n"]
    body = [f"# Note {i}\n", "\n"] + [f"Line {k} of note {i}: some words about things.\n" for k in range(30)]
    return head + body


def edit(lines: list[str], i: int, side: str) -> list[str]:
    out = list(lines)
    if side == "a":
        out[7] = f"Line 0 of note {i}: edited on machine A.\n"
        if i % 3 == 0:
            out[2] = "status: done\n"
    else:
        out[-2] = f"Line 28 of note {i}: edited on machine B.\n"
    return out


def write(root: Path, n: int, side: str | None) -> None:
    for i in range(n):
        lines = note(i) if side is None else edit(note(i), i, side)
        (root / f"notes/n{i:04}.md").write_text("".join(lines), encoding="utf-8")


STATE = (
    '{"files": {}, "install_date": "2026-01-01T00:00:00Z", "modules": {}, '
    '"shard": "bench", "source": "local", "version": "1.0.0"}\n'
)


def vault_files(seed: Path) -> None:
    """What makes the repository a set-up vault (unchanged by both sides: never merged)."""
    from shardpy.gitsync.setup import ATTRIBUTES, IGNORES, with_block

    (seed / ".shardmind").mkdir()
    (seed / ".shardmind/state.json").write_text(STATE, encoding="utf-8")
    (seed / ".gitattributes").write_text(with_block(None, ATTRIBUTES), encoding="utf-8")
    (seed / ".gitignore").write_text(with_block(None, IGNORES), encoding="utf-8")


def build(tmp: Path, n: int, env: dict[str, str]) -> tuple[Path, str, str]:
    """(bare repository, commit of A, commit of B): A pushed to main, B a commit on top of the base."""
    bare = tmp / "hub.git"
    git(tmp, "init", "--quiet", "--bare", str(bare), env=env)
    seed = tmp / "seed"
    (seed / "notes").mkdir(parents=True)
    git(seed, "init", "--quiet", env=env)
    vault_files(seed)
    write(seed, n, None)
    git(seed, "add", "-A", env=env)
    git(seed, "commit", "--quiet", "-m", "base", env=env)
    base = git(seed, "rev-parse", "HEAD", env=env).strip()
    write(seed, n, "a")
    git(seed, "commit", "--quiet", "-am", "A", env=env)
    a = git(seed, "rev-parse", "HEAD", env=env).strip()
    git(seed, "push", "--quiet", str(bare), "HEAD:refs/heads/main", env=env)
    git(seed, "checkout", "--quiet", base, env=env)
    write(seed, n, "b")
    git(seed, "commit", "--quiet", "-am", "B", env=env)
    b = git(seed, "rev-parse", "HEAD", env=env).strip()
    git(seed, "push", "--quiet", str(bare), f"{b}:refs/heads/b", env=env)
    return bare, a, b


def clone(tmp: Path, bare: Path, name: str, env: dict[str, str], *, driver: bool) -> Path:
    dest = tmp / name
    git(tmp, "clone", "--quiet", str(bare), str(dest), env=env)
    git(dest, "fetch", "--quiet", "origin", "b", env=env)
    if driver:
        # What `shardpy git setup` registers in git's config (the attributes are committed).
        from shardpy.gitsync.setup import DRIVER_TITLE, driver_command

        git(dest, "config", "merge.shardpy.name", DRIVER_TITLE, env=env)
        git(dest, "config", "merge.shardpy.driver", driver_command(PY), env=env)
    return dest


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_pull(repo: Path, b: str, env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of git and every driver it ran): CPU is the figure a busy machine keeps."""
    git(repo, "checkout", "--quiet", "-B", "work", b, env=env)
    c0, t0 = _cpu(), time.perf_counter()
    git(repo, "pull", "--quiet", "--no-rebase", "--no-edit", "origin", "main", env=env)
    return time.perf_counter() - t0, _cpu() - c0


def timed_sync(repo: Path, b: str, env: dict[str, str]) -> tuple[float, float]:
    """``shardpy sync --no-push`` on main reset to B (what `git pull` does, as sync does it)."""
    git(repo, "checkout", "--quiet", "-B", "main", b, env=env)
    c0, t0 = _cpu(), time.perf_counter()
    done = subprocess.run(
        [PY, "-m", "shardpy", "sync", "--no-push", "--json"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    report = json.loads(done.stdout)
    if done.returncode != 0 or not report["remotes"][0]["merged"] or report["remotes"][0]["conflicts"]:
        raise SystemExit(f"shardpy sync did not merge cleanly: {done.stdout}{done.stderr}")
    return wall, cpu


def tree(repo: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((repo / "notes").iterdir())}


def startup(tmp: Path, env: dict[str, str], runs: int) -> dict[str, tuple[float, float]]:
    (tmp / "o").write_text("---\ntitle: x\n---\na\nb\nc\n")
    (tmp / "b").write_text("---\ntitle: x\n---\nA\nb\nc\n")
    (tmp / "t").write_text("---\ntitle: x\n---\na\nb\nC\n")
    commands = {
        "python -c pass": [PY, "-c", "pass"],
        "git merge-file -p": ["git", "merge-file", "-p", "b", "o", "t"],
        "shardpy merge-file": [PY, "-m", "shardpy", "merge-file", "o", "b", "t", "n.md"],
    }
    out = {}
    for label, argv in commands.items():
        walls, cpus = [], []
        for _ in range(runs):
            c0, t0 = _cpu(), time.perf_counter()
            subprocess.run(argv, cwd=tmp, env=env, capture_output=True, check=False)
            walls.append(time.perf_counter() - t0)
            cpus.append(_cpu() - c0)
        out[label] = (statistics.median(walls), statistics.median(cpus))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--notes", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default="builtin,shardpy,sync", help="comma-separated: builtin,shardpy,sync")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gitsync-bench-"))
    home = tmp / "home"
    home.mkdir()
    cfg = home / "gitconfig"
    cfg.write_text(
        "[user]\n\tname = Bench\n\temail = bench@example.invalid\n[init]\n\tdefaultBranch = main\n"
    )
    env = child_env(HOME=str(home), GIT_CONFIG_GLOBAL=str(cfg), GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(Path(__file__).resolve().parent.parent), env.get("PYTHONPATH")) if p
    )
    try:
        bare, _a, b = build(tmp, args.notes, env)
        cases = args.cases.split(",")
        clones = {
            "builtin": clone(tmp, bare, "builtin", env, driver=False),
            "shardpy": clone(tmp, bare, "shardpy", env, driver=True),
            "sync": clone(tmp, bare, "sync", env, driver=True),
        }
        timers = {"builtin": timed_pull, "shardpy": timed_pull, "sync": timed_sync}
        labels = {
            "builtin": "git pull, git's built-in text merge",
            "shardpy": "git pull, shardpy driver per file",
            "sync": "shardpy sync --no-push (in-process merge)",
        }
        times: dict[str, list[tuple[float, float]]] = {c: [] for c in cases}
        for _ in range(args.runs):
            for case in cases:
                times[case].append(timers[case](clones[case], b, env))
        print(f"merging {args.notes} notes changed on both sides (median of {args.runs}):")
        ref = {k: statistics.median(t[k] for t in times["builtin"]) for k in (0, 1)}
        for case in cases:
            for what, k in (("wall", 0), ("CPU", 1)):
                d = statistics.median(t[k] for t in times[case])
                print(f"  {labels[case]:<44} {what:>4} {d:8.3f} s = {d / ref[k]:6.1f}x", end="")
                print(f" ({d / args.notes * 1000:.1f} ms/note)")
        for case in cases[1:]:
            # Each run times the reference right before the case: the ratio within a run is
            # what a loaded machine changes least (the reference alone varies by half).
            pairs = list(zip(times[case], times["builtin"], strict=True))
            paired = statistics.median(t[1] / r[1] for t, r in pairs)
            runs = ", ".join(f"{t[1]:.3f}/{r[1]:.3f}" for t, r in pairs)
            print(f"  {case} / builtin CPU, run by run: {runs}; median of the runs' ratios {paired:.2f}x")
        for case in cases[1:]:
            same = tree(clones[case]) == tree(clones["builtin"])
            print(f"  identical merged notes ({case} vs builtin): {same}")
        for label, (wall, cpu) in startup(tmp, env, max(args.runs, 5)).items():
            print(f"  one {label:<20}: {wall * 1000:8.1f} ms wall, {cpu * 1000:6.1f} ms CPU")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
