"""shardpy and copier side by side on the same copier template: install
(`copier copy`) and update (`copier update`) as whole processes, in one run.

    python bench/copier_bench.py [--files 60] [--runs 3] [--compare DIR]

The template is a git repository with tags v1.0.0 and v2.0.0 (a third of
its files changed upstream); the project has a fifth of its files edited by
the user in other places than upstream changed, so both tools merge cleanly.
copier needs the project committed in git; shardpy does not, but gets the
same committed tree. Prints the median wall time of each and the ratio
shardpy / copier (goal for update: <= 0.3). Each round starts with an empty
shardpy cache (SHARDPY_CACHE_DIR), so the update finds only what that
round's install left there, as on a user's machine. --compare DIR times
another checkout too (PYTHONPATH=DIR), interleaved in the same rounds.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from childenv import checkout_env, child_env

BIN = Path(sys.executable).parent
GIT = {
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}


def git(cwd: Path, *args: str, env: dict[str, str]) -> None:
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def body(i: int, version: int) -> str:
    lines = [f"# {{{{ project_name }}}} file {i}", ""]
    lines += [f"line {k} of file {i}" for k in range(40)]
    if version > 1 and i % 3 == 0:
        lines[-1] += " (changed upstream in v2)"
    return "\n".join(lines) + "\n"


def build_template(root: Path, n_files: int, env: dict[str, str]) -> None:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main", env=env)
    (root / "copier.yml").write_text("project_name:\n  type: str\n  default: bench\n_subdirectory: t\n")
    answers = root / "t" / "{{ _copier_conf.answers_file }}.jinja"
    answers.parent.mkdir()
    answers.write_text("{{ _copier_answers|to_nice_yaml -}}\n")
    for version in (1, 2):
        for i in range(n_files):
            path = root / "t" / f"dir{i % 6}" / f"f{i}.md.jinja"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(body(i, version))
        git(root, "add", "-A", env=env)
        git(root, "commit", "-q", "-m", f"v{version}", env=env)
        git(root, "tag", f"v{version}.0.0", env=env)


def edit(project: Path, n_files: int) -> None:
    for i in range(0, n_files, 5):
        path = project / f"dir{i % 6}" / f"f{i}.md"
        path.write_text(path.read_text().replace("line 1 of", "line 1 (edited by me) of"))


def timed(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall time and CPU time (user + system, the process and its children:
    git included) of one command; CPU is the fairer figure on a shared machine."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    output, _ = proc.communicate()
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{output}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def shardpy_side(
    work: Path, template: Path, n_files: int, env: dict[str, str], label: str
) -> tuple[Path, dict[str, tuple[float, float]]]:
    """Install v1 into a fresh project, with a cache of its own."""
    dst = work / label / "proj"
    dst.parent.mkdir()
    env = {**env, "SHARDPY_CACHE_DIR": str(work / label / "cache")}
    out = {
        "install": timed(
            [str(BIN / "shardpy"), "install", f"{template}@v1.0.0", str(dst), "--defaults"], work, env
        )
    }
    return dst, out


def project_in_git(project: Path, n_files: int, env: dict[str, str]) -> None:
    edit(project, n_files)
    git(project, "init", "-q", "-b", "main", env=env)
    (project / ".gitignore").write_text(".shardmind/\n")
    git(project, "add", "-A", env=env)
    git(project, "commit", "-q", "-m", "project", env=env)


def files_of(project: Path) -> dict[Path, bytes]:
    return {
        p.relative_to(project): p.read_bytes() for p in project.rglob("*.md") if ".shardmind" not in p.parts
    }


def one_round(
    work: Path, template: Path, n_files: int, env: dict[str, str], variants: dict[str, dict[str, str]]
) -> dict[str, tuple[float, float]]:
    out: dict[str, tuple[float, float]] = {}
    copier_dst = work / "c" / "proj"
    copier_dst.parent.mkdir()
    out["copier copy"] = timed(
        [
            str(BIN / "copier"),
            "copy",
            "--defaults",
            "--quiet",
            "--vcs-ref",
            "v1.0.0",
            str(template),
            str(copier_dst),
        ],
        work,
        env,
    )
    projects: dict[str, Path] = {}
    for n, (label, venv) in enumerate(variants.items()):
        projects[label], times = shardpy_side(work, template, n_files, venv, f"s{n}")
        out[f"{label} install"] = times["install"]
    for project in (copier_dst, *projects.values()):
        project_in_git(project, n_files, env)
    out["copier update"] = timed(
        [str(BIN / "copier"), "update", "--defaults", "--quiet", "--skip-answered", "--vcs-ref", "v2.0.0"],
        copier_dst,
        env,
    )
    theirs = files_of(copier_dst)
    for n, (label, venv) in enumerate(variants.items()):
        venv = {**venv, "SHARDPY_CACHE_DIR": str(work / f"s{n}" / "cache")}
        out[f"{label} update"] = timed(
            [str(BIN / "shardpy"), "update", "--yes", "--release", "v2.0.0"], projects[label], venv
        )
        mine = files_of(projects[label])
        if mine != theirs:
            diff = sorted(str(p) for p in set(mine) | set(theirs) if mine.get(p) != theirs.get(p))
            raise SystemExit(f"{label} and copier produced different files: {diff[:5]}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=60)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--compare", type=Path, help="another checkout, timed in the same rounds")
    args = parser.parse_args()
    env = {**child_env(), **GIT}
    variants = {"shardpy": env}
    if args.compare is not None:
        variants["compare"] = checkout_env(env, args.compare)
    with tempfile.TemporaryDirectory(prefix="copier-bench-") as tmp:
        root = Path(tmp)
        template = root / "template"
        build_template(template, args.files, env)
        rounds: list[dict[str, tuple[float, float]]] = []
        for n in range(args.runs):
            work = root / f"run{n}"
            work.mkdir()
            rounds.append(one_round(work, template, args.files, env, variants))
            shutil.rmtree(work)
    wall = {k: statistics.median(r[k][0] for r in rounds) for k in rounds[0]}
    cpu = {k: statistics.median(r[k][1] for r in rounds) for k in rounds[0]}
    print(f"template: {args.files} files, {args.runs} run(s); median per process: wall ms / cpu ms")
    if args.compare is not None:
        print(f"  compare = {args.compare}")
    pairs = [
        (f"{label} {op}", f"copier {cmd}")
        for op, cmd in (("install", "copy"), ("update", "update"))
        for label in variants
    ]
    for left, right in pairs:
        print(
            f"  {left:16} {wall[left] * 1000:6.0f} / {cpu[left] * 1000:5.0f}   "
            f"{right:14} {wall[right] * 1000:6.0f} / {cpu[right] * 1000:5.0f}   "
            f"ratio wall {wall[left] / wall[right]:.2f}x, cpu {cpu[left] / cpu[right]:.2f}x"
        )
    print("  (update goal: shardpy <= 0.3x copier; the outputs were checked equal)")


if __name__ == "__main__":
    main()
