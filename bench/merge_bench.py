"""Time the merge engine on 1 MB notes.

Run: python bench/merge_bench.py [--runs N]

Prints the median wall time over N runs (default 7) of:
* merge3 on a ~1 MB markdown note (~18k lines) with a handful of edits per side;
* the same note with many scattered edits per side (conflicts included);
* a ~1 MB checklist note made of few distinct lines (the hard case for
  git's diff heuristics: almost every line matches hundreds of others);
* merge_document on the first case with the user's copy in CRLF (decode,
  merge, line-ending restore, encode).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from shardpy.merge.document import merge_document
from shardpy.merge.text import TextMerge, merge3

WORDS = [
    "vault", "note", "shard", "template", "memory", "agent", "daily", "project", "idea", "link", "tag",
    "review", "summary", "decision", "context", "meeting", "follow-up", "draft", "status", "research",
]  # fmt: skip


def prose_note(rng: random.Random, target_bytes: int) -> list[str]:
    """A markdown-like note: headings, paragraphs, bullet links and blank lines."""
    lines: list[str] = []
    size = 0
    section = 0
    while size < target_bytes:
        roll = rng.random()
        if not lines or roll < 0.04:
            section += 1
            line = f"## Section {section}: {' '.join(rng.choices(WORDS, k=3))}\n"
        elif roll < 0.19:
            line = "\n"
        elif roll < 0.5:
            line = f"- [[{rng.choice(WORDS)} {rng.randrange(10_000)}]] {' '.join(rng.choices(WORDS, k=6))}\n"
        else:
            line = " ".join(rng.choices(WORDS, k=rng.randint(6, 14))).capitalize() + ".\n"
        lines.append(line)
        size += len(line.encode())
    return lines


def checklist_note(rng: random.Random, target_bytes: int) -> list[str]:
    """A note of only ~50 distinct lines repeated: every line has hundreds of matches."""
    pool = [f"- [ ] recurring task {i} for the weekly review\n" for i in range(40)] + ["\n"] * 10
    lines: list[str] = []
    size = 0
    while size < target_bytes:
        line = rng.choice(pool)
        lines.append(line)
        size += len(line)
    return lines


def edit(seed: int, lines: list[str], count: int, tag: str) -> list[str]:
    rng = random.Random(seed)
    out = list(lines)
    for n in range(count):
        k = rng.randrange(len(out))
        roll = rng.random()
        if roll < 0.4:
            out[k] = f"{tag} edit {n}: {' '.join(rng.choices(WORDS, k=8))}\n"
        elif roll < 0.7:
            out.insert(k, f"{tag} insert {n}: {' '.join(rng.choices(WORDS, k=8))}\n")
        else:
            del out[k]
    return out


def median_ms(fn: Callable[[], object], runs: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def describe(result: TextMerge) -> str:
    s = result.stats
    return (
        f"conflicts={len(result.conflicts):<3d} both-added={len(result.both_added):<3d} "
        f"unchanged={s.unchanged} auto={s.auto_merged}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="merge engine benchmark")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()

    rng = random.Random(20240601)
    prose = prose_note(rng, 1_000_000)
    checklist = checklist_note(rng, 1_000_000)
    print(f"median of {args.runs} runs")
    scenarios = [
        ("prose 1 MB, 5 edits per side", prose, 5),
        ("prose 1 MB, 500 scattered edits per side", prose, 500),
        ("checklist 1 MB, 5 edits per side", checklist, 5),
        ("checklist 1 MB, 500 scattered edits per side", checklist, 500),
    ]
    for label, lines, edits in scenarios:
        base = "".join(lines)
        user = "".join(edit(1, lines, edits, "user"))
        shard = "".join(edit(2, lines, edits, "shard"))
        ms = median_ms(lambda b=base, u=user, s=shard: merge3(b, u, s, shard_label="shard 1.2.0"), args.runs)
        info = describe(merge3(base, user, shard))
        print(f"{label:46s} {len(lines):6d} lines {ms:8.1f} ms  {info}")

    base = "".join(prose)
    user_crlf = "".join(edit(1, prose, 5, "user")).replace("\n", "\r\n").encode()
    shard_b = "".join(edit(2, prose, 5, "shard")).encode()
    base_b = base.encode()
    ms = median_ms(lambda: merge_document(base_b, user_crlf, shard_b, shard_label="shard 1.2.0"), args.runs)
    print(f"{'merge_document, prose 1 MB, CRLF user, 5 edits':46s} {len(prose):6d} lines {ms:8.1f} ms")


if __name__ == "__main__":
    main()
