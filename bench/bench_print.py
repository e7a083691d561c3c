"""How long printing an update plan takes when the output is a pipe or a file.

    python bench/bench_print.py [--rows 300] [--runs 7] [--compare DIR]

Each run is a fresh child process (as a command would be) that builds an
update result of --rows file actions (long, deep paths; merges with stats;
moves), points stdout at a file, and times ``render.update_result`` — the
first print of the process, so rich's import is counted when it is used.
Also reported: lines cut with "…" and paths missing from the output (both
must be 0: a log keeps every path whole). The reference is the raw floor:
the same process writing one line per row with ``sys.stdout.write``. Wall
and CPU time of the print are both shown (CPU is steadier on a busy machine).
--compare DIR times another checkout (e.g. the code before a change) in
the same run. --terminal WIDTH prints as on a terminal that wide (a rich
console forced onto the file, colours on): a plan that fits is coloured
columns, a wider one rich's folding layout. Target (issue 14): well under
100 ms for hundreds of rows.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from childenv import child_env

CHILD = r"""
import json, os, sys, tempfile, time
from shardpy.flows.update import UpdateResult
from shardpy.plan.update import FileAction, Outcome

rows = int(sys.argv[1])
kinds = [("update", "shard changed it; you did not"), ("merge", "merged your edits with the shard's"),
         ("add", "new in this release"), ("delete", "removed from the shard; unmodified"),
         ("keep", "you changed it; the shard did not")]
actions = []
for i in range(rows):
    action, reason = kinds[i % len(kinds)]
    path = f"reference/architecture/services/component-{i:04}/notes/Design decisions, trade-offs {i}.md"
    actions.append(FileAction(path, action, reason, "infrastructure", "reference",
                              {"apply": Outcome("apply", write=b"x")}, "apply",
                              from_path=f"old/place/{i}.md" if i % 7 == 0 else None))
result = UpdateResult(vault=tempfile.gettempdir(), shard="acme/big", from_version="6.0.0", to_version="8.3.5",
                      actions=actions)
out = tempfile.TemporaryFile("w+", encoding="utf-8")
real = sys.stdout
sys.stdout = out
start, cpu = time.perf_counter(), time.process_time()
if sys.argv[2] == "floor":
    for a in actions:
        sys.stdout.write(f"{a.action}  {a.path}  {a.content_class}  {a.reason}\n")
    sys.stdout.flush()
else:
    from shardpy.cli import render
    if len(sys.argv) > 3:  # a terminal this wide: a rich console forced onto the file
        from rich.console import Console
        term = Console(file=out, force_terminal=True, width=int(sys.argv[3]), color_system="truecolor",
                       highlight=False, soft_wrap=True)
        render.console = lambda: term
        render._on_terminal = lambda: True
    render.update_result(result, verbose=False)
took, cpu = time.perf_counter() - start, time.process_time() - cpu
sys.stdout = real
out.seek(0)
text = out.read()
if len(sys.argv) > 3:  # colours between the words; a path a terminal wraps is still one line
    import re
    text = re.sub(r"\x1b\[[0-9;]*m", "", text)
missing = sum(1 for a in actions if a.path not in text)
if len(sys.argv) > 3 and missing and max(map(len, text.splitlines())) <= int(sys.argv[3]):
    missing = -1  # rich's layout folded the cells to the width: a path spans lines, whole
print(json.dumps({"ms": took * 1000, "cpu_ms": cpu * 1000, "cut": text.count("\u2026"), "missing": missing}))
"""


def run(rows: int, mode: str, env: dict[str, str], terminal: int | None = None) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(rows), mode, *([str(terminal)] if terminal else [])],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        cwd=tempfile.gettempdir(),  # not the checkout: it would shadow the one PYTHONPATH names
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    result: dict[str, float] = json.loads(done.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rows", type=int, default=300)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--compare", type=Path)
    parser.add_argument(
        "--terminal",
        type=int,
        metavar="WIDTH",
        help="print as on a terminal this many columns wide (colours; rich's layout when the table is wider)",
    )
    args = parser.parse_args()
    root = Path(__file__).resolve().parent.parent
    variants = {"this checkout": child_env(PYTHONPATH=str(root), NO_COLOR="1")}
    if args.compare is not None:
        variants[f"compare ({args.compare})"] = child_env(PYTHONPATH=str(args.compare), NO_COLOR="1")
    samples: dict[str, list[dict[str, float]]] = {"raw floor (sys.stdout.write)": []}
    for _ in range(args.runs):
        samples["raw floor (sys.stdout.write)"].append(run(args.rows, "floor", variants["this checkout"]))
        for label, env in variants.items():
            samples.setdefault(label, []).append(run(args.rows, "render", env, args.terminal))
    where = f"as on a {args.terminal}-column terminal" if args.terminal else "to a file"
    print(f"update plan of {args.rows} rows printed {where}: median of {args.runs} fresh processes")
    for label, got in samples.items():
        ms = statistics.median(s["ms"] for s in got)
        cpu = statistics.median(s["cpu_ms"] for s in got)
        print(
            f"  {label:<30} {ms:7.1f} ms wall {cpu:7.1f} ms CPU   lines cut with '…': {int(got[0]['cut'])}, "
            f"paths missing: {'none (folded)' if got[0]['missing'] < 0 else int(got[0]['missing'])}"
        )


if __name__ == "__main__":
    main()
