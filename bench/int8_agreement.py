"""How the int8 section vectors rank against the float32 ones they are quantized from.

Run: python bench/int8_agreement.py VAULT [--queries 300] [--seed 4]

Indexes VAULT's sections lexically (a temporary cache, no vectors), embeds every section with
the bundled model in float32 (as a refresh does before storing), quantizes them as a refresh
stores them (``arrays.int8_rows``) and ranks the notes for each query both ways: the query is a
random section heading or one of a few questions, quantized as a search does
(``arrays.int8_vector``). Prints how often the nearest note is the same, how much the five and
ten nearest notes overlap, whether float32's five are within int8's six (near ties trading the
fifth place), and the largest difference in a cosine. docs/SEARCH.md, "Vectors in the index".
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

QUESTIONS = [
    "how do we roll back a bad deploy",
    "meeting with the team about the budget",
    "what did we decide about caching",
    "notes on the launch",
    "who owns the migration",
]


def _sections(vault: Path) -> list[tuple[int, str, str]]:
    """(file id, heading, the text a refresh embeds) of every section."""
    from shardpy import index
    from shardpy.index.vectors import stored_text

    index.refresh(vault)
    with sqlite3.connect(index.index_path(vault)) as conn:
        rows = conn.execute(
            "SELECT c.file_id, f.title, c.heading, fts.body FROM chunks AS c "
            "JOIN files AS f ON f.id = c.file_id JOIN fts ON fts.rowid = c.id"
        ).fetchall()
    return [(int(fid), str(h).replace("\x1f", " "), stored_text(t, h, b)) for fid, t, h, b in rows]


def _nearest(scores: Any, files: Any, k: int = 10) -> list[int]:
    import numpy as np

    out: list[int] = []
    for i in np.argsort(-scores, kind="stable"):
        if int(files[i]) not in out:
            out.append(int(files[i]))
            if len(out) == k:
                break
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("vault", type=Path)
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--seed", type=int, default=4)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SHARDPY_CACHE_DIR"] = tmp
        os.environ["SHARDPY_EMBED_MODEL"] = "off"
        sections = _sections(args.vault.resolve())
        del os.environ["SHARDPY_EMBED_MODEL"]
        import numpy as np

        from shardpy.index import embed
        from shardpy.index.arrays import int8_rows, int8_vector

        floats = embed.load().encode([t for _, _, t in sections]).astype(np.float64)
        files = np.array([f for f, _, _ in sections])
        ints = np.frombuffer(int8_rows(floats), dtype=np.int8).reshape(floats.shape).astype(np.float64)
        norms = np.linalg.norm(ints, axis=1)
        norms[norms == 0] = 1.0
        rng = random.Random(args.seed)
        heads = [h for _, h, _ in sections if h]
        queries = rng.sample(heads, min(args.queries, len(heads))) + QUESTIONS
        model = embed.query_model()
        same = five = ten = within = 0.0
        worst = 0.0
        for q in queries:
            v = np.asarray(model.vector(q), dtype=np.float64)
            exact = floats @ v
            q8 = np.asarray(int8_vector(list(v)) or [0] * len(v), dtype=np.float64)
            quantized = (ints @ q8) / (norms * (np.linalg.norm(q8) or 1.0))
            worst = max(worst, float(np.abs(exact - quantized).max()))
            a, b = _nearest(exact, files), _nearest(quantized, files)
            same += a[0] == b[0]
            five += len(set(a[:5]) & set(b[:5])) / 5
            ten += len(set(a) & set(b)) / 10
            within += len(set(a[:5]) & set(b[:6])) / 5
    n = len(queries)
    print(
        f"{args.vault}: {len(sections)} sections, {n} queries: nearest note the same {same / n:.3f}, "
        f"five nearest overlap {five / n:.3f}, ten nearest {ten / n:.3f}, float32's five within "
        f"int8's six {within / n:.3f}; largest cosine difference {worst:.4f}"
    )


if __name__ == "__main__":
    main()
