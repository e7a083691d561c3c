"""Update speed on a realistic vault: a 250-file shard (20 files edited by
the user, 60 changed upstream), 10,000 user notes; plus status on it.

    python bench/bench_update.py [--runs 5]

Prints the median wall time of whole `shardpy update --yes` processes
(target: under 2 s) and of `shardpy status` (target: under 300 ms).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from childenv import child_env

N_FILES = 250
N_EDITED = 20
N_UPSTREAM = 60
N_NOTES = 10_000
ENV = child_env()


def note(i: int, version: int, upstream: bool) -> str:
    lines = [f"# Note {i}", "", "---", f"intro of note {i}" + (f" (v{version})" if upstream else ""), ""]
    lines += [f"line {k} of note {i}" for k in range(30)]
    return "\n".join(lines) + "\n"


def write_shard(src: Path, version: int) -> None:
    if src.exists():
        shutil.rmtree(src)
    (src / ".shardmind").mkdir(parents=True)
    (src / ".shardmind/shard.yaml").write_text(
        f"apiVersion: v1\nnamespace: bench\nname: vault\nversion: {version}.0.0\n"
    )
    (src / ".shardmind/shard-schema.yaml").write_text(
        "schema_version: 1\nvalues:\n  user_name: {type: string, default: '', group: g}\n"
        "groups: [{id: g, label: G}]\n"
    )
    for i in range(N_FILES):
        folder = ["brain", "work", "reference", ".claude/commands", "templates"][i % 5]
        path = src / folder / f"n{i}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note(i, version, version > 1 and i < N_UPSTREAM))
    for i in range(10):
        (src / f".claude/cfg{i}.json.njk").write_text('{"user": "{{ user_name }}", "n": ' + str(i) + "}\n")


def run(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    shardpy = [sys.executable, "-m", "shardpy"]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        src, vault = root / "src", root / "vault"
        write_shard(src, 1)
        subprocess.run(
            [*shardpy, "install", str(src), str(vault), "--defaults"],
            check=True,
            env=ENV,
            stdout=subprocess.DEVNULL,
        )
        folders = ["brain", "work", "reference", ".claude/commands", "templates"]
        for i in range(N_EDITED):
            path = vault / folders[i % 5] / f"n{i}.md"
            path.write_text(path.read_text().replace("line 25 of", "line 25 (edited by me) of"))
        notes = vault / "notes"
        notes.mkdir()
        for i in range(N_NOTES):
            (notes / f"user note {i}.md").write_text(f"# User note {i}\nsee [[n{i % N_FILES}]]\n")
        write_shard(src, 2)
        template = root / "template"
        shutil.copytree(vault, template)
        update_times = []
        for r in range(args.runs):
            work = root / f"run{r}"
            shutil.copytree(template, work)
            update_times.append(run([*shardpy, "update", "--yes"], work))
            if r:
                shutil.rmtree(work)
        status_times = [run([*shardpy, "status"], root / "run0") for _ in range(args.runs)]
    upd, st = statistics.median(update_times), statistics.median(status_times)
    print(
        f"update: {N_FILES}-file shard, {N_EDITED} edited, {N_UPSTREAM} changed upstream, "
        f"{N_NOTES} user notes"
    )
    print(f"  update --yes  median {upd * 1000:7.0f} ms over {args.runs} runs (target < 2000 ms)")
    print(f"  status        median {st * 1000:7.0f} ms over {args.runs} runs (target < 300 ms)")


if __name__ == "__main__":
    main()
