"""Time merge3 on a 1 MB note: a handful of edits per side, then many scattered edits.

Run: python bench/merge_bench.py [--runs N]
Prints the median wall time of several runs for each scenario.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from shardpy.merge.text import merge3

WORDS = [
    "vault",
    "note",
    "shard",
    "template",
    "memory",
    "agent",
    "daily",
    "project",
    "idea",
    "link",
    "tag",
    "review",
    "summary",
    "decision",
    "context",
    "meeting",
    "follow-up",
    "draft",
    "status",
    "research",
    "archive",
]


def make_note(rng: random.Random, target_bytes: int) -> list[str]:
    """A markdown-like note: headings, paragraphs, bullet lists and blank lines."""
    lines: list[str] = []
    size = 0
    section = 0
    while size < target_bytes:
        if not lines or rng.random() < 0.04:
            section += 1
            line = f"## Section {section}: {' '.join(rng.choices(WORDS, k=3))}\n"
        elif rng.random() < 0.15:
            line = "\n"
        elif rng.random() < 0.4:
            line = f"- [[{rng.choice(WORDS)} {rng.randrange(10_000)}]] {' '.join(rng.choices(WORDS, k=6))}\n"
        else:
            line = " ".join(rng.choices(WORDS, k=rng.randint(6, 14))).capitalize() + ".\n"
        lines.append(line)
        size += len(line.encode())
    return lines


def edit(rng: random.Random, lines: list[str], count: int, tag: str) -> list[str]:
    out = list(lines)
    for n in range(count):
        k = rng.randrange(len(out))
        op = rng.random()
        if op < 0.4:
            out[k] = f"{tag} edit {n}: {' '.join(rng.choices(WORDS, k=8))}\n"
        elif op < 0.7:
            out.insert(k, f"{tag} insert {n}: {' '.join(rng.choices(WORDS, k=8))}\n")
        else:
            del out[k]
    return out


def timed(base: str, user: str, shard: str, runs: int) -> tuple[float, bool, int]:
    times = []
    result = merge3(base, user, shard)
    for _ in range(runs):
        start = time.perf_counter()
        result = merge3(base, user, shard, shard_label="shard 1.2.0")
        times.append(time.perf_counter() - start)
    return statistics.median(times), result.clean, len(result.conflicts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(20240601)
    base_lines = make_note(rng, 1_000_000)
    base = "".join(base_lines)
    print(f"note: {len(base.encode()) / 1e6:.2f} MB, {len(base_lines)} lines; median of {args.runs} runs")
    for label, edits in (("handful of edits (5 per side)", 5), ("many scattered edits (500 per side)", 500)):
        user = "".join(edit(random.Random(1), base_lines, edits, "user"))
        shard = "".join(edit(random.Random(2), base_lines, edits, "shard"))
        median, clean, conflicts = timed(base, user, shard, args.runs)
        print(f"{label:40s} {median * 1000:8.1f} ms  clean={clean} conflicts={conflicts}")


if __name__ == "__main__":
    main()
