"""Does git's tree merge give `git merge-file`'s bytes? Random notes, both merges, counted.

Run: python bench/merge_tree_vs_merge_file.py [--seed 2] [--notes 3000]

``shardpy sync`` could hand every note both sides changed to one ``git merge-tree
--write-tree`` (git's C merge, ~20 ms for 500 notes, against ~0.1 s for the driver's
rules in Python) wherever the driver's result is git's text merge. It does not: git
2.39's merge-ort diffs with the histogram algorithm (hard-coded; 2.39's ``merge-tree`` takes
no ``-X``), the driver with ``git merge-file``'s Myers, so on some notes the
clean results differ (or one side is clean and the other a conflict), and machines
merging by hand (the driver) and by ``shardpy sync`` would stop converging
(docs/GIT.md, "Limitations"). This prints how many clean merges of each differ, on
notes made of a small alphabet of lines (so lines repeat, as blank lines and list
markers do in real notes), a frontmatter block the same on all sides.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import tempfile

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


def edit(rng: random.Random, lines: list[str]) -> list[str]:
    out = list(lines)
    for _ in range(rng.randint(0, 5)):
        new = rng.choice([*ALPHABET, "new 1", "new 2"])
        if not out or rng.random() < 0.4:
            out.insert(rng.randint(0, len(out)), new)
        elif rng.random() < 0.5:
            del out[rng.randint(0, len(out) - 1)]
        else:
            out[rng.randint(0, len(out) - 1)] = new
    return out


def note(lines: list[str]) -> bytes:
    return ("---\ntitle: T\n---\n" + "".join(f"{x}\n" for x in lines)).encode()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=2)
    ap.add_argument("--notes", type=int, default=3000)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    repo = Repo()
    same = differ = tried = 0
    example = None
    for _ in range(args.notes):
        base = [rng.choice(ALPHABET) for _ in range(rng.randint(0, 14))]
        b, o, t = note(base), note(edit(rng, base)), note(edit(rng, base))
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
    print(f"{tried} notes both sides changed: {same} merged cleanly alike, {differ} differ (one clean and")
    print("the other a conflict, or both clean with other bytes); the rest conflict in both")
    if example:
        (b, o, t), by_tree, by_file = example
        print(f"first that differs:\n base {b!r}\n ours {o!r}\n theirs {t!r}")
        print(f" merge-tree {by_tree!r}\n merge-file {by_file!r}")


if __name__ == "__main__":
    main()
