"""Does git's tree merge give `git merge-file`'s bytes? Random notes, both merges, counted.

Run: python bench/merge_tree_vs_merge_file.py [--seed 2] [--notes 3000]
        [--corpus alphabet|imported|handwritten]

``shardpy sync`` could hand every note both sides changed to one ``git merge-tree
--write-tree`` (git's C merge, ~20 ms for 500 notes, against ~0.1 s for the driver's
rules in Python) wherever the driver's result is git's text merge. It does not: git
2.39's merge-ort diffs with the histogram algorithm (hard-coded; 2.39's ``merge-tree`` takes
no ``-X``), the driver with ``git merge-file``'s Myers, so on some notes the
clean results differ (or one side is clean and the other a conflict), and machines
merging by hand (the driver) and by ``shardpy sync`` would stop converging
(docs/GIT.md, "Limitations"). This prints how many clean merges of each differ.

``--corpus`` picks the notes both sides edit (up to five random line insertions, deletions
and replacements a side):

* ``alphabet`` (the default): notes made of a small alphabet of lines (so lines repeat, as
  blank lines and list markers do), a frontmatter block the same on all sides; new lines
  from the same alphabet;
* ``imported`` / ``handwritten``: bench/gitsync_bench.py's corpora (the notes ``shardpy
  import --from basic-memory`` writes; Obsidian-style notes), each note edited with lines
  taken from itself (a line copied or moved, a blank line added) or new ones.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ALPHABET = ["a", "b", "c", "d", "", "}", "x y", "---", "{", "end", "- item"]


class Repo:
    """A scratch repository: commits of one note, both merges of two of them."""

    def __init__(self) -> None:
        self.work = tempfile.mkdtemp(prefix="merge-tree-vs-file-")
        self.env = {
            **os.environ,
            **dict.fromkeys(("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"), "bench"),
            **dict.fromkeys(("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"), "bench@example.invalid"),
        }
        self.git("init", "-q")

    def git(self, *argv: str, data: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            ["git", *argv], cwd=self.work, env=self.env, input=data, capture_output=True, check=False
        )

    def commit(self, data: bytes, parent: str | None = None) -> str:
        blob = self.git("hash-object", "-w", "--stdin", data=data).stdout.decode().strip()
        tree = self.git("mktree", data=f"100644 blob {blob}\tn.md\n".encode()).stdout.decode().strip()
        parents = ["-p", parent] if parent else []
        return self.git("commit-tree", tree, "-m", "n", *parents).stdout.decode().strip()

    def both(self, b: bytes, o: bytes, t: bytes) -> tuple[bytes | None, bytes | None]:
        """(merge-tree's clean result, merge-file's clean result); None where it conflicts."""
        cb = self.commit(b)
        ours, theirs = self.commit(o, cb), self.commit(t, cb)
        done = self.git("merge-tree", "--write-tree", "--name-only", "-z", ours, theirs)
        for name, data in zip(("b", "o", "t"), (b, o, t), strict=True):
            with open(os.path.join(self.work, name), "wb") as f:
                f.write(data)
        by_file = self.git("merge-file", "-p", "o", "b", "t")
        tree = done.stdout.split(b"\0")[0].decode()
        by_tree = self.git("cat-file", "-p", f"{tree}:n.md").stdout if done.returncode == 0 else None
        return by_tree, by_file.stdout if by_file.returncode == 0 else None


def edit(rng: random.Random, lines: list[str], pool: list[str]) -> list[str]:
    """Up to five random line insertions, deletions and replacements, new lines from ``pool``."""
    out = list(lines)
    for _ in range(rng.randint(0, 5)):
        new = rng.choice(pool)
        if not out or rng.random() < 0.4:
            out.insert(rng.randint(0, len(out)), new)
        elif rng.random() < 0.5:
            del out[rng.randint(0, len(out) - 1)]
        else:
            out[rng.randint(0, len(out) - 1)] = new
    return out


def note(lines: list[str]) -> bytes:
    return ("---\ntitle: T\n---\n" + "".join(f"{x}\n" for x in lines)).encode()


def alphabet_triples(rng: random.Random, n: int) -> list[tuple[bytes, bytes, bytes]]:
    pool = [*ALPHABET, "new 1", "new 2"]
    out = []
    for _ in range(n):
        base = [rng.choice(ALPHABET) for _ in range(rng.randint(0, 14))]
        out.append((note(base), note(edit(rng, base, pool)), note(edit(rng, base, pool))))
    return out


def corpus_triples(rng: random.Random, n: int, kind: str) -> list[tuple[bytes, bytes, bytes]]:
    """Notes of one of bench/gitsync_bench.py's corpora, each edited on both sides."""
    from bench.childenv import child_env
    from bench.gitsync_bench import CORPORA

    env = child_env()
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)  # the importer run by the corpus
    with tempfile.TemporaryDirectory(prefix="merge-tree-corpus-") as scratch:
        notes = CORPORA[kind](n, Path(scratch), env)
    out = []
    for _, lines, _ in notes:
        pool = [*lines, "\n", "A new line.\n", "- [ ] a new task\n"]
        out.append(
            tuple("".join(x).encode() for x in (lines, edit(rng, lines, pool), edit(rng, lines, pool)))
        )
    return out  # type: ignore[return-value]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--notes", type=int, default=3000)
    ap.add_argument("--corpus", default="alphabet", choices=["alphabet", "imported", "handwritten"])
    args = ap.parse_args()
    rng = random.Random(args.seed)
    if args.corpus == "alphabet":
        triples = alphabet_triples(rng, args.notes)
    else:
        triples = corpus_triples(rng, args.notes, args.corpus)
    repo = Repo()
    same = differ = tried = 0
    example = None
    try:
        for b, o, t in triples:
            if b in (o, t) or o == t:
                continue
            tried += 1
            by_tree, by_file = repo.both(b, o, t)
            if by_tree is None and by_file is None:
                continue  # both conflict
            if by_tree == by_file:
                same += 1
            else:
                differ += 1
                example = example or ((b, o, t), by_tree, by_file)
    finally:
        shutil.rmtree(repo.work, ignore_errors=True)
    print(f"{args.corpus}: {tried} notes both sides changed: {same} merged cleanly alike, {differ} differ")
    print("(one clean and the other a conflict, or both clean with other bytes); the rest conflict in both")
    if example:
        (b, o, t), by_tree, by_file = example
        print(f"first that differs:\n base {b!r}\n ours {o!r}\n theirs {t!r}")
        print(f" merge-tree {by_tree!r}\n merge-file {by_file!r}")


if __name__ == "__main__":
    main()
